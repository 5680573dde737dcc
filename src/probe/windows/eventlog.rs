//! The System event log's NVIDIA records, where Linux has the kernel log (issue 19). On Windows
//! `wevtutil qe System` is asked, under the probe's deadline, for the `nvlddmkm` (the display
//! driver) and `Display` (Windows' graphics stack) records of the look-back window as XML; this
//! module parses that XML and turns the records into the kernel log's events, so that the same
//! rules judge both. The parser is plain code compiled everywhere and tested on Linux with
//! recorded records (tests/fixtures/windows/eventlog/).
//!
//! What becomes an event (the sources of each record are in the fixtures' README):
//! - `Display` 4101 ("Display driver nvlddmkm stopped responding and has … recovered") and
//!   `nvlddmkm` 153 (logged with each timeout-and-reset, "Error occurred on GPUID: 100" or
//!   "Resetting/Restarting TDR occurred on GPUID:100") → [`LogEvent::DisplayDriverReset`];
//! - `nvlddmkm` 13 with a "Graphics … Exception" text → Xid 13 (the Windows form of Xid 13,
//!   Graphics Engine Exception: the same texts follow "NVRM: Xid (…): 13," on Linux);
//! - any `nvlddmkm` text that carries an "NVRM: Xid (" line → that Xid (none seen in public pastes
//!   so far, but the Linux parser reads it at no cost);
//! - everything else (`nvlddmkm` 14, 0, …: opaque binary dumps without a documented meaning) is
//!   counted in `lines` and not reported.

use crate::faults::logparse::{LogEvent, LogParser};
use crate::probe::kernel_log::Collector;
use crate::sanitize;
use crate::snapshot::{KernelLog, Probed};

/// `KernelLog::source` of a snapshot read from the System event log.
pub const SOURCE: &str = KernelLog::WINDOWS_EVENT_LOG;

/// Records asked for at most (newest first).
pub const MAX_RECORDS: u32 = 5000;

/// One record of `wevtutil qe … /f:xml` (or `/f:RenderedXml`), as far as gpudoctor uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventRecord {
    /// `System/Provider/@Name` ("nvlddmkm", "Display").
    pub provider: String,
    /// `System/EventID`.
    pub event_id: u32,
    /// `System/TimeCreated/@SystemTime` as written ("2024-11-14T15:02:11.5930000Z").
    pub time: Option<String>,
    /// The same in seconds since the Unix epoch.
    pub unix_time: Option<f64>,
    /// `EventData/Data`: the message's insertion strings ("\Device\Video3", "Error occurred on
    /// GPUID: 100").
    pub data: Vec<String>,
    /// `RenderingInfo/Message`, with `/f:RenderedXml` only.
    pub message: Option<String>,
}

impl EventRecord {
    /// The record as one log line: "nvlddmkm 153: \Device\Video3 Error occurred on GPUID: 100".
    pub fn line(&self) -> String {
        let mut parts: Vec<&str> = self
            .data
            .iter()
            .map(|d| d.trim())
            .filter(|d| !d.is_empty())
            .collect();
        if let Some(m) = self.message.as_deref() {
            parts.push(m.trim());
        }
        format!("{} {}: {}", self.provider, self.event_id, parts.join(" "))
    }

