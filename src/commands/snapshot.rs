//! `gpudoctor snapshot`.

use super::config::SnapshotConfig;
use super::Output;
use crate::cli::SnapshotArgs;
use crate::probe::{self};
use crate::report::ExitStatus;

pub(crate) fn snapshot(a: SnapshotArgs) -> Output {
    // The command line, resolved once: this starts the run's one deadline.
    let a = match SnapshotConfig::resolve(a) {
        Ok(c) => c,
        Err(e) => return Output::tool_error(e),
    };
    // Where the snapshot goes is settled before the probing: a refused target costs nothing.
    let mut output = a.output.clone();
    if let Some(out) = &output {
        match crate::safewrite::target(out) {
            Ok(crate::safewrite::Target::Stdout) => output = None,
            Ok(crate::safewrite::Target::File { exists: true, .. }) if !a.force => {
                return Output::tool_error(format!(
                    "{} already exists; choose another file, or add --force to replace it",
                    out.display()
                ))
            }
            Ok(_) => {}
            Err(e) => return Output::tool_error(format!("cannot write {}: {e}", out.display())),
        }
    }
    let mut snap = probe::probe_all(&a.probe.options);
    if a.redact {
        // The profile folder on Windows (HOME there is Git Bash's or MSYS's, if set at all).
        let home = std::env::var(if cfg!(windows) { "USERPROFILE" } else { "HOME" });
        crate::redact::redact(&mut snap, home.ok().as_deref());
    }
    let json = match serde_json::to_string_pretty(&snap) {
        Ok(j) => j + "\n",
        Err(e) => return Output::tool_error(format!("could not write the snapshot: {e}")),
    };
    match &output {
        Some(path) => match crate::safewrite::write(path, json.as_bytes(), existing(a.force)) {
            Ok(w) => Output {
                stdout: String::new(),
                stderr: match w {
                    crate::safewrite::Written::Stream => String::new(),
                    crate::safewrite::Written::Replaced => {
                        format!(
                            "gpudoctor: snapshot written to {} (replaced)\n",
                            path.display()
                        )
                    }
                    crate::safewrite::Written::Created => {
                        format!("gpudoctor: snapshot written to {}\n", path.display())
                    }
                },
                status: ExitStatus::Healthy,
            },
            Err(e) => Output::tool_error(format!("cannot write {}: {e}", path.display())),
        },
        None => Output::ok(json, ExitStatus::Healthy),
    }
}

fn existing(force: bool) -> crate::safewrite::Existing {
    if force {
        crate::safewrite::Existing::Replace
    } else {
        crate::safewrite::Existing::Keep
    }
}
