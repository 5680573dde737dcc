//! From what the run left behind to one verdict: the exit status decoded ([`crate::explain::codes`]),
//! the output's tail read by `explain`'s matcher, the events of the run (Xids, the OOM killer),
//! the memory cgroup, the GPU timeline, and the `check` findings of the same categories. Each
//! becomes a cause with a weight and its evidence lines; causes of one category merge; the
//! heaviest leads.

use serde::Serialize;

use super::child::Ended;
use super::sampler::{GpuSummary, Timeline};
use crate::explain::Match;
use crate::faults::logparse::LogEvent;
use crate::report::{Category, Finding, Fix, Severity};
use crate::rules::gib;

/// One cause, with what points to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    pub category: Category,
    pub title: String,
    /// "high", "medium" or "low".
    pub confidence: &'static str,
    pub evidence: Vec<String>,
    pub fix: Fix,
    /// How strongly the run points here (for ordering; not part of the contract).
    #[serde(skip)]
    pub weight: u32,
}

/// What the verdict is made from.
pub struct Inputs<'a> {
    pub ended: Ended,
    pub duration_s: f64,
    /// `explain`'s readings of the output's tail, best first.
    pub matches: &'a [Match],
    pub timeline: &'a Timeline,
    /// The kernel's count of the command's peak resident memory (ru_maxrss), bytes.
    pub maxrss: Option<u64>,
    /// Signals gpudoctor received during the run.
    pub signals: &'a [i32],
    pub findings: &'a [Finding],
}

/// "ok", "warning" (it ended well but the GPU or the kernel reported problems), "failed" or
/// "interrupted".
pub fn result(i: &Inputs) -> &'static str {
    let interrupted = !i.signals.is_empty()
        || matches!(
            i.ended,
            Ended::Signaled {
                signal: 2, // SIGINT
                ..
            } | Ended::Exited(130)
        );
    match i.ended {
        _ if interrupted => "interrupted",
        Ended::Exited(0) if serious_events(i.timeline) => "warning",
        Ended::Exited(0) => "ok",
        _ => "failed",
    }
}

fn serious_events(t: &Timeline) -> bool {
    t.events.iter().any(|e| match &e.event {
        LogEvent::OomKill { .. } => e.this_run == Some(true),
        LogEvent::PcieAer { .. } => false,
        _ => true,
    })
}

/// The causes, most likely first.
pub fn causes(i: &Inputs) -> Vec<Cause> {
    let mut v: Vec<Cause> = Vec::new();
    events(i, &mut v);
    exit_status(i, &mut v);
    output(i, &mut v);
    gpu_full(i, &mut v);
    // Merge by category, keeping the heaviest title and every piece of evidence once.
    v.sort_by_key(|c| std::cmp::Reverse(c.weight));
    let mut merged: Vec<Cause> = Vec::new();
    for c in v {
        match merged.iter_mut().find(|m| m.category == c.category) {
            Some(m) => {
                for e in c.evidence {
                    if !m.evidence.contains(&e) {
                        m.evidence.push(e);
                    }
                }
                if m.fix.text.is_empty() {
                    m.fix = c.fix;
                }
            }
            None => merged.push(c),
        }
    }
    // A plain exit status adds nothing where anything else says why.
    if merged.iter().any(|c| c.weight > 10) {
        merged.retain(|c| c.weight > 10);
    }
    for c in merged.iter_mut() {
        machine_evidence(i, c);
        check_evidence(i, c);
    }
    for (n, c) in merged.iter_mut().enumerate() {
        c.confidence = match (n, c.weight) {
            (0, w) if w >= 80 => "high",
            (_, w) if w >= 50 => "medium",
            _ => "low",
        };
    }
    merged.truncate(4);
    merged
}

fn cause(category: Category, title: impl Into<String>, weight: u32) -> Cause {
    Cause {
        category,
        title: title.into(),
        confidence: "low",
        evidence: Vec::new(),
        fix: Fix::default(),
        weight,
    }
}