    /// The event this record stands for, if gpudoctor knows it.
    pub fn event(&self) -> Option<LogEvent> {
        let text = self.line();
        if self.provider.eq_ignore_ascii_case("nvlddmkm") {
            // A Linux-style Xid line inside the driver's text wins over the event id.
            let mut p = LogParser::new();
            if let Some(ev @ LogEvent::Xid { .. }) = p.feed(&text) {
                return Some(ev);
            }
            let device = self
                .data
                .iter()
                .find(|d| d.trim_start().starts_with("\\Device\\"))
                .map(|d| sanitize::clean_line(d.trim(), 80));
            return match self.event_id {
                153 => Some(LogEvent::DisplayDriverReset { device }),
                13 => {
                    let message = self
                        .data
                        .iter()
                        .map(|d| d.trim())
                        .filter(|d| !d.is_empty() && !d.starts_with("\\Device\\"))
                        .collect::<Vec<_>>()
                        .join(" ");
                    (message.contains("Graphics") && message.contains("Exception")).then(|| {
                        LogEvent::Xid {
                            xid: 13,
                            bus_id: None,
                            gpu_instance: None,
                            compute_instance: None,
                            pid: None,
                            process: None,
                            message: sanitize::clean_line(&message, 400),
                            caused_by: None,
                            fatal: None,
                            recovery_action: None,
                        }
                    })
                }
                _ => None,
            };
        }
        if self.provider.eq_ignore_ascii_case("Display") && self.event_id == 4101 {
            let device = self
                .data
                .first()
                .map(|d| d.trim())
                .filter(|d| !d.is_empty())
                .map(|d| sanitize::clean_line(d, 80));
            return Some(LogEvent::DisplayDriverReset { device });
        }
        None
    }
}

/// The text of wevtutil's output: UTF-16LE when it starts with a byte-order mark or looks like
/// it (every second byte zero), UTF-8 otherwise.
pub fn decode(bytes: &[u8]) -> String {
    let utf16 = bytes.starts_with(&[0xff, 0xfe])
        || (bytes.len() >= 4 && bytes.get(1) == Some(&0) && bytes.get(3) == Some(&0));
    if !utf16 {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let body = bytes.strip_prefix(&[0xff, 0xfe]).unwrap_or(bytes);
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|c| {
            u16::from_le_bytes([
                c.first().copied().unwrap_or(0),
                c.get(1).copied().unwrap_or(0),
            ])
        })
        .collect();
    String::from_utf16_lossy(&units)
}

/// Every `<Event>` element of `xml` (wevtutil writes them one after another, with no root).
/// Tolerant: a record it cannot read is skipped, never a panic.
pub fn parse_records(xml: &str) -> Vec<EventRecord> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = find_tag(rest, "Event") {
        let after = rest.get(i..).unwrap_or("");
        let (body, next) = match after.find("</Event>") {
            Some(j) => (
                after.get(..j).unwrap_or(""),
                after.get(j + "</Event>".len()..).unwrap_or(""),
            ),
            None => (after, ""),
        };
        if let Some(r) = parse_record(body) {
            out.push(r);
        }
        if next.len() >= rest.len() {
            break;
        }
        rest = next;
    }
    out
}

/// The offset of the next `<name` that is the whole tag name (`<Event` but not `<EventID`).
fn find_tag(s: &str, name: &str) -> Option<usize> {
    let open = format!("<{name}");
    let mut from = 0;
    while let Some(i) = s.get(from..)?.find(&open) {
        let at = from + i;
        let next = s.get(at + open.len()..)?.chars().next()?;
        if next == '>' || next == '/' || next.is_whitespace() {
            return Some(at);
        }
        from = at + open.len();
    }
    None
}

/// The start tag `<name …>` (or `<name …/>`) at the next such tag, and what follows it.
fn start_tag<'a>(s: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    let i = find_tag(s, name)?;
    let r = s.get(i..)?;
    let end = r.find('>')?;
    Some((r.get(..end + 1)?, r.get(end + 1..)?))
}

/// An attribute's value in a start tag, quoted with ' or ".
fn attr(tag: &str, name: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = tag.get(from..)?.find(name) {
        let at = from + i;
        let before = tag.get(..at)?.chars().last();
        let r = tag.get(at + name.len()..)?.trim_start();
        if before.is_some_and(char::is_whitespace) {
            if let Some(r) = r.strip_prefix('=') {
                let r = r.trim_start();
                let q = r.chars().next()?;
                if q == '\'' || q == '"' {
                    let v = r.get(1..)?;
                    let end = v.find(q)?;
                    return Some(unescape(v.get(..end)?));
                }
            }
        }
        from = at + name.len();
    }
    None
}

