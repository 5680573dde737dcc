//! `gpudoctor snapshot`.

use super::*;
use crate::app::Output;
use crate::cli::SnapshotArgs;
use crate::probe::{self};
use crate::report::ExitStatus;

pub(crate) fn snapshot(a: SnapshotArgs) -> Output {
    let opts = match probe_options(&a.probe) {
        Ok(o) => o,
        Err(e) => return Output::tool_error(e),
    };
    if let Some(out) = &a.output {
        if out.exists() && !a.force {
            return Output::tool_error(format!(
                "{} already exists; choose another file or add --force to overwrite it",
                out.display()
            ));
        }
    }
    let mut snap = probe::probe_all(&opts);
    if a.redact {
        // The profile folder on Windows (HOME there is Git Bash's or MSYS's, if set at all).
        let home = std::env::var(if cfg!(windows) { "USERPROFILE" } else { "HOME" });
        crate::redact::redact(&mut snap, home.ok().as_deref());
    }
    let json = match serde_json::to_string_pretty(&snap) {
        Ok(j) => j + "\n",
        Err(e) => return Output::tool_error(format!("could not write the snapshot: {e}")),
    };
    match &a.output {
        Some(path) => match write_new(path, &json, a.force) {
            Ok(()) => Output {
                stdout: String::new(),
                stderr: format!("gpudoctor: snapshot written to {}\n", path.display()),
                status: ExitStatus::Healthy,
            },
            Err(e) => Output::tool_error(format!("cannot write {}: {e}", path.display())),
        },
        None => Output::ok(json, ExitStatus::Healthy),
    }
}