fn at(t: f64) -> String {
    format!("{t:.1} s into the run")
}

/// Xids, GPUs off the bus, the OOM killer, and the cgroup's OOM count.
fn events(i: &Inputs, v: &mut Vec<Cause>) {
    let t = i.timeline;
    for e in &t.events {
        let seen = match (&e.line, e.source) {
            (Some(l), "event_log") => format!("System event log, {}: {l}", at(e.t_s)),
            (Some(l), _) => format!("kernel log, {}: {l}", at(e.t_s)),
            (None, _) => format!("NVML event, {}", at(e.t_s)),
        };
        match &e.event {
            LogEvent::Xid { xid, .. } => {
                let Some(m) = crate::explain::codes::xid_match(*xid, "high") else {
                    continue;
                };
                let weight = match m.severity {
                    Severity::Error => 95,
                    Severity::Warning => 70,
                    Severity::Info => 30,
                };
                let gpu = e.gpu.map(|g| format!(" on GPU {g}")).unwrap_or_default();
                let mut c = cause(m.category, format!("{}{gpu}", m.name), weight);
                c.evidence.push(format!("{seen}: {}", m.meaning));
                c.fix = m.fix;
                v.push(c);
            }
            LogEvent::OomKill { pid, process } => {
                let who = format!(
                    "PID {}{}",
                    pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                    process
                        .as_ref()
                        .map(|p| format!(" ({p})"))
                        .unwrap_or_default()
                );
                if e.this_run == Some(true) {
                    let mut c = cause(
                        Category::HostMemoryExhausted,
                        "The kernel's OOM killer killed this run's process (host memory or the cgroup limit)",
                        100,
                    );
                    c.evidence
                        .push(format!("{seen} ({who} was part of this run)"));
                    c.fix = host_fix(t);
                    v.push(c);
                } else {
                    let mut c = cause(
                        Category::HostMemoryExhausted,
                        "The kernel's OOM killer struck during the run",
                        35,
                    );
                    c.evidence
                        .push(format!("{seen} ({who} was not part of this run)"));
                    v.push(c);
                }
            }
            LogEvent::DisplayDriverReset { .. } => v.push(tdr_cause(&seen)),
            other => {
                // The event's category: knowledge/kernel-events.yaml, as `check` and `explain`.
                let k = crate::knowledge::kernel::describe(other).map(|(k, _, _)| k);
                let cat = k.map(|k| k.category).unwrap_or(Category::DriverFault);
                // An informational event (a driver assertion) is no cause on its own.
                let weight = if matches!(other, LogEvent::PcieAer { .. }) {
                    30
                } else if k.is_some_and(|k| k.severity == Severity::Info) {
                    20
                } else {
                    90
                };
                let mut c = cause(
                    cat,
                    "The NVIDIA driver reported a fault during the run",
                    weight,
                );
                c.evidence.push(seen);
                v.push(c);
            }
        }
    }
    cgroup_oom(i, v);
}

/// A display-driver reset (TDR) during the run: every CUDA context on the GPU was lost.
fn tdr_cause(seen: &str) -> Cause {
    let mut c = cause(
        Category::DriverFault,
        "Windows reset the display driver during the run (TDR)",
        90,
    );
    c.evidence.push(format!("{seen}: the GPU did not answer within the TDR delay, so Windows reset its driver and every CUDA context on it was lost"));
    c.fix = Fix {
        text: "If the program's kernels run long on a GPU that drives a display (WDDM), raise TdrDelay and restart, or run on a GPU in TCC mode; if it happens under light load, suspect the GPU (power, cooling, overclock) or the driver:".into(),
        commands: vec![
            r#"reg add "HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers" /v TdrDelay /t REG_DWORD /d 60 /f"#.into(),
            "shutdown /r /t 0".into(),
        ],
        shell: "powershell".into(),
        needs_root: true,
    };
    c
}

