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
pub fn yaml_error(name: &str, e: &dyn std::fmt::Display) -> (String, String) {
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
    (path, crate::sanitize::clean_line(&message, 600))
}
