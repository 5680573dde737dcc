//! `snapshot --redact`: removes what identifies a machine or a person before a snapshot is
//! shared: GPU UUIDs become `GPU-REDACTED-<index>`, and the home directory in any path becomes
//! `~`. Bus ids, versions and models stay: they are what a diagnosis needs.

use crate::snapshot::{Probed, Snapshot};

pub fn redact(snap: &mut Snapshot, home: Option<&str>) {
    if let Some(gpus) = snap.gpus.get_mut() {
        for g in gpus.iter_mut() {
            if g.uuid.is_found() {
                g.uuid = Probed::found(format!("GPU-REDACTED-{}", g.index));
            }
        }
    }
    snap.redacted = true;
    let Some(home) = home.filter(|h| h.len() > 1) else {
        return;
    };
    // Rewrite every string of the snapshot through its JSON form.
    let Ok(mut v) = serde_json::to_value(&*snap) else {
        return;
    };
    replace_strings(&mut v, home);
    if let Ok(s) = serde_json::from_value(v) {
        *snap = s;
    }
}

fn replace_strings(v: &mut serde_json::Value, home: &str) {
    match v {
        serde_json::Value::String(s) if s.contains(home) => *s = replace_home(s, home),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| replace_strings(x, home)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| replace_strings(x, home)),
        _ => {}
    }
}

/// Replaces `home` with `~` where it is a whole path prefix: followed by '/', ':' (a path
/// list), or the end; "/root" in "/rootfs" stays.
fn replace_home(s: &str, home: &str) -> String {
    let home = home.trim_end_matches('/');
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(home) {
        let after = &rest[i + home.len()..];
        let starts_path = rest[..i]
            .bytes()
            .last()
            .is_none_or(|b| matches!(b, b':' | b' ' | b'=' | b'"'));
        let ends_path = after.is_empty() || after.starts_with('/') || after.starts_with(':');
        out.push_str(&rest[..i]);
        out.push_str(if starts_path && ends_path { "~" } else { home });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