/// The memory cgroup's OOM kills during the run.
fn cgroup_oom(i: &Inputs, v: &mut Vec<Cause>) {
    let t = i.timeline;
    if let (Some(a), Some(b)) = (&t.cgroup_start, &t.cgroup_end) {
        if let (Some(x), Some(y)) = (a.oom_kills, b.oom_kills) {
            if y > x {
                let killed = matches!(i.ended, Ended::Signaled { signal: 9, .. });
                let mut c = cause(
                    Category::HostMemoryExhausted,
                    "Out of host memory: the memory cgroup's OOM killer struck",
                    if killed { 100 } else { 60 },
                );
                c.evidence.push(format!(
                    "the memory cgroup {} ({}) counted {} OOM kill(s) during the run",
                    b.path,
                    match b.memory_max {
                        Some(m) => format!("limit {}", size(m)),
                        None => "no limit of its own".into(),
                    },
                    y - x
                ));
                c.fix = host_fix(t);
                v.push(c);
            }
        }
    }
}

fn host_fix(t: &Timeline) -> Fix {
    let mut commands = vec!["sudo dmesg -T | grep -iE 'killed process|out of memory'".to_string()];
    if let Some(c) = &t.cgroup_end {
        commands.push(if c.version == "v2" {
            format!("cat {0}/memory.max {0}/memory.events", c.path)
        } else {
            format!(
                "cat {0}/memory.limit_in_bytes {0}/memory.oom_control",
                c.path
            )
        });
    }
    Fix {
        text: "Lower host memory use (fewer DataLoader workers, smaller prefetch, memory-mapped datasets) or raise the memory limit of the job or container.".into(),
        commands,
        shell: "sh".into(),
        needs_root: false,
    }
}

/// The exit status read as `explain` reads a code.
fn exit_status(i: &Inputs, v: &mut Vec<Cause>) {
    let (n, sig) = match i.ended {
        Ended::Exited(0) => return,
        Ended::Exited(c) if (129..=192).contains(&c) => (c as i64, Some(c - 128)),
        Ended::Exited(c) => (c as i64, None),
        Ended::Signaled { signal, .. } => (128 + signal as i64, Some(signal)),
    };
    let Some(m) = exit_reading(n) else {
        return;
    };
    let weight = match sig {
        Some(2) | Some(15) => 70,
        Some(_) => 50,
        // A Windows crash code names how the process died, as a signal does.
        None if is_ntstatus(n) => 50,
        // A plain exit status says only that the program failed: the output says why.
        None => 10,
    };
    if sig == Some(9) {
        v.push(sigkill(i, &m));
        return;
    }
    let mut c = cause(m.category, m.name.clone(), weight);
    c.evidence.push(m.meaning.clone());
    c.fix = m.fix.clone();
    v.push(c);
}

/// How `explain` reads an exit status: 129-192 as 128 + a signal, anything else as the program's
/// own code (a process's status is not a CUDA error number, whatever the number).
pub fn exit_reading(n: i64) -> Option<Match> {
    let all = crate::explain::codes::readings(n);
    if (129..=192).contains(&n) {
        return all.into_iter().next();
    }
    if is_ntstatus(n) {
        if let Some(m) = all.iter().find(|m| m.kind == "ntstatus") {
            return Some(m.clone());
        }
    }
    all.into_iter().find(|m| m.kind == "exit_code")
}

/// True for an exit status that is a Windows crash's NTSTATUS ([`crash_ntstatus`]).
///
/// [`crash_ntstatus`]: crate::explain::codes::crash_ntstatus
fn is_ntstatus(n: i64) -> bool {
    crate::explain::codes::crash_ntstatus(n).is_some()
}

