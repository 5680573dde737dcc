//! The run's report: the JSON document (`gpudoctor.run/1`), and the human and Markdown views of
//! it. A run that ended well is one line.

use serde::Serialize;

use super::child::Ended;
use super::sampler::Timeline;
use super::verdict::{gpu_lines, size, Cause};
use crate::explain::Match;
use crate::report::Finding;
use crate::rules::gib;
use crate::sanitize::{clean, clean_line};

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

/// How the command ended.
#[derive(Debug, Clone, Serialize)]
pub struct ExitInfo {
    /// What gpudoctor exits with: the exit code, or 128 + the signal.
    pub status: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal_name: Option<String>,
    pub core_dumped: bool,
    /// The status read as `explain` reads it.
    pub meaning: String,
}

/// The verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// "ok", "warning", "failed" or "interrupted".
    pub result: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<crate::report::Category>,
    pub summary: String,
}

/// The output the command wrote.
#[derive(Debug, Clone, Serialize)]
pub struct OutputInfo {
    pub bytes: u64,
    pub tail_bytes: usize,
    /// `explain`'s readings of the tail, best first.
    pub matches: Vec<Match>,
}

/// The whole report (`gpudoctor.run/1`).
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub schema: &'static str,
    pub tool: Tool,
    pub command: Vec<String>,
    pub started_unix_s: f64,
    pub duration_s: f64,
    pub exit: ExitInfo,
    pub verdict: Verdict,
    pub causes: Vec<Cause>,
    pub output: OutputInfo,
    pub timeline: Timeline,
    /// The `check` findings of the machine (when it was probed: after a failure, or `--save`).
    pub findings: Vec<Finding>,
    /// What gpudoctor could not do or see (never the command's fault).
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<String>,
}

/// The exit status in words.
pub fn exit_info(e: Ended) -> ExitInfo {
    match e {
        Ended::Exited(c) => ExitInfo {
            status: e.shell_status(),
            code: Some(c),
            signal: None,
            signal_name: None,
            core_dumped: false,
            meaning: super::verdict::exit_reading(i64::from(c))
                .map(|m| m.meaning)
                .unwrap_or_else(|| format!("exit status {c}")),
        },
        Ended::Signaled {
            signal,
            core_dumped,
        } => {
            let name = crate::explain::codes::signal_name(signal as u32)
                .map(str::to_string)
                .unwrap_or_else(|| format!("signal {signal}"));
            ExitInfo {
                status: e.shell_status(),
                code: None,
                signal: Some(signal),
                meaning: crate::explain::codes::readings(128 + i64::from(signal))
                    .into_iter()
                    .next()
                    .map(|m| m.meaning)
                    .unwrap_or_else(|| format!("killed by {name}")),
                signal_name: Some(name),
                core_dumped,
            }
        }
    }
}

/// The command as a person would type it (quoted where needed, cleaned).
pub fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn short(argv: &[String]) -> String {
    clean_line(&command_line(argv), 80)
}

fn how_it_ended(r: &RunReport) -> String {
    let e = &r.exit;
    match (&e.signal_name, e.code) {
        (Some(n), _) => format!(
            "was killed by {n} (exit status {}{})",
            e.status,
            if e.core_dumped { ", core dumped" } else { "" }
        ),
        (None, Some(c)) => format!("exited with status {c}"),
        _ => format!("ended with status {}", e.status),
    }
}

/// The one-line summary of a run.
pub fn summary(r: &RunReport) -> String {
    let cmd = short(&r.command);
    let peak = r
        .timeline
        .gpus
        .iter()
        .filter_map(|g| Some((g.gpu, g.peak_used_bytes?, g.total_bytes?)))
        .map(|(g, p, t)| format!("GPU {g} peak {} of {}", gib(p), gib(t)))
        .collect::<Vec<_>>();
    let watched = if peak.is_empty() {
        match r.notes.first() {
            Some(_) if r.timeline.gpus.is_empty() => "; GPUs not watched (no NVML)".to_string(),
            _ => String::new(),
        }
    } else {
        format!("; {}", peak.join(", "))
    };
    match r.verdict.result {
        "ok" => format!(
            "gpudoctor: `{cmd}` ended well (exit 0) after {:.1} s{watched}",
            r.duration_s
        ),
        _ => {
            let lead = r
                .causes
                .first()
                .map(|c| format!(": {} [{}]", c.title, c.category.as_str()))
                .unwrap_or_default();
            format!(
                "gpudoctor: `{cmd}` {} after {:.1} s{lead}",
                how_it_ended(r),
                r.duration_s
            )
        }
    }
}

fn confidence_words(c: &str) -> &'static str {
    match c {
        "high" => "most likely",
        "medium" => "likely",
        _ => "possible",
    }
}

/// Events not already quoted as evidence.
fn other_events(r: &RunReport) -> Vec<String> {
    let quoted: Vec<&String> = r.causes.iter().flat_map(|c| &c.evidence).collect();
    r.timeline
        .events
        .iter()
        .filter_map(|e| {
            let l = e.line.clone().unwrap_or_else(|| format!("{:?}", e.event));
            (!quoted.iter().any(|q| q.contains(&l)))
                .then(|| format!("{:.1} s, {}: {}", e.t_s, e.source.replace('_', " "), l))
        })
        .collect()
}

