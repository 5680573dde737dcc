//! `snapshot --redact`: removes what identifies a machine or a person before a snapshot is
//! shared: GPU UUIDs become `GPU-REDACTED-<index>`, and the home directory in any path becomes
//! `~`. Bus ids, versions and models stay: they are what a diagnosis needs.

use crate::report::Report;
use crate::snapshot::{Probed, Snapshot};

/// The home directory `--redact` replaces: the profile folder on Windows (HOME there is Git
/// Bash's or MSYS's, if set at all), HOME elsewhere.
pub fn home_dir() -> Option<String> {
    std::env::var(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).ok()
}

/// A report to share (`check --format markdown`, written for bug reports): its snapshot
/// redacted as `snapshot --redact` does, and the same values (GPU UUIDs, the home directory)
/// replaced wherever the findings repeat them.
pub fn redact_report(report: &mut Report, home: Option<&str>) {
    let uuids: Vec<(String, String)> = report
        .snapshot
        .gpu_list()
        .iter()
        .filter_map(|g| {
            g.uuid
                .get()
                .filter(|u| !u.is_empty())
                .map(|u| (u.clone(), format!("GPU-REDACTED-{}", g.index)))
        })
        .collect();
    redact(&mut report.snapshot, home);
    let home = home.filter(|h| h.len() > 1);
    let Ok(mut v) = serde_json::to_value(&report.findings) else {
        return;
    };
    rewrite_strings(&mut v, &|s: &str| {
        let mut s = s.to_string();
        for (u, r) in &uuids {
            if s.contains(u.as_str()) {
                s = s.replace(u.as_str(), r);
            }
        }
        match home {
            Some(h) if s.contains(h) => replace_home(&s, h),
            _ => s,
        }
    });
    if let Ok(f) = serde_json::from_value(v) {
        report.findings = f;
    }
}

fn rewrite_strings(v: &mut serde_json::Value, f: &dyn Fn(&str) -> String) {
    match v {
        serde_json::Value::String(s) => *s = f(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| rewrite_strings(x, f)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| rewrite_strings(x, f)),
        _ => {}
    }
}

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
/// list), or the end; "/root" in "/rootfs" stays. A Windows profile folder (`C:\Users\alice`,
/// matched without regard to case, as Windows compares paths) becomes `%USERPROFILE%`, followed
/// by '\\', '/' or ';' (Windows' path-list separator).
fn replace_home(s: &str, home: &str) -> String {
    let windows = home.contains('\\');
    let home = home.trim_end_matches(['/', '\\']);
    let (hay, needle, short) = if windows {
        (
            s.to_ascii_lowercase(),
            home.to_ascii_lowercase(),
            "%USERPROFILE%",
        )
    } else {
        (s.to_string(), home.to_string(), "~")
    };
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    while let Some(off) = hay.get(pos..).and_then(|h| h.find(needle.as_str())) {
        let i = pos + off;
        let end = i + needle.len();
        let before = s.get(..i).unwrap_or("");
        let after = s.get(end..).unwrap_or("");
        let starts_path = before
            .bytes()
            .last()
            .is_none_or(|b| matches!(b, b':' | b' ' | b'=' | b'"' | b';'));
        let ends_path = after.is_empty()
            || after.starts_with('/')
            || after.starts_with(':')
            || (windows && (after.starts_with('\\') || after.starts_with(';')));
        out.push_str(s.get(pos..i).unwrap_or(""));
        if starts_path && ends_path {
            out.push_str(short);
        } else {
            out.push_str(s.get(i..end).unwrap_or(""));
        }
        pos = end;
    }
    out.push_str(s.get(pos..).unwrap_or(""));
    out
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