/// What the run shows for and against the OOM killer having sent a SIGKILL, and what it could
/// not see. The OOM killer logs every kill in the kernel log ("Out of memory: Killed process
/// PID" or "Memory cgroup out of memory: Killed process PID", mm/oom_kill.c) and counts it in
/// the cgroup's memory.events `oom_kill` (v2) or memory.oom_control `oom_kill` (v1), and it
/// picks the process with the largest memory footprint (mm/oom_kill.c, oom_badness).
#[derive(Debug, Default, PartialEq)]
pub struct OomEvidence {
    pub for_oom: Vec<String>,
    /// Evidence against, strongest first: the kernel log, the cgroup's count, the peak.
    pub against: Vec<String>,
    /// `against` in a few words each, for a title.
    pub against_short: Vec<String>,
    /// How strongly `against` rules the OOM killer out (for the cause's weight).
    pub against_weight: u32,
    pub unseen: Vec<String>,
}

impl OomEvidence {
    /// One piece of evidence against the OOM killer: the line, its few words for a title, and
    /// how strongly it rules the killer out.
    fn rule_out(&mut self, line: String, short: String, weight: u32) {
        self.against.push(line);
        self.against_short.push(short);
        self.against_weight += weight;
    }
}

/// A peak at or above this share of the limit counts as "memory at the limit".
const NEAR_LIMIT: f64 = 0.9;
/// A peak below this share of the limit counts as "far below the limit".
const FAR_BELOW: f64 = 0.25;

pub fn oom_evidence(i: &Inputs) -> OomEvidence {
    let t = i.timeline;
    let mut e = OomEvidence::default();
    kernel_log_evidence(t, &mut e);
    cgroup_count_evidence(t, &mut e);
    peak_evidence(i, &mut e);
    cgroup_limit_evidence(t, &mut e);
    e
}

/// The kernel log: this run's process named as killed, or read through the run with no
/// OOM-killer line.
fn kernel_log_evidence(t: &Timeline, e: &mut OomEvidence) {
    let ours = t
        .events
        .iter()
        .any(|x| matches!(x.event, LogEvent::OomKill { .. }) && x.this_run == Some(true));
    let others = t
        .events
        .iter()
        .filter(|x| matches!(x.event, LogEvent::OomKill { .. }) && x.this_run != Some(true))
        .count();
    match &t.kernel_log {
        _ if ours => e
            .for_oom
            .push("the kernel log names this run's process as killed by the OOM killer".into()),
        Some(k) if k.followed && others == 0 => {
            e.rule_out(
                format!(
                    "the kernel log ({}) was read through the run and has no OOM-killer line",
                    k.path
                ),
                "no OOM-killer line in the kernel log".into(),
                25,
            );
        }
        // Another process's kill: the kernel log neither names this run nor rules it out
        // (a process of the run that lived between two samples is not known by its pid).
        Some(k) if k.followed => {}
        Some(k) => e.unseen.push(format!(
            "the kernel log was not read ({})",
            k.error.as_deref().unwrap_or(&k.path)
        )),
        None => e.unseen.push("the kernel log was not read".into()),
    }
}

/// The memory cgroup's count of OOM kills.
fn cgroup_count_evidence(t: &Timeline, e: &mut OomEvidence) {
    match (&t.cgroup_start, &t.cgroup_end) {
        (Some(a), Some(b)) => match (a.oom_kills, b.oom_kills) {
            (Some(x), Some(y)) if y > x => e.for_oom.push(format!(
                "the memory cgroup {} counted {} OOM kill(s) during the run",
                b.path,
                y - x
            )),
            (Some(_), Some(_)) => {
                e.rule_out(
                    format!(
                        "the memory cgroup {} counted no OOM kill during the run",
                        b.path
                    ),
                    "no OOM kill counted by the memory cgroup".into(),
                    20,
                );
            }
            _ => e.unseen.push(format!(
                "the OOM-kill count of the memory cgroup {} could not be read",
                b.path
            )),
        },
        _ => e
            .unseen
            .push("no memory cgroup was found to read its OOM-kill count".into()),
    }
}

