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
        serde_json::Value::String(s) if s.contains(home) => *s = s.replace(home, "~"),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| replace_strings(x, home)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| replace_strings(x, home)),
        _ => {}
    }
}
