//! Text from outside (files under /proc, library names, process names, nvidia-smi, logs) is
//! cleaned before it is stored or printed: no control characters, no bidi overrides, bounded
//! length, so nothing a file contains can move the cursor or reorder what a person reads.

/// Removes control characters (keeping none), Unicode bidi controls and other format
/// characters that change how text displays; caps the result at `max` characters.
pub fn clean_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    let mut n = 0;
    for c in s.chars() {
        if n >= max {
            out.push('…');
            break;
        }
        if c == '\t' {
            out.push(' ');
        } else if c.is_control() || is_bidi_or_invisible(c) {
            continue;
        } else {
            out.push(c);
        }
        n += 1;
    }
    out
}

/// Like [`clean_line`] with a generous default cap, for single values.
pub fn clean(s: &str) -> String {
    clean_line(s, 4096)
}

fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' // zero-width space … right-to-left mark
        | '\u{202A}'..='\u{202E}' // embeddings and overrides
        | '\u{2066}'..='\u{2069}' // isolates
        | '\u{061C}' // Arabic letter mark
        | '\u{FEFF}' // byte-order mark
    )
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