/// The peak against the limit: the cgroup's, else the host's.
fn peak_evidence(i: &Inputs, e: &mut OomEvidence) {
    let t = i.timeline;
    let peak = [t.host_peak_rss_bytes, i.maxrss]
        .into_iter()
        .flatten()
        .max();
    let limit = match (
        t.cgroup_end.as_ref().and_then(|c| c.memory_max),
        t.host_memory_bytes,
    ) {
        (Some(c), Some(h)) if h < c => Some((h, "the host's memory")),
        (Some(c), _) => Some((c, "the memory cgroup's limit")),
        (None, Some(h)) => Some((h, "the host's memory")),
        (None, None) => None,
    };
    match (peak, limit) {
        (Some(p), Some((l, what))) if l > 0 => {
            let share = p as f64 / l as f64;
            let pct = match share * 100.0 {
                x if x < 1.0 => "under 1 %".to_string(),
                x => format!("{x:.0} %"),
            };
            let line = format!(
                "the run's processes peaked at {} resident, {pct} of {what} ({})",
                size(p),
                size(l)
            );
            if share >= NEAR_LIMIT {
                e.for_oom.push(line);
            } else if share < FAR_BELOW {
                e.rule_out(line, format!("peak {} of {}", size(p), size(l)), 10);
            }
        }
        (None, _) => e
            .unseen
            .push("the run's peak memory was not measured".into()),
        _ => e
            .unseen
            .push("neither a memory cgroup limit nor the host's memory could be read".into()),
    }
}

/// The cgroup reaching its limit during the run (its peak counter is the cgroup's lifetime's).
fn cgroup_limit_evidence(t: &Timeline, e: &mut OomEvidence) {
    if let (Some(a), Some(b)) = (&t.cgroup_start, &t.cgroup_end) {
        if let (Some(max), Some(p0), Some(p1)) = (b.memory_max, a.memory_peak, b.memory_peak) {
            let near = |p: u64| p as f64 >= NEAR_LIMIT * max as f64;
            if near(p1) && !near(p0) {
                e.for_oom.push(format!(
                    "the memory cgroup {} reached {} of its {} limit during the run",
                    b.path,
                    size(p1),
                    size(max)
                ));
            }
        }
    }
}

/// The signatures of the explain catalog that read the SIGKILL itself ("Killed", "exit status
/// 137"), not a memory shortage: where the run's evidence rules the OOM killer out, they say
/// nothing more than the exit status. (`host-oom` also reads real OOM-killer lines pasted into
/// the output; the kernel log read through the run outranks those.)
const KILL_SYMPTOMS: &[&str] = &["host-oom", "host-killed-line"];

/// Of those, the ones that only restate a SIGKILL (a shell's "Killed"): after any SIGKILL they
/// add no evidence, so they never raise the verdict's confidence.
const KILL_RESTATED: &[&str] = &["host-killed-line"];

fn sigkilled(i: &Inputs) -> bool {
    matches!(
        i.ended,
        Ended::Signaled { signal: 9, .. } | Ended::Exited(137)
    )
}

/// True when the run ended by SIGKILL and its evidence rules out the OOM killer.
fn killed_from_outside(i: &Inputs) -> bool {
    sigkilled(i) && {
        let e = oom_evidence(i);
        e.for_oom.is_empty() && !e.against.is_empty()
    }
}

