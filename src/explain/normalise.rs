//! The text form in which the explain catalog's patterns and the lines they are matched against
//! are compared. Standard library only: `build.rs` includes this file too, to compute the
//! prefilter's literals of the built-in catalog (`src/explain/cover.rs`) from the same patterns.

/// Lowercases and collapses whitespace (and typographic quotes) so that "CUDA  out of\tmemory"
/// and "cuda out of memory" are the same text.
pub fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // ANSI escape sequences (terminal colours, `\x1b[31m`…`\x1b[0m`) are not text: a CSI
        // sequence runs from ESC [ to its final byte (0x40-0x7E), an OSC one from ESC ] to BEL
        // or ESC \ (ECMA-48, https://ecma-international.org/publications-and-standards/standards/ecma-48/).
        if c == '\u{1b}' {
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    for d in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(d) = chars.next() {
                        if d == '\u{7}' || (d == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
            continue;
        }
        // A quote escaped by JSON or a Go %q string (Docker's and Kubernetes' errors quoted in
        // their JSON logs: `exec: \"nvidia-smi\": executable file not found`) is the quote.
        if c == '\\' && chars.peek() == Some(&'"') {
            continue;
        }
        let c = match c {
            '\u{2018}' | '\u{2019}' | '`' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            c => c,
        };
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    out
}
