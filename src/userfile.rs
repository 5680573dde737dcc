//! Files the user names (`--snapshot`, `--policy`, `--matrix`, `matrix validate`): read only
//! when they are regular files of a sane size, so a FIFO, a device such as /dev/zero or a
//! runaway file gives a clear error instead of a hang or gigabytes of memory.

use std::io::Read;
use std::path::Path;

/// Snapshots, policies and matrices are kilobytes; a real snapshot of an 8-GPU node is under
/// 100 KiB.
pub const MAX_BYTES: u64 = 32 << 20;

/// Reads a user's text file. The error says what is wrong and what to do; the caller puts the
/// path in front (`path: problem`).
pub fn read(path: &Path, what: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the {what}: {e}"))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            crate::safewrite::special_kind(&meta)
        };
        return Err(format!(
            "the {what} is {kind}, not a regular file: save it to a file first"
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "the {what} is {} MiB; gpudoctor reads at most {} MiB: is it the right file?",
            meta.len() >> 20,
            MAX_BYTES >> 20
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read the {what}: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the {what}: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "the {what} grew past {} MiB while being read",
            MAX_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the {what} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Where a YAML file went wrong, from serde-saphyr's error (which starts "line L column C: …" and
/// adds a snippet; only the first line is kept): (`name:L:C` or `name`, the message, cleaned).
/// `text` is the file, to name the key and the value an error is about: serde-saphyr says
/// "invalid u32" with only a position, and a limit it enforces as Rust debug text
/// (`budget breached: ScalarBytes { .. }`); both become sentences a person can act on.
pub fn yaml_error(name: &str, text: &str, e: &serde_saphyr::Error) -> (String, String) {
    use serde_saphyr::Error as E;
    let msg = e.to_string();
    let first = msg
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ");
    let (path, message) = first
        .strip_prefix("line ")
        .and_then(|r| {
            let (l, rest) = r.split_once(" column ")?;
            let (c, rest) = rest.split_once(": ")?;
            Some((format!("{name}:{l}:{c}"), rest.to_string()))
        })
        .unwrap_or_else(|| (name.to_string(), first.to_string()));
    let mut inner = e;
    while let E::AliasError { error, .. } | E::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let at = |loc: &serde_saphyr::Location| {
        let (line, col) = (loc.line(), loc.column());
        (line > 0).then(|| key_and_value(text, line, col))
    };
    let message = match inner {
        E::Budget { breach, .. } => budget_message(breach),
        E::InvalidScalar { ty, location } => {
            let expected = expected_scalar(ty);
            match at(location) {
                Some((Some(key), Some(value))) => {
                    format!("{key}: {value} is not {expected}")
                }
                Some((None, Some(value))) => format!("{value} is not {expected}"),
                Some((Some(key), None)) => format!("{key}: expected {expected}"),
                _ => format!("{message}: expected {expected}"),
            }
        }
        E::SerdeInvalidType { location, .. } | E::SerdeInvalidValue { location, .. } => {
            match at(location) {
                Some((Some(key), _)) => format!("{key}: {message}"),
                _ => message,
            }
        }
        _ => message,
    };
    (path, crate::sanitize::clean_line(&message, 600))
}

/// What a scalar of a Rust type must look like, for a person.
fn expected_scalar(ty: &str) -> String {
    match ty {
        "u8" => "a whole number from 0 to 255".to_string(),
        "u16" => "a whole number from 0 to 65535".to_string(),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "u64" | "usize" | "u128" => "a whole number, 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" | "i128" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "bool" => "true or false".to_string(),
        "char" => "a single character".to_string(),
        other => format!("a value of type {other}"),
    }
}

/// The key a value at (line, column) belongs to, and the value as written there: the nearest
/// `key:` before it on its line (`{a: 1, b: x}`, `gpus: [0, x]`), else the nearest line above,
/// less indented, that ends with `key:` (a block list item).
fn key_and_value(text: &str, line: u64, col: u64) -> (Option<String>, Option<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let Some(l) = usize::try_from(line)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| lines.get(i).map(|l| (i, *l)))
    else {
        return (None, None);
    };
    let (index, this) = l;
    let split = this
        .char_indices()
        .nth(usize::try_from(col.saturating_sub(1)).unwrap_or(usize::MAX))
        .map(|(b, _)| b)
        .unwrap_or(this.len());
    let (before, rest) = this.split_at(split);
    let value = scalar_text(rest);
    let ident = |s: &str| -> Option<String> {
        let s = s.trim_end();
        let start = s
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .last()
            .map(|(i, _)| i)?;
        s.get(start..).map(str::to_string)
    };
    let key = match before.rfind(':') {
        Some(i) => before.get(..i).and_then(ident),
        None => {
            let indent = |s: &str| s.len() - s.trim_start().len();
            let own = indent(this);
            lines
                .get(..index)
                .unwrap_or(&[])
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty() && !l.trim().starts_with('#') && indent(l) < own)
                .and_then(|l| l.trim_end().strip_suffix(':'))
                .and_then(ident)
        }
    };
    (key, value)
}

/// The scalar at the start of `rest`, as written (quoted, or up to `,`, `}`, `]` or a comment).
fn scalar_text(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let v = match rest.chars().next()? {
        q @ ('"' | '\'') => {
            let end = rest.get(1..)?.find(q).map(|i| i + 2).unwrap_or(rest.len());
            rest.get(..end)?.to_string()
        }
        _ => {
            let end = rest
                .find([',', '}', ']'])
                .unwrap_or(rest.len())
                .min(rest.find(" #").unwrap_or(rest.len()));
            format!("{:?}", rest.get(..end)?.trim())
        }
    };
    (!v.is_empty()).then(|| crate::sanitize::clean_line(&v, 80))
}

/// A limit serde-saphyr enforces on a YAML document, said in words (its error shows the limit
/// as Rust debug text). gpudoctor reads at most [`MAX_BYTES`] of file; aliases (`*name`) repeat
/// their anchor's text, so a small file can still be too large once read.
fn budget_message(b: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let what = match b {
        B::ScalarBytes { .. } => format!(
            "its values add up to more than {} MiB of text once aliases (*name) repeat their anchors",
            serde_saphyr::Budget::default().max_total_scalar_bytes >> 20
        ),
        B::Depth { depth } => format!(
            "it nests {depth} levels deep, more than {}",
            serde_saphyr::Budget::default().max_depth
        ),
        B::Aliases { aliases } => format!("it uses {aliases} aliases (*name)"),
        B::Anchors { anchors } => format!("it defines {anchors} anchors (&name)"),
        B::AliasAnchorRatio { aliases, anchors } => format!(
            "it uses {aliases} aliases (*name) for {anchors} anchors (&name), which is how YAML bombs grow"
        ),
        B::Nodes { nodes } => format!("it holds {nodes} values"),
        B::Events { .. } => "it holds too many values".to_string(),
        B::Documents { documents } => format!("it holds {documents} YAML documents (---)"),
        B::InputBytes { input_bytes } => format!("it is {} MiB", input_bytes >> 20),
        _ => "it is too large or too complex".to_string(),
    };
    format!(
        "the YAML is larger than gpudoctor reads: {what}. A configuration file is a few kilobytes: is it the right file? Remove the repeated aliases or the generated content."
    )
}