/// A SIGKILL, judged from what the run saw: the OOM killer where there is evidence for it; "from
/// outside" where the evidence rules it out; the usual cause, with low confidence, where nothing
/// could be seen.
fn sigkill(i: &Inputs, m: &Match) -> Cause {
    let e = oom_evidence(i);
    let unseen = |c: &mut Cause| {
        for u in &e.unseen {
            c.evidence.push(format!("not seen: {u}"));
        }
    };
    if !e.for_oom.is_empty() {
        let mut c = cause(
            Category::HostMemoryExhausted,
            "Killed by SIGKILL (exit 137): out of host memory (the OOM killer)",
            70,
        );
        c.evidence.extend(e.for_oom.iter().cloned());
        c.evidence
            .extend(e.against.iter().map(|a| format!("but: {a}")));
        unseen(&mut c);
        c.fix = host_fix(i.timeline);
        return c;
    }
    if !e.against.is_empty() {
        let mut c = cause(
            Category::ApplicationError,
            format!(
                "Killed by SIGKILL from outside: not the OOM killer ({})",
                e.against_short.join(", ")
            ),
            30 + e.against_weight,
        );
        c.evidence.extend(e.against.iter().cloned());
        unseen(&mut c);
        c.evidence.push("SIGKILL cannot be caught: something sent it, such as a scheduler enforcing a time or resource limit (Slurm, Kubernetes), a supervisor or watchdog, or a person or script running kill -9".into());
        c.fix = Fix {
            text: "Find what sent SIGKILL: the job scheduler's record of the job, a supervisor's or watchdog's log, or who ran kill -9 on the machine.".into(),
            commands: vec![
                "sacct -j <job id> -o JobID,State,ExitCode,Elapsed,Timelimit,MaxRSS".into(),
                "sudo journalctl --since '-1h' | grep -iE 'kill|timeout|oom'".into(),
            ],
            ..Default::default()
        };
        return c;
    }
    let mut c = cause(
        m.category,
        "Killed by SIGKILL (exit 137): most often the OOM killer (host memory), but gpudoctor could not tell",
        40,
    );
    c.evidence.push(m.meaning.clone());
    unseen(&mut c);
    c.fix = m.fix.clone();
    c
}

/// A line of a job's output that reports a reading and no failure: a monitoring print
/// ("GPU Current Temp : 61 C", "gpu temperature 61C", "power draw 250 W", "util 98%") or a
/// progress bar ("45%|████▌ | 450/1000 [00:10<00:12, 44.1it/s]"). Such a line never makes a
/// hardware cause by itself.
pub fn informational(line: &str) -> bool {
    use std::sync::OnceLock;
    static READING: OnceLock<Option<regex::Regex>> = OnceLock::new();
    static FAILURE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    static PROGRESS: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let reading = READING.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(?:temp(?:erature)?|util(?:i[sz]ation)?|power(?: draw| consumption| usage)?|fan(?: speed)?|clocks?|memory(?: used| usage)?)\b[^0-9\n]{0,24}\d+(?:\.\d+)?\s*(?:°\s*c|c|%|w|mhz|mib|gib|mb|gb)\b").ok()
    });
    let failure = FAILURE.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(?:error|errors|fail\w*|fault\w*|xid|throttl\w*|slowdown|shut\w*|exceed\w*|critical|abort\w*|brake|over\w*|lost|fallen)\b").ok()
    });
    let progress = PROGRESS.get_or_init(|| {
        regex::Regex::new(r"\d+%\|.*\|\s*\d+/\d+|\d+(?:\.\d+)?\s*(?:it|s)/(?:s|it)\]").ok()
    });
    let (Some(reading), Some(failure), Some(progress)) = (reading, failure, progress) else {
        return false;
    };
    !failure.is_match(line) && (reading.is_match(line) || progress.is_match(line))
}

