//! `gpudoctor run [--report FILE] [--format F] [--save DIR] [--quiet] -- COMMAND [ARGS...]`: the
//! arguments checked before anything starts, the run watched ([`crate::runwatch`]), the verdict
//! made and printed, the files saved. gpudoctor exits with the command's status; its own
//! failures after the command started are one line on stderr.

#[cfg(any(target_os = "linux", windows))]
use super::*;
use crate::app::Output;
use crate::cli::RunArgs;
#[cfg(any(target_os = "linux", windows))]
use crate::report::ExitStatus;

/// The files `--save DIR` writes.
#[cfg(any(target_os = "linux", windows))]
const SAVED: [&str; 4] = [
    "report.json",
    "output.tail",
    "timeline.jsonl",
    "snapshot.json",
];

#[cfg(not(any(target_os = "linux", windows)))]
pub(crate) fn run(_a: RunArgs) -> Output {
    Output::tool_error("gpudoctor run is only available on Linux for now")
}

#[cfg(any(target_os = "linux", windows))]
pub(crate) fn run(a: RunArgs) -> Output {
    use crate::cli::RunFormat;
    use crate::runwatch::render::{self, ExitInfo, OutputInfo, RunReport, Tool, Verdict};
    use crate::runwatch::{self as rw, verdict};

    // Everything that can be wrong with the arguments is said before the command starts: a
    // three-day job must not end in "cannot save".
    if !(a.interval.is_finite() && (0.05..=3600.0).contains(&a.interval)) {
        return Output::tool_error(format!(
            "--interval {}: expected seconds between 0.05 and 3600",
            a.interval
        ));
    }
    if let Some(r) = &a.report {
        if r.exists() {
            return Output::tool_error(format!(
                "--report {}: the file exists; gpudoctor does not overwrite it (name a new file)",
                r.display()
            ));
        }
    }
    let mut jsonl = None;
    if let Some(dir) = &a.save {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Output::tool_error(format!("--save {}: cannot create it: {e}", dir.display()));
        }
        if let Some(f) = SAVED.iter().find(|f| dir.join(f).exists()) {
            return Output::tool_error(format!(
                "--save {}: {f} is already there; gpudoctor does not overwrite it (name a new directory)",
                dir.display()
            ));
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join("timeline.jsonl"))
        {
            Ok(f) => jsonl = Some(f),
            Err(e) => {
                return Output::tool_error(format!(
                    "--save {}: cannot write timeline.jsonl there: {e}",
                    dir.display()
                ))
            }
        }
    }
    let argv: Vec<String> = a
        .command
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let w = match rw::watch(rw::WatchOptions {
        argv: a.command.clone(),
        tail_bytes: rw::TAIL_BYTES,
        interval: std::time::Duration::from_secs_f64(a.interval),
        jsonl,
        kmsg: a.kmsg.clone(),
    }) {
        Ok(w) => w,
        Err(e) => {
            // The command never ran: its status is the shell's (127 not found, 126 not runnable).
            return Output {
                stdout: String::new(),
                stderr: format!(
                    "gpudoctor: {}\n",
                    crate::sanitize::clean_line(&e.message, 400)
                ),
                status: ExitStatus::Passthrough(e.status),
            };
        }
    };
    let status = ExitStatus::Passthrough(w.ended.shell_status());
    let mut notes = w.timeline.unwatched.clone();
    let mut problems: Vec<String> = Vec::new();
    let ok = verdict::result(&verdict::Inputs {
        ended: w.ended,
        duration_s: w.duration_s,
        matches: &[],
        timeline: &w.timeline,
        maxrss: w.maxrss,
        signals: &w.signals,
        findings: &[],
    }) == "ok";
    // A run that ended well needs no explaining (and its tail may be megabytes of anything).
    let matrix = match load_matrix(None) {
        Ok(m) if !ok || a.save.is_some() => Some(m),
        Ok(_) => None,
        Err(e) => {
            notes.push(format!(
                "the output was not explained: {}",
                e.lines().next().unwrap_or("")
            ));
            None
        }
    };
    let text = if ok {
        String::new()
    } else {
        rw::plain_text(&w.tail)
    };
    let matches = match &matrix {
        // A few words are not a traceback (and a bare number would be read as a code).
        Some(m) if text.split_whitespace().nth(2).is_some() => {
            crate::explain::explain_text(&text, m)
        }
        _ => Vec::new(),
    };
    let exit: ExitInfo = render::exit_info(w.ended);
    let mut report = RunReport {
        schema: rw::RUN_SCHEMA,
        tool: Tool {
            name: "gpudoctor",
            version: env!("CARGO_PKG_VERSION"),
        },
        command: argv,
        started_unix_s: (w.started_unix_s * 1000.0).round() / 1000.0,
        duration_s: (w.duration_s * 1000.0).round() / 1000.0,
        exit,
        verdict: Verdict {
            result: "ok",
            category: None,
            summary: String::new(),
        },
        causes: Vec::new(),
        output: OutputInfo {
            bytes: w.output_bytes,
            tail_bytes: w.tail.len(),
            matches: matches.iter().take(5).cloned().collect(),
        },
        timeline: w.timeline.clone(),
        findings: Vec::new(),
        notes: Vec::new(),
        saved: None,
    };
    let pre = verdict::Inputs {
        ended: w.ended,
        duration_s: w.duration_s,
        matches: &matches,
        timeline: &w.timeline,
        maxrss: w.maxrss,
        signals: &w.signals,
        findings: &[],
    };
    let result = verdict::result(&pre);
    // The machine is probed only when it can tell something: after a failure, or for --save.
    let snapshot = match (&matrix, result != "ok" || a.save.is_some()) {
        (Some(m), true) => {
            // A wedged driver costs at most this after the command ended.
            let snap = crate::probe::probe_all(&crate::probe::ProbeOptions {
                timeout: std::time::Duration::from_secs(5),
                ..crate::probe::ProbeOptions::default()
            });
            let rep = evaluate(
                snap,
                m,
                &crate::rules::RuleOptions::default(),
                &crate::rules::Selection::default(),
            );
            report.findings = rep.findings.clone();
            Some(rep.snapshot)
        }
        _ => None,
    };
    let inputs = verdict::Inputs {
        findings: &report.findings,
        ..pre
    };
    report.causes = verdict::causes(&inputs);
    report.verdict = Verdict {
        result,
        category: report.causes.first().map(|c| c.category),
        summary: String::new(),
    };
    report.notes = notes;
    if let Some(dir) = &a.save {
        report.saved = Some(dir.display().to_string());
    }
    report.verdict.summary = render::summary(&report);
    if let Some(dir) = &a.save {
        problems.extend(save(dir, &report, &w.tail, snapshot.as_ref()));
    }
    let text = match a.format {
        RunFormat::Human => render::human(&report),
        RunFormat::Markdown => render::markdown(&report),
        RunFormat::Json => match serde_json::to_string_pretty(&report) {
            Ok(s) => s + "\n",
            Err(e) => {
                problems.push(format!("could not write the JSON report: {e}"));
                String::new()
            }
        },
    };
    let mut stderr = String::new();
    let quiet_ok = a.quiet && result == "ok";
    match &a.report {
        Some(path) => {
            if let Err(e) = write_new(path, &text, false) {
                problems.push(format!(
                    "could not write the report to {}: {e}",
                    path.display()
                ));
            } else if !quiet_ok {
                stderr.push_str(&format!(
                    "{} (report: {})\n",
                    report.verdict.summary,
                    crate::sanitize::clean_line(&path.display().to_string(), 300)
                ));
            }
        }
        None if quiet_ok => {}
        None => stderr.push_str(&text),
    }
    for p in problems {
        stderr.push_str(&format!(
            "gpudoctor: {}\n",
            crate::sanitize::clean_line(&p, 400)
        ));
    }
    Output {
        stdout: String::new(),
        stderr,
        status,
    }
}

/// Writes the `--save` files (timeline.jsonl is written as the run goes); returns what failed.
#[cfg(any(target_os = "linux", windows))]
fn save(
    dir: &Path,
    report: &crate::runwatch::render::RunReport,
    tail: &[u8],
    snapshot: Option<&crate::snapshot::Snapshot>,
) -> Vec<String> {
    use std::io::Write;
    let mut problems = Vec::new();
    let mut put = |name: &str, r: std::io::Result<()>| {
        if let Err(e) = r {
            problems.push(format!("could not save {}: {e}", dir.join(name).display()));
        }
    };
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other);
    put(
        "report.json",
        json.and_then(|j| write_new(&dir.join("report.json"), &(j + "\n"), false)),
    );
    // The tail as the command wrote it: bytes, not text.
    put(
        "output.tail",
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join("output.tail"))
            .and_then(|mut f| f.write_all(tail)),
    );
    if let Some(s) = snapshot {
        let json = serde_json::to_string_pretty(s).map_err(std::io::Error::other);
        put(
            "snapshot.json",
            json.and_then(|j| write_new(&dir.join("snapshot.json"), &(j + "\n"), false)),
        );
    }
    problems
}