/// The text of the next `<name>…</name>` element (empty for `<name/>`).
fn element_text<'a>(s: &'a str, name: &str) -> Option<(String, &'a str)> {
    let (tag, after) = start_tag(s, name)?;
    if tag.ends_with("/>") {
        return Some((String::new(), after));
    }
    let close = format!("</{name}>");
    let end = after.find(&close)?;
    Some((unescape(after.get(..end)?), after.get(end + close.len()..)?))
}

fn parse_record(body: &str) -> Option<EventRecord> {
    let (provider_tag, _) = start_tag(body, "Provider")?;
    let provider = attr(provider_tag, "Name")?;
    let (id, _) = element_text(body, "EventID")?;
    let event_id = id.trim().parse().ok()?;
    let time = start_tag(body, "TimeCreated").and_then(|(t, _)| attr(t, "SystemTime"));
    let unix_time = time.as_deref().and_then(parse_system_time);
    let mut data = Vec::new();
    if let Some((_, ev)) = start_tag(body, "EventData") {
        let ev = ev
            .find("</EventData>")
            .and_then(|j| ev.get(..j))
            .unwrap_or(ev);
        let mut rest = ev;
        while let Some((text, next)) = element_text(rest, "Data") {
            data.push(text);
            rest = next;
        }
    }
    let message = element_text(body, "Message").map(|(m, _)| m);
    Some(EventRecord {
        provider,
        event_id,
        time,
        unix_time,
        data,
        message,
    })
}

