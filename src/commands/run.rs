//! `gpudoctor run [--report FILE] [--format F] [--save DIR] [--quiet] -- COMMAND [ARGS...]`: the
//! arguments checked before anything starts, the run watched ([`crate::runwatch`]), the verdict
//! made and printed, the files saved. gpudoctor exits with the command's status; its own
//! failures after the command started are one line on stderr.

use super::Output;
#[cfg(any(target_os = "linux", windows))]
use super::*;
use crate::cli::RunArgs;
#[cfg(any(target_os = "linux", windows))]
use crate::report::ExitStatus;
#[cfg(any(target_os = "linux", windows))]
use std::path::PathBuf;

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
    use crate::runwatch::render::{self, Verdict};
    use crate::runwatch::verdict;

    // Everything that can be wrong with the arguments is said before the command starts: a
    // three-day job must not end in "cannot save".
    if !(a.interval.is_finite() && (0.05..=3600.0).contains(&a.interval)) {
        return Output::tool_error(format!(
            "--interval {}: expected seconds between 0.05 and 3600",
            a.interval
        ));
    }
    let (early, jsonl, save_dir) = check_destinations(&a);
    say_now(&early);
    let argv: Vec<String> = a
        .command
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let w = match start_watch(&a, jsonl) {
        Ok(w) => w,
        Err(out) => return out,
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
    let (matrix, matches) = explain_output(&a, &w, ok, &mut notes);
    let mut report = new_report(argv, &w, &matches);
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
    let snapshot = probe_after_run(&a, matrix.as_ref(), result, &mut report);
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
    let saved_dir = save_dir.as_ref().ok().and_then(|d| d.clone());
    if let Some(d) = &saved_dir {
        report.saved = Some(d.display().to_string());
    }
    report.verdict.summary = render::summary(&report);
    let saved_report = save_run(
        &a,
        &save_dir,
        &report,
        &w.tail,
        snapshot.as_ref(),
        &mut problems,
    );
    let text = render_run(a.format, &report, &mut problems);
    let mut stderr = deliver_report(&a, &report, &text, saved_report, &mut problems);
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

/// Runs the command to its end, watched; a command that never ran gives the shell's status (127
/// not found, 126 not runnable).
#[cfg(any(target_os = "linux", windows))]
fn start_watch(
    a: &RunArgs,
    jsonl: Option<std::fs::File>,
) -> Result<crate::runwatch::Watched, Output> {
    use crate::runwatch as rw;
    rw::watch(rw::WatchOptions {
        argv: a.command.clone(),
        tail_bytes: rw::TAIL_BYTES,
        interval: std::time::Duration::from_secs_f64(a.interval),
        jsonl,
        kmsg: a.kmsg.clone(),
    })
    .map_err(|e| {
        // The command never ran: its status is the shell's (127 not found, 126 not runnable).
        Output {
            stdout: String::new(),
            stderr: format!(
                "gpudoctor: {}\n",
                crate::sanitize::clean_line(&e.message, 400)
            ),
            status: ExitStatus::Passthrough(e.status),
        }
    })
}

/// The matrix (when the run failed, or for --save) and what `explain` reads in the output's
/// tail: a run that ended well needs no explaining (and its tail may be megabytes of anything).
#[cfg(any(target_os = "linux", windows))]
fn explain_output(
    a: &RunArgs,
    w: &crate::runwatch::Watched,
    ok: bool,
    notes: &mut Vec<String>,
) -> (Option<crate::matrix::Matrix>, Vec<crate::explain::Match>) {
    use crate::runwatch as rw;
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
    (matrix, matches)
}

/// The machine is probed only when it can tell something: after a failure, or for --save.
/// Its findings go into the report; the snapshot is returned for --save.
#[cfg(any(target_os = "linux", windows))]
fn probe_after_run(
    a: &RunArgs,
    matrix: Option<&crate::matrix::Matrix>,
    result: &str,
    report: &mut crate::runwatch::render::RunReport,
) -> Option<crate::snapshot::Snapshot> {
    match (matrix, result != "ok" || a.save.is_some()) {
        (Some(m), true) => {
            // A wedged driver costs at most this after the command ended.
            let snap = crate::probe::probe_all(&crate::probe::ProbeOptions {
                deadline: crate::probe::deadline::Deadline::after(std::time::Duration::from_secs(
                    5,
                )),
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
    }
}

/// --save: the run's files in the folder; the report.json written, if it was.
#[cfg(any(target_os = "linux", windows))]
fn save_run(
    a: &RunArgs,
    save_dir: &Result<Option<PathBuf>, String>,
    report: &crate::runwatch::render::RunReport,
    tail: &[u8],
    snapshot: Option<&crate::snapshot::Snapshot>,
    problems: &mut Vec<String>,
) -> Option<PathBuf> {
    let saved_dir = save_dir.as_ref().ok().and_then(|d| d.clone());
    let mut saved_report = None;
    if let Some(d) = &saved_dir {
        let (lost, wrote_report) = save(d, report, tail, snapshot);
        problems.extend(lost);
        if wrote_report {
            saved_report = Some(d.join("report.json"));
        }
    } else if let (Some(dir), Err(why)) = (&a.save, save_dir) {
        problems.push(format!(
            "nothing was saved: --save {}: {why}",
            dir.display()
        ));
    }
    saved_report
}

/// The report in the chosen format (a JSON report that cannot be written is a problem).
#[cfg(any(target_os = "linux", windows))]
fn render_run(
    format: crate::cli::RunFormat,
    report: &crate::runwatch::render::RunReport,
    problems: &mut Vec<String>,
) -> String {
    use crate::cli::RunFormat;
    use crate::runwatch::render;
    match format {
        RunFormat::Human => render::human(report),
        RunFormat::Markdown => render::markdown(report),
        RunFormat::Json => match serde_json::to_string_pretty(report) {
            Ok(s) => s + "\n",
            Err(e) => {
                problems.push(format!("could not write the JSON report: {e}"));
                String::new()
            }
        },
    }
}

/// Neither an existing --report file nor an existing --save folder keeps the job from
/// starting: a report file is replaced, a folder that holds a run's files gets a new
/// subfolder. A target that cannot be written is said now (the notes), and the job starts
/// anyway. The notes, the timeline file and the folder to save in.
#[cfg(any(target_os = "linux", windows))]
fn check_destinations(
    a: &RunArgs,
) -> (
    Vec<String>,
    Option<std::fs::File>,
    Result<Option<PathBuf>, String>,
) {
    let mut early: Vec<String> = Vec::new();
    if let Some(path) = &a.report {
        if let Err(why) = report_dest(path) {
            early.push(format!(
                "--report {}: {why}; the command runs anyway, and its report will be lost unless that changes before it ends",
                path.display()
            ));
        }
    }
    let mut jsonl = None;
    let mut save_dir: Result<Option<PathBuf>, String> = Ok(None);
    if let Some(dir) = &a.save {
        save_dir = save_folder(dir).and_then(|(d, note)| {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(d.join("timeline.jsonl"))
                .map_err(|e| format!("cannot write timeline.jsonl in {}: {e}", d.display()))?;
            jsonl = Some(f);
            if let Some(n) = note {
                early.push(n);
            }
            Ok(Some(d))
        });
        if let Err(why) = &save_dir {
            early.push(format!(
                "--save {}: {why}; the command runs anyway, but nothing will be saved",
                dir.display()
            ));
        }
    }
    (early, jsonl, save_dir)
}

/// The report before the verdict: the command, its exit, its output's tail and first matches,
/// the timeline.
#[cfg(any(target_os = "linux", windows))]
fn new_report(
    argv: Vec<String>,
    w: &crate::runwatch::Watched,
    matches: &[crate::explain::Match],
) -> crate::runwatch::render::RunReport {
    use crate::runwatch::render::{self, OutputInfo, RunReport, Tool, Verdict};
    let exit = render::exit_info(w.ended);
    RunReport {
        schema: crate::runwatch::RUN_SCHEMA,
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
    }
}

/// Where the report goes: the --report file, the --save folder's report.json or a new file for
/// JSON, else standard error; the one-line summary on standard error (none with --quiet after a
/// good run). What goes on standard error; a report that could not be written is a problem.
#[cfg(any(target_os = "linux", windows))]
fn deliver_report(
    a: &RunArgs,
    report: &crate::runwatch::render::RunReport,
    text: &str,
    saved_report: Option<PathBuf>,
    problems: &mut Vec<String>,
) -> String {
    use crate::cli::RunFormat;
    let mut stderr = String::new();
    let quiet_ok = a.quiet && report.verdict.result == "ok";
    let summary = |to: &str| {
        format!(
            "{} (report: {})\n",
            report.verdict.summary,
            crate::sanitize::clean_line(to, 300)
        )
    };
    let lost = |to: &Path, why: &str| {
        format!(
            "the report was lost: cannot write it to {}: {why}",
            to.display()
        )
    };
    // Resolved again now: a three-day job's target may have changed since the start.
    let dest = a.report.as_deref().map(|p| (p, report_dest(p)));
    match (dest, a.format) {
        (Some((path, Ok(t))), _) => match crate::safewrite::write(
            path,
            text.as_bytes(),
            crate::safewrite::Existing::Replace,
        ) {
            Ok(_) if quiet_ok => {}
            Ok(_) => stderr.push_str(&summary(&describe_dest(&t, path))),
            Err(e) => {
                if !quiet_ok {
                    stderr.push_str(&format!("{}\n", report.verdict.summary));
                }
                problems.push(lost(path, &e.to_string()));
            }
        },
        (Some((path, Err(why))), _) => {
            if !quiet_ok {
                stderr.push_str(&format!("{}\n", report.verdict.summary));
            }
            problems.push(lost(path, &why));
        }
        // JSON is for programs: never mixed into the command's own standard error. It goes to
        // the --save folder's report.json, else to a new file named on standard error.
        (None, RunFormat::Json) if quiet_ok => {}
        (None, RunFormat::Json) => match saved_report {
            Some(p) => stderr.push_str(&summary(&p.display().to_string())),
            None => match write_fallback(text.as_bytes()) {
                Ok(p) => stderr.push_str(&summary(&p.display().to_string())),
                Err((p, e)) => {
                    stderr.push_str(&format!("{}\n", report.verdict.summary));
                    problems.push(lost(&p, &e.to_string()));
                }
            },
        },
        (None, _) if quiet_ok => {}
        (None, _) => stderr.push_str(text),
    }
    stderr
}

/// Says lines on standard error at once, before the command starts (each cleaned).
#[cfg(any(target_os = "linux", windows))]
fn say_now(lines: &[String]) {
    use std::io::Write;
    let text: String = lines
        .iter()
        .map(|l| format!("gpudoctor: {}\n", crate::sanitize::clean_line(l, 400)))
        .collect();
    if !text.is_empty() {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Where `--report` goes ([`crate::safewrite`]: a stream, a new or replaced regular file), or
/// why it cannot go there.
#[cfg(any(target_os = "linux", windows))]
fn report_dest(p: &Path) -> Result<crate::safewrite::Target, String> {
    crate::safewrite::ready(p).map_err(|e| e.to_string())
}

/// Where the report went, for the summary line.
#[cfg(any(target_os = "linux", windows))]
fn describe_dest(t: &crate::safewrite::Target, p: &Path) -> String {
    use crate::safewrite::Target;
    match t {
        Target::Stdout => "standard output".into(),
        Target::File { exists: true, .. } => {
            format!("{}, replacing the file that was there", p.display())
        }
        _ => p.display().to_string(),
    }
}

/// The JSON report's own file when no --report or --save names one: a new
/// gpudoctor-run-PID.json in the current folder, else in the temporary folder. Returns where it
/// went, or the last place tried and why it failed.
#[cfg(any(target_os = "linux", windows))]
fn write_fallback(bytes: &[u8]) -> Result<PathBuf, (PathBuf, std::io::Error)> {
    let pid = std::process::id();
    let mut last = (
        PathBuf::from(format!("gpudoctor-run-{pid}.json")),
        std::io::Error::other("no folder to write it in"),
    );
    let dirs = [std::env::current_dir().ok(), Some(std::env::temp_dir())];
    for dir in dirs.into_iter().flatten() {
        for n in 0..100 {
            let name = match n {
                0 => format!("gpudoctor-run-{pid}.json"),
                n => format!("gpudoctor-run-{pid}.{n}.json"),
            };
            let p = dir.join(name);
            match write_new(&p, bytes, false) {
                Ok(()) => return Ok(p),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = (p, e),
                Err(e) => {
                    last = (p, e);
                    break;
                }
            }
        }
    }
    Err(last)
}

/// The folder `--save DIR` writes in: DIR (created if missing) unless it holds an earlier
/// run's files, then a new DIR/run-N; with a line that says so. Never replaces a file.
#[cfg(any(target_os = "linux", windows))]
fn save_folder(dir: &Path) -> Result<(PathBuf, Option<String>), String> {
    if dir.exists() && !dir.is_dir() {
        return Err("it exists and is not a folder".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}"))?;
    if !SAVED
        .iter()
        .any(|f| std::fs::symlink_metadata(dir.join(f)).is_ok())
    {
        return Ok((dir.to_path_buf(), None));
    }
    for n in 2..1000 {
        let sub = dir.join(format!("run-{n}"));
        match std::fs::create_dir(&sub) {
            Ok(()) => {
                let note = format!(
                    "--save {}: it holds an earlier run's files; this run's go to {}",
                    dir.display(),
                    sub.display()
                );
                return Ok((sub, Some(note)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", sub.display())),
        }
    }
    Err("it holds earlier runs' files, and run-2 to run-999 are all taken".into())
}

/// Writes the `--save` files (timeline.jsonl is written as the run goes); returns what failed,
/// and whether report.json was written.
#[cfg(any(target_os = "linux", windows))]
fn save(
    dir: &Path,
    report: &crate::runwatch::render::RunReport,
    tail: &[u8],
    snapshot: Option<&crate::snapshot::Snapshot>,
) -> (Vec<String>, bool) {
    let mut problems = Vec::new();
    let mut put = |name: &str, r: std::io::Result<()>| {
        let ok = r.is_ok();
        if let Err(e) = r {
            problems.push(format!(
                "a saved file was lost: cannot write {}: {e}",
                dir.join(name).display()
            ));
        }
        ok
    };
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other);
    let wrote = put(
        "report.json",
        json.and_then(|j| write_new(&dir.join("report.json"), j + "\n", false)),
    );
    // The tail as the command wrote it: bytes, not text.
    put(
        "output.tail",
        write_new(&dir.join("output.tail"), tail, false),
    );
    if let Some(s) = snapshot {
        let json = serde_json::to_string_pretty(s).map_err(std::io::Error::other);
        put(
            "snapshot.json",
            json.and_then(|j| write_new(&dir.join("snapshot.json"), j + "\n", false)),
        );
    }
    (problems, wrote)
}