/// What the output's tail shows, as `explain` ranks it.
fn output(i: &Inputs, v: &mut Vec<Cause>) {
    let mut n = 0;
    let outside = killed_from_outside(i);
    let killed = sigkilled(i);
    for m in i.matches {
        if m.kind == "exit_code" {
            continue;
        }
        // A temperature, a utilisation or a progress bar printed by the job is no hardware
        // problem by itself (issue 30: "gpu temperature 61C" outranked a device-side assert).
        let hardware = matches!(
            m.category,
            Category::ThermalPower
                | Category::HardwareFault
                | Category::PcieDegraded
                | Category::EccMemory
        );
        if hardware && m.text.as_deref().is_some_and(informational) {
            continue;
        }
        let id = m.code.as_str().unwrap_or_default();
        if (outside && KILL_SYMPTOMS.contains(&id)) || (killed && KILL_RESTATED.contains(&id)) {
            continue;
        }
        let weight = match (n, m.confidence) {
            (0, _) => 85,
            (_, "high") | (_, "medium") => 55,
            _ => 35,
        };
        n += 1;
        let mut c = cause(m.category, m.name.clone(), weight);
        let seen = match (&m.text, m.count) {
            (Some(t), Some(k)) if k > 1 => format!("output ({k} times): {t}"),
            (Some(t), _) => format!("output: {t}"),
            (None, _) => format!("output: {}", m.meaning),
        };
        c.evidence.push(seen);
        if m.text.is_some() && !m.meaning.is_empty() {
            c.evidence.push(m.meaning.clone());
        }
        c.fix = m.fix.clone();
        v.push(c);
        if n >= 4 {
            break;
        }
    }
}

/// A GPU whose memory was full at the end, when nothing else says so.
fn gpu_full(i: &Inputs, v: &mut Vec<Cause>) {
    if matches!(i.ended, Ended::Exited(0)) {
        return;
    }
    for g in &i.timeline.gpus {
        let (Some(total), Some(last)) = (g.total_bytes, last_used(i.timeline, g.gpu)) else {
            continue;
        };
        if total > 0 && last as f64 >= 0.97 * total as f64 {
            let mut c = cause(
                Category::GpuMemoryExhausted,
                format!("GPU {} memory was full at the end of the run", g.gpu),
                45,
            );
            c.fix = Fix {
                text: "Free the GPU memory other processes hold, or use less (a smaller batch, gradient checkpointing, mixed precision).".into(),
                commands: vec!["nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv".into()],
                ..Default::default()
            };
            v.push(c);
        }
    }
}

fn last_used(t: &Timeline, gpu: u32) -> Option<u64> {
    t.last
        .iter()
        .rev()
        .find_map(|p| p.gpus.iter().find(|g| g.gpu == gpu)?.used_bytes)
}

/// The timeline's evidence for memory causes: who held the GPU memory, and the host's peak.
fn machine_evidence(i: &Inputs, c: &mut Cause) {
    let t = i.timeline;
    match c.category {
        Category::GpuMemoryExhausted => {
            for g in &t.gpus {
                c.evidence.extend(gpu_lines(g, i.duration_s));
            }
            c.evidence.extend(held_between_samples(i));
            if t.gpus.is_empty() {
                if let Some(why) = t.unwatched.first() {
                    c.evidence
                        .push(format!("GPU memory was not watched: {why}"));
                }
            }
        }
        Category::HostMemoryExhausted => {
            if let Some(p) = t.host_peak_rss_bytes.filter(|p| *p > 0) {
                c.evidence.push(format!(
                    "the run's processes peaked at {} resident{}",
                    size(p),
                    t.host_peak_t_s
                        .map(|s| format!(", {}", at(s)))
                        .unwrap_or_default()
                ));
            }
            if let Some(m) = i.maxrss {
                c.evidence.push(format!(
                    "the kernel counted {} as the command's largest resident size (ru_maxrss)",
                    size(m)
                ));
            }
            if let Some(cg) = &t.cgroup_end {
                if let Some(max) = cg.memory_max {
                    c.evidence.push(format!(
                        "memory cgroup limit {}{}",
                        size(max),
                        cg.memory_peak
                            .map(|p| format!(", its peak use {}", size(p)))
                            .unwrap_or_default(),
                    ));
                }
            }
        }
        _ => {}
    }
}

/// Host memory: MiB below 1 GiB, else GiB.
pub fn size(bytes: u64) -> String {
    if bytes < 1 << 30 {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        gib(bytes)
    }
}

