//! Reads the kernel log without root where the system allows it: `/dev/kmsg` (non-blocking),
//! then `dmesg`, then `journalctl -k` (faults.md §2d: dmesg_restrict gates the first two; the
//! journal is open to the adm / systemd-journal groups). Keeps the lines of the look-back
//! window, parses them with [`crate::faults::logparse`] and counts repeats.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::deadline::{self, Deadline};
use crate::faults::logparse::{LogEvent, LogParser};
use crate::sanitize;
use crate::snapshot::{KernelEvent, KernelLog, Probed};

/// Lines read at most from one source (a busy journal can hold millions).
const MAX_LINES: u64 = 5_000_000;

/// Collects parsed events and counts repeats.
#[derive(Default)]
pub struct Collector {
    parser: LogParser,
    events: BTreeMap<String, KernelEvent>,
    order: Vec<String>,
    pub lines: u64,
}

impl Collector {
    pub fn feed(&mut self, line: &str) {
        self.lines += 1;
        if let Some(ev) = self.parser.feed(line) {
            self.add(ev, line);
        }
    }

    /// Counts a line whose event (if any) the caller already knows: the System event log's
    /// records on Windows (`probe::windows::eventlog`).
    pub fn record(&mut self, ev: Option<LogEvent>, line: &str) {
        self.lines += 1;
        if let Some(ev) = ev {
            self.add(ev, line);
        }
    }

    fn add(&mut self, ev: LogEvent, line: &str) {
        let key = ev.key();
        if let Some(e) = self.events.get_mut(&key) {
            e.count += 1;
            return;
        }
        // Keep the line from its signature on: no host name or timestamp prefix.
        let start = [
            "NVRM:",
            "Xid (",
            "SXid",
            "PCIe Bus Error",
            "Out of memory",
            "Memory cgroup",
            "Loading of",
            "modprobe",
        ]
        .iter()
        .filter_map(|m| line.find(m))
        .min()
        .unwrap_or(0);
        self.order.push(key.clone());
        self.events.insert(
            key,
            KernelEvent {
                event: ev,
                count: 1,
                first_line: sanitize::clean_line(line.get(start..).unwrap_or(line), 300),
            },
        );
    }

    pub fn finish(mut self, source: &str, window_hours: f64, unreadable: Vec<String>) -> KernelLog {
        let events = self
            .order
            .iter()
            .filter_map(|k| self.events.remove(k))
            .collect();
        KernelLog {
            source: source.to_string(),
            window_hours,
            lines: self.lines,
            events,
            unreadable,
        }
    }
}

/// Seconds since boot (the clock of /dev/kmsg and dmesg timestamps).
fn uptime(root: &Path) -> Option<f64> {
    std::fs::read_to_string(root.join("proc/uptime"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Reads the kernel log of the last `window_hours`, giving up on each source at `deadline`.
pub fn probe(root: &Path, window_hours: f64, deadline: Deadline) -> Probed<KernelLog> {
    let since = uptime(root).map(|u| u - window_hours * 3600.0);
    let mut unreadable = Vec::new();
    match read_kmsg(&root.join("dev/kmsg"), since, deadline) {
        Ok(c) => return Probed::found(c.finish("/dev/kmsg", window_hours, unreadable)),
        Err(e) => unreadable.push(format!("/dev/kmsg: {e}")),
    }
    match read_dmesg(since, deadline) {
        Ok(c) => return Probed::found(c.finish("dmesg", window_hours, unreadable)),
        Err(e) => unreadable.push(format!("dmesg: {e}")),
    }
    match read_journal(window_hours, deadline) {
        Ok(c) => return Probed::found(c.finish("journalctl -k", window_hours, unreadable)),
        Err(e) => unreadable.push(format!("journalctl -k: {e}")),
    }
    Probed::failed_code("unreadable", unreadable.join("; "))
}

/// /dev/kmsg records: "prio,seq,usec,flags;message" (continuation lines start with a space).
#[cfg(unix)]
fn read_kmsg(path: &Path, since: Option<f64>, deadline: Deadline) -> Result<Collector, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    super::trace::line("kernel-log: /dev/kmsg opened");
    let mut c = Collector::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut read_any = false;
    let mut records = 0u32;
    loop {
        if deadline.passed() || c.lines >= MAX_LINES {
            break;
        }
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                read_any = true;
                records += 1;
                let rec = String::from_utf8_lossy(buf.get(..n).unwrap_or(&[]));
                let (head, msg) = rec.split_once(';').unwrap_or(("", &rec));
                let usec: Option<f64> = head.split(',').nth(2).and_then(|t| t.parse().ok());
                if let (Some(s), Some(t)) = (since, usec) {
                    if t / 1e6 < s {
                        continue;
                    }
                }
                if let Some(first) = msg.lines().next() {
                    c.feed(first);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: the record was overwritten while we read; go on with the next one.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if !read_any => return Err(e.to_string()),
            Err(_) => break,
        }
    }
    if super::trace::enabled() {
        super::trace::line(&format!(
            "kernel-log: {records} /dev/kmsg records read, {} lines kept",
            c.lines
        ));
    }
    Ok(c)
}

#[cfg(not(unix))]
fn read_kmsg(_path: &Path, _since: Option<f64>, _deadline: Deadline) -> Result<Collector, String> {
    Err("not available on this system".to_string())
}

fn run_lines(cmd: Command, deadline: Deadline) -> Result<String, String> {
    let limit = deadline.remaining();
    let out = deadline::run(cmd, limit, 256 * 1024 * 1024).map_err(|e| e.to_string())?;
    if !out.success() {
        let err = out.stderr_text();
        let first = err.lines().next().unwrap_or("").trim();
        return Err(format!(
            "{}{}",
            out.describe(limit),
            if first.is_empty() {
                String::new()
            } else {
                format!(": {}", sanitize::clean_line(first, 200))
            }
        ));
    }
    Ok(out.stdout_text())
}

/// `dmesg` lines "[  12.345678] message".
fn read_dmesg(since: Option<f64>, deadline: Deadline) -> Result<Collector, String> {
    let text = run_lines(Command::new("dmesg"), deadline)?;
    let mut c = Collector::default();
    for line in text.lines().take(MAX_LINES as usize) {
        let t: Option<f64> = line
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .and_then(|(t, _)| t.trim().parse().ok());
        if let (Some(s), Some(t)) = (since, t) {
            if t < s {
                continue;
            }
        }
        c.feed(line);
    }
    Ok(c)
}

fn read_journal(window_hours: f64, deadline: Deadline) -> Result<Collector, String> {
    let mut cmd = Command::new("journalctl");
    cmd.args(["-k", "--no-pager", "-q", "-o", "short-iso"])
        .arg(format!(
            "--since=-{}s",
            (window_hours * 3600.0).round() as u64
        ));
    let text = run_lines(cmd, deadline)?;
    let mut c = Collector::default();
    for line in text.lines().take(MAX_LINES as usize) {
        c.feed(line);
    }
    if c.lines == 0 {
        return Err("no kernel messages (no journal, or no permission to read it)".to_string());
    }
    Ok(c)
}