/// XML's five entities and character references.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let r = rest.get(i..).unwrap_or("");
        let Some(end) = r.find(';').filter(|e| *e <= 10) else {
            out.push('&');
            rest = r.get(1..).unwrap_or("");
            continue;
        };
        let name = r.get(1..end).unwrap_or("");
        let ch = match name {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => name
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = r.get(end + 1..).unwrap_or("");
            }
            None => {
                out.push('&');
                rest = r.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

/// "2024-11-14T15:02:11.5930000Z" (UTC, as the event log writes it) → seconds since the epoch.
pub fn parse_system_time(s: &str) -> Option<f64> {
    let s = s.trim().strip_suffix('Z').unwrap_or(s.trim());
    let (date, time) = s.split_once('T')?;
    let days = crate::vocab::days(date)?;
    let mut t = time.split(':');
    let hour: i64 = t.next()?.parse().ok()?;
    let min: i64 = t.next()?.parse().ok()?;
    let sec: f64 = t.next()?.parse().ok()?;
    if hour > 23 || min > 59 {
        return None;
    }
    Some((days * 86_400 + hour * 3600 + min * 60) as f64 + sec)
}

/// The records of the last `window_hours` before `now` (seconds since the epoch; all of them
/// when `now` or a record's time is unknown), oldest first, as a kernel log snapshot.
pub fn collect(records: &[EventRecord], now: Option<f64>, window_hours: f64) -> KernelLog {
    let since = now.map(|n| n - window_hours * 3600.0);
    let mut kept: Vec<&EventRecord> = records
        .iter()
        .filter(|r| match (since, r.unix_time) {
            (Some(s), Some(t)) => t >= s,
            _ => true,
        })
        .collect();
    kept.sort_by(|a, b| {
        a.unix_time
            .unwrap_or(0.0)
            .total_cmp(&b.unix_time.unwrap_or(0.0))
    });
    let mut c = Collector::default();
    for r in kept {
        c.record(r.event(), &r.line());
    }
    c.finish(SOURCE, window_hours, Vec::new())
}

/// What wevtutil's run says: the log, or why it could not be read.
pub fn judge(
    success: bool,
    status: &str,
    stdout: &[u8],
    stderr: &[u8],
    now: Option<f64>,
    window_hours: f64,
) -> Probed<KernelLog> {
    if !success {
        let err = decode(stderr);
        let first = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let first = sanitize::clean_line(first, 200);
        let said = if first.is_empty() {
            String::new()
        } else {
            format!(": {first}")
        };
        if first.contains("Access is denied") || first.contains("access denied") {
            return Probed::failed_code(
                "access_denied",
                format!("wevtutil qe System {status}{said} (run as Administrator, or as a member of the Event Log Readers group)"),
            );
        }
        return Probed::failed_code("unreadable", format!("wevtutil qe System {status}{said}"));
    }
    let records = parse_records(&decode(stdout));
    Probed::found(collect(&records, now, window_hours))
}

/// The XPath query for the records of the last `window_hours`.
pub fn query(window_hours: f64) -> String {
    let ms = (window_hours * 3_600_000.0).round().max(0.0) as u64;
    format!(
        "*[System[(Provider[@Name='nvlddmkm'] or Provider[@Name='Display']) and TimeCreated[timediff(@SystemTime) <= {ms}]]]"
    )
}

/// `wevtutil qe System` for the NVIDIA records of the last `window_hours`, as XML, newest first,
/// at most [`MAX_RECORDS`], run under `limit`.
#[cfg(windows)]
fn run_query(
    window_hours: f64,
    limit: std::time::Duration,
) -> std::io::Result<crate::probe::deadline::RunOutput> {
    let mut cmd = std::process::Command::new("wevtutil.exe");
    cmd.args([
        "qe".to_string(),
        "System".to_string(),
        format!("/q:{}", query(window_hours)),
        "/f:xml".to_string(),
        format!("/c:{MAX_RECORDS}"),
        "/rd:true".to_string(),
    ]);
    crate::probe::deadline::run(cmd, limit, 64 * 1024 * 1024)
}

/// Reads the System event log's NVIDIA records of the last `window_hours` within `limit`.
#[cfg(windows)]
pub fn probe(window_hours: f64, limit: std::time::Duration) -> Probed<KernelLog> {
    use std::time::{SystemTime, UNIX_EPOCH};

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs_f64());
    match run_query(window_hours, limit) {
        Ok(out) => judge(
            out.success(),
            &out.describe(limit),
            &out.stdout,
            &out.stderr,
            now,
            window_hours,
        ),
        Err(e) => Probed::failed_code(
            "unreadable",
            format!(
                "wevtutil could not be started: {}",
                sanitize::clean_line(&e.to_string(), 200)
            ),
        ),
    }
}

/// The events among `records` written at or after `start` (seconds since the epoch), oldest
/// first, each with its time and its line: what `gpudoctor run` adds to its timeline.
pub fn events_since(records: &[EventRecord], start: f64) -> Vec<(f64, LogEvent, String)> {
    let mut out: Vec<(f64, LogEvent, String)> = records
        .iter()
        .filter_map(|r| {
            let t = r.unix_time.filter(|t| *t >= start)?;
            Some((t, r.event()?, r.line()))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The System event log's NVIDIA events since `start` (seconds since the epoch), read once
/// within `limit`: `gpudoctor run` asks at the end of the run (Windows has no log to follow as
/// it is written, as /dev/kmsg is on Linux).
#[cfg(windows)]
pub fn since(
    start: f64,
    limit: std::time::Duration,
) -> Result<Vec<(f64, LogEvent, String)>, String> {
    use std::time::{SystemTime, UNIX_EPOCH};
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(start);
    // A minute more than the run, for clocks and the log's own delay.
    let hours = ((now - start).max(0.0) + 60.0) / 3600.0;
    let out = run_query(hours, limit).map_err(|e| format!("wevtutil could not be started: {e}"))?;
    if !out.success() {
        return Err(format!("wevtutil qe System {}", out.describe(limit)));
    }
    Ok(events_since(&parse_records(&decode(&out.stdout)), start))
}

#[cfg(test)]
#[path = "eventlog_tests.rs"]
mod tests;