fn who(pid: u32, name: &Option<String>) -> String {
    match name {
        Some(n) => format!("PID {pid} ({n})"),
        None => format!("PID {pid}"),
    }
}

/// The peak of one GPU, who held it, and other processes whose memory grew.
pub fn gpu_lines(g: &GpuSummary, duration_s: f64) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(peak), Some(t)) = (g.peak_used_bytes, g.peak_t_s) else {
        return out;
    };
    out.push(format!(
        "GPU {}: {} of {} in use at the peak, {} ({:.1} s before the end)",
        g.gpu,
        gib(peak),
        g.total_bytes.map(gib).unwrap_or_else(|| "?".into()),
        at(t),
        (duration_s - t).max(0.0)
    ));
    let mine: u64 = g
        .peak_holders
        .iter()
        .filter(|h| h.this_run)
        .filter_map(|h| h.bytes)
        .sum();
    let others: Vec<_> = g.peak_holders.iter().filter(|h| !h.this_run).collect();
    if !g.peak_holders.is_empty() {
        let list = others
            .iter()
            .map(|h| {
                format!(
                    "{} {}",
                    who(h.pid, &h.name),
                    h.bytes.map(gib).unwrap_or_else(|| "?".into())
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        out.push(format!(
            "at the peak this run held {} of it and other processes {}{}",
            gib(mine),
            gib(others.iter().filter_map(|h| h.bytes).sum()),
            if list.is_empty() {
                String::new()
            } else {
                format!(": {list}")
            }
        ));
    }
    for h in g.holders.iter().filter(|h| !h.this_run) {
        let grew = h.max_bytes.saturating_sub(h.first_bytes);
        if grew >= 256 << 20 && h.max_bytes as f64 >= 1.2 * h.first_bytes as f64 {
            out.push(format!(
                "{}, not part of this run, grew from {} ({}) to {} ({}) on GPU {}",
                who(h.pid, &h.name),
                gib(h.first_bytes),
                at(h.first_t_s),
                gib(h.max_bytes),
                at(h.max_t_s),
                g.gpu
            ));
        }
    }
    out
}

/// The error text's own figure for what the job held, when the samples saw far less: an
/// allocation made and failed between two samples (`run` samples once a second; on an H200 a
/// job took 84 GiB and died of the OOM within one interval, and the timeline said it held 0.0
/// GiB at the peak: docs/validation/h200-2026-11-27-run1).
fn held_between_samples(i: &Inputs) -> Option<String> {
    let said = i
        .matches
        .iter()
        .filter(|m| m.category == Category::GpuMemoryExhausted)
        .filter_map(|m| m.held_by_process_bytes)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))?;
    if i.timeline.gpus.is_empty() {
        return None;
    }
    let seen = i
        .timeline
        .gpus
        .iter()
        .flat_map(|g| g.holders.iter().filter(|h| h.this_run))
        .map(|h| h.max_bytes)
        .max()
        .unwrap_or(0) as f64;
    // Well above what was sampled: more than a quarter and 256 MiB over it.
    (said > 1.25 * seen && said - seen > (256u64 << 20) as f64).then(|| {
        format!(
            "the error text says the failing process held {} when the allocation failed, and the samples (one every {:.0} s) saw this run hold at most {}: the memory was taken between two samples",
            gib(said as u64),
            i.timeline.interval_s.max(0.0),
            gib(seen as u64)
        )
    })
}

/// `check` findings of the same problem (the categories `explain --with-check` joins).
fn check_evidence(i: &Inputs, c: &mut Cause) {
    let cats = crate::explain::related(c.category);
    for f in i
        .findings
        .iter()
        .filter(|f| cats.contains(&f.category) && f.severity >= Severity::Warning)
    {
        c.evidence.push(format!("check: {} {}", f.title, f.detail));
        if c.fix.text.is_empty() {
            c.fix = f.fix.clone();
        }
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