fn host_line(r: &RunReport) -> Option<String> {
    let t = &r.timeline;
    let mut parts = Vec::new();
    if let Some(p) = t.host_peak_rss_bytes.filter(|p| *p > 0) {
        parts.push(format!("host peak RSS {}", size(p)));
    }
    if let Some(c) = &t.cgroup_end {
        let kills = match (
            t.cgroup_start.as_ref().and_then(|s| s.oom_kills),
            c.oom_kills,
        ) {
            (Some(a), Some(b)) => format!(", {} OOM kill(s) during the run", b.saturating_sub(a)),
            _ => String::new(),
        };
        if let Some(m) = c.memory_max {
            parts.push(format!("cgroup limit {}{kills}", size(m)));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The report for people.
pub fn human(r: &RunReport) -> String {
    let mut s = String::new();
    s.push_str(&summary(r));
    s.push('\n');
    if r.verdict.result == "ok" {
        return s;
    }
    for (n, c) in r.causes.iter().enumerate() {
        if n == 0 {
            s.push_str(&format!(
                "\nLikely cause: {} [{}] ({})\n",
                clean(&c.title),
                c.category.as_str(),
                confidence_words(c.confidence)
            ));
        } else {
            if n == 1 {
                s.push_str("\nAlso possible:\n");
            }
            s.push_str(&format!(
                "{}. {} [{}] ({})\n",
                n + 1,
                clean(&c.title),
                c.category.as_str(),
                confidence_words(c.confidence)
            ));
        }
        for e in &c.evidence {
            s.push_str(&format!("  - {}\n", clean_line(e, 400)));
        }
        if !c.fix.text.is_empty() {
            s.push_str(&format!("  Fix: {}\n", clean(&c.fix.text)));
        }
        for cmd in &c.fix.commands {
            s.push_str(&format!("    $ {}\n", clean(cmd)));
        }
    }
    let ev = other_events(r);
    if !ev.is_empty() {
        s.push_str("\nDuring the run:\n");
        for e in ev.iter().take(10) {
            s.push_str(&format!("  - {}\n", clean_line(e, 300)));
        }
    }
    let mut tl = Vec::new();
    for g in &r.timeline.gpus {
        tl.extend(gpu_lines(g, r.duration_s));
    }
    if let Some(h) = host_line(r) {
        tl.push(h);
    }
    if !tl.is_empty() {
        s.push_str("\nTimeline:\n");
        for l in tl {
            s.push_str(&format!("  - {}\n", clean_line(&l, 300)));
        }
    }
    for n in &r.notes {
        s.push_str(&format!("Not watched: {}\n", clean_line(n, 300)));
    }
    if let Some(d) = &r.saved {
        s.push_str(&format!("Saved for a bug report: {}\n", clean_line(d, 300)));
    }
    s
}

/// The report as Markdown, to paste into an issue.
pub fn markdown(r: &RunReport) -> String {
    let mut s = format!(
        "### gpudoctor run: `{}`\n\n**{}**\n\n",
        short(&r.command).replace('`', "'"),
        summary(r)
            .trim_start_matches("gpudoctor: ")
            .replace('`', "'")
    );
    for (n, c) in r.causes.iter().enumerate() {
        s.push_str(&format!(
            "{}. **{}** (`{}`, {})\n",
            n + 1,
            clean(&c.title),
            c.category.as_str(),
            confidence_words(c.confidence)
        ));
        for e in &c.evidence {
            s.push_str(&format!("   - {}\n", clean_line(e, 400).replace('`', "'")));
        }
        if !c.fix.text.is_empty() {
            s.push_str(&format!("   - Fix: {}\n", clean(&c.fix.text)));
        }
        for cmd in &c.fix.commands {
            s.push_str(&format!("     `{}`\n", clean(cmd).replace('`', "'")));
        }
    }
    let ev = other_events(r);
    if !ev.is_empty() {
        s.push_str("\n**During the run**\n\n");
        for e in ev.iter().take(10) {
            s.push_str(&format!("- {}\n", clean_line(e, 300)));
        }
    }
    let tail = r
        .timeline
        .last
        .iter()
        .flat_map(|p| p.gpus.iter().map(move |g| (p.t_s, g)))
        .map(|(t, g)| {
            format!(
                "| {t:.1} | {} | {} | {} | {} |",
                g.gpu,
                g.used_bytes.map(gib).unwrap_or_else(|| "?".into()),
                g.temperature_c
                    .map(|c| format!("{c} °C"))
                    .unwrap_or_else(|| "?".into()),
                g.processes
                    .as_ref()
                    .map(|v| v
                        .iter()
                        .map(|h| format!(
                            "{}{} {}",
                            h.pid,
                            if h.this_run { "*" } else { "" },
                            h.bytes.map(gib).unwrap_or_else(|| "?".into())
                        ))
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>();
    if !tail.is_empty() {
        s.push_str("\n<details><summary>The last samples (* = this run's process)</summary>\n\n| s | GPU | used | temp | processes |\n|---|---|---|---|---|\n");
        for l in tail {
            s.push_str(&l);
            s.push('\n');
        }
        s.push_str("\n</details>\n");
    }
    if let Some(h) = host_line(r) {
        s.push_str(&format!("\nHost: {h}\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("\n_Not watched: {}_\n", clean_line(n, 300)));
    }
    s
}
