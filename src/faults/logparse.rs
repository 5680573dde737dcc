//! Parses kernel log lines into GPU-relevant events: Xid lines in every format of
//! ../shared/reference/faults.md §2 (with and without "PCI:", MIG-attributed, NVLink5, "caused
//! by previous Xid", pid/name or not), the lines whose fields it reads (API mismatch over three
//! lines, RmInitAdapter's code, PCIe AER, the OOM killer, NVSwitch SXids, Windows TDR), and every
//! other message family of knowledge/kernel-events.yaml ([`crate::knowledge::kernel`]: the
//! driver's own formats with file:line, nouveau, Secure Boot, BARs, GSP, assertions, crash dumps,
//! Fabric Manager), which name the event they belong to; and, failing those, any error or warning
//! format the driver prints (knowledge/kernel-messages.yaml) whose family says what went wrong.
//!
//! Signatures are searched anywhere in the line, so dmesg ("[  12.345678] ", `-T` dates), syslog
//! and journal ("Nov 21 13:59:01 host kernel: "), ISO-timestamped, /dev/kmsg, talosctl
//! ("192.168.1.2: kern: err: [...]") and kubectl-prefixed records all parse the same.
//! The parser is total: any input gives an event or nothing, never a panic (fuzzed in tests).
//! `check` and `explain --log` share it.

use crate::sanitize;

pub use crate::knowledge::events::LogEvent;

/// The event of a family match, as the variant that carries its fields where there is one.
fn of_family(id: &str, line: &str) -> LogEvent {
    let bus_id = gpu_prefix_bus(line).or_else(|| any_bus(line));
    match id {
        "fallen_off_bus" => LogEvent::FallenOffBus { bus_id },
        "rm_init_adapter_failed" => LogEvent::RmInitAdapterFailed { bus_id, code: None },
        "probe_not_called" => LogEvent::ProbeNotCalled,
        "no_devices_probed" => LogEvent::NoDevicesProbed,
        "open_module_needs_gsp" => LogEvent::OpenModuleNeedsGsp,
        "unsigned_module" => LogEvent::UnsignedModule,
        "unsupported_gpu" => LogEvent::UnsupportedGpu {
            detail: clean(nvrm_part(line)),
        },
        _ => LogEvent::Kernel {
            event: id.to_string(),
            bus_id,
            detail: Some(clean(nvrm_part(line))),
        },
    }
}

/// The line from "NVRM:" on (or the whole line).
fn nvrm_part(line: &str) -> &str {
    line.find("NVRM:")
        .and_then(|i| line.get(i..))
        .unwrap_or(line)
}

/// The first PCI address in a line ("0000:2b:00.0", "PCI:0000:2b:00"), normalised.
fn any_bus(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|w| w.trim_end_matches(':').trim_end_matches('.'))
        .filter(|w| w.matches(':').count() >= 2 && w.contains('.') || w.starts_with("PCI:"))
        .find_map(norm_bus_id)
}

/// "PCI:0000:2b:00", "0000:2B:00.0", "00000000:2B:00.0" → "0000:2b:00" (domain:bus:device).
pub fn norm_bus_id(s: &str) -> Option<String> {
    let s = s.trim().trim_start_matches("PCI:");
    let mut parts = s.split(':');
    let a = parts.next()?;
    let b = parts.next()?;
    let c = parts.next();
    let (dom, bus, dev) = match c {
        Some(c) => (a, b, c),
        None => ("0", a, b),
    };
    let dev = dev.split('.').next()?;
    let hex = |x: &str, max: usize| -> Option<u32> {
        if x.is_empty() || x.len() > max || !x.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(x, 16).ok()
    };
    Some(format!(
        "{:04x}:{:02x}:{:02x}",
        hex(dom, 8)?,
        hex(bus, 2)?,
        hex(dev, 2)?
    ))
}

fn digits_prefix(s: &str) -> Option<(u32, &str)> {
    let end = s.bytes().take_while(u8::is_ascii_digit).count();
    if end == 0 || end > 9 {
        return None;
    }
    let n = s.get(..end)?.parse().ok()?;
    Some((n, s.get(end..).unwrap_or("")))
}

fn clean(s: &str) -> String {
    sanitize::clean_line(s.trim(), 400)
}

/// Parses the part after "NVRM: Xid (".
fn parse_xid(rest: &str) -> Option<LogEvent> {
    let (inside, after) = rest.split_once(')')?;
    let mut words = inside.split_whitespace();
    let bus_id = words.next().and_then(norm_bus_id);
    let mut gpu_instance = None;
    let mut compute_instance = None;
    for w in words {
        if let Some(v) = w.strip_prefix("GPU-I:") {
            gpu_instance = v.parse().ok();
        } else if let Some(v) = w.strip_prefix("GPU-CI:") {
            compute_instance = v.parse().ok();
        }
    }
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let (xid, tail) = digits_prefix(after)?;
    let mut msg = tail
        .trim_start()
        .strip_prefix(',')
        .unwrap_or(tail)
        .trim_start();
    let mut pid = None;
    let mut process = None;
    if let Some(r) = msg.strip_prefix("pid=") {
        let (p, r) = r.split_once(',').unwrap_or((r, ""));
        pid = p.trim().trim_matches('\'').parse().ok();
        msg = r.trim_start();
    }
    if let Some(r) = msg.strip_prefix("name=") {
        let (n, r) = r.split_once(',').unwrap_or((r, ""));
        let n = n.trim();
        if !n.is_empty() && n != "<unknown>" {
            process = Some(clean(n));
        }
        msg = r.trim_start();
    }
    let caused_by = msg
        .rfind("caused by previous Xid ")
        .and_then(|i| msg.get(i + "caused by previous Xid ".len()..))
        .and_then(|r| digits_prefix(r.trim_start()).map(|(n, _)| n));
    let fatal = if (144..=150).contains(&xid) {
        if msg.contains("Nonfatal") || msg.contains("Non-fatal") {
            Some(false)
        } else if msg.contains("Fatal") {
            Some(true)
        } else {
            None
        }
    } else {
        None
    };
    let recovery_action = (xid == 154)
        .then(|| {
            let i = msg.rfind(" to 0x")?;
            let r = msg.get(i + " to 0x".len()..)?;
            let h: String = r.chars().take_while(char::is_ascii_hexdigit).collect();
            u64::from_str_radix(&h, 16).ok()
        })
        .flatten();
    Some(LogEvent::Xid {
        xid,
        bus_id,
        gpu_instance,
        compute_instance,
        pid,
        process,
        message: clean(msg),
        caused_by,
        fatal,
        recovery_action,
    })
}

/// The bus id after "NVRM: GPU " ("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.").
fn gpu_prefix_bus(line: &str) -> Option<String> {
    let i = line.find("NVRM: GPU ")?;
    let r = line.get(i + "NVRM: GPU ".len()..)?;
    let id = r
        .split(|c: char| c.is_whitespace())
        .next()?
        .trim_end_matches(':');
    norm_bus_id(id)
}

fn version_after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    let i = s.find(marker)?;
    let r = s.get(i + marker.len()..)?.trim_start();
    let v = r
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?;
    let v = v.trim_end_matches('.');
    (!v.is_empty() && crate::version::DriverVersion::parse(v).is_some()).then_some(v)
}

/// A stateful line parser (the API-mismatch message spans three NVRM lines; a kernel report
/// names a GPU's driver lines after its head).
#[derive(Debug, Default)]
pub struct LogParser {
    api: Option<(Option<String>, Option<String>, u8)>,
    /// The PID of the OOM kill an "oom-kill:constraint=…,pid=N" summary line reported: the
    /// "Killed process N" line of the same kill that follows is not a second event.
    oom_pid: Option<u32>,
    /// The kernel report (an oops, a hung task, a lockup) whose head was read and whose lines
    /// have not yet named a GPU's driver.
    report: Option<Report>,
}

/// The head of a kernel report (knowledge/linux-messages.yaml, scope `gpu_report`), waiting
/// for a line of the same report that names a GPU's driver.
#[derive(Debug)]
struct Report {
    family: String,
    head: String,
    /// Lines read since the head.
    lines: u32,
    /// Its event was reported: the rest of the report adds nothing.
    done: bool,
}

/// How many lines after its head a report may name a GPU's driver (a hung task's stack is
/// 20-40 frames; the registers and module list of an oops come before its trace).
const REPORT_LINES: u32 = 80;

impl LogParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The event a line completes, if any.
    pub fn feed(&mut self, line: &str) -> Option<LogEvent> {
        // "NVRM kgspInitRm_IMPL: ..." (the driver's prefix without its colon, in some
        // releases) reads as "NVRM: kgspInitRm_IMPL: ...".
        let fixed = line.find("NVRM ").and_then(|i| {
            let f = crate::knowledge::kernel::nvrm_with_colon(line.get(i..)?)?;
            Some(format!("{}{f}", line.get(..i)?))
        });
        let line = fixed.as_deref().unwrap_or(line);
        if let Some(ev) = self.report_line(line) {
            return Some(ev);
        }
        self.feed_line(line)
    }

    /// [`LogParser::feed`] of a line read as the driver prints it.
    fn feed_line(&mut self, line: &str) -> Option<LogEvent> {
        if let Some((client, module, waited)) = self.api.take() {
            return self.api_mismatch_continued(line, client, module, waited);
        }
        // NVSwitch SXids first: "SXid (PCI:" also contains "Xid (PCI:".
        if line.contains("SXid (") {
            let i = line.find("SXid (")?;
            let r = line.get(i..)?.split_once("): ")?.1;
            return digits_prefix(r).map(|(code, _)| LogEvent::NvswitchSxid { code });
        }
        if let Some(i) = line.find("NVRM: Xid (") {
            return line.get(i + "NVRM: Xid (".len()..).and_then(parse_xid);
        }
        if line.contains("Xid (PCI:") {
            // The nvidia:nvidia_dev_xid tracepoint: "Xid (PCI:0000:01:00.0): 79, …".
            let i = line.find("Xid (PCI:")?;
            return line.get(i + "Xid (".len()..).and_then(parse_xid);
        }
        if line.contains("RmInitAdapter failed") || line.contains("rm_init_adapter failed") {
            return Some(rm_init_failed(line));
        }
        if line.contains("NVRM: API mismatch") {
            let client = version_after(line, "has the version").map(str::to_string);
            let module = line
                .find("kernel module has")
                .and_then(|i| version_after(line.get(i..)?, "the version"))
                .map(str::to_string);
            if module.is_some() {
                return Some(LogEvent::ApiMismatch {
                    client_version: client,
                    module_version: module,
                });
            }
            self.api = Some((client, None, 0));
            return None;
        }
        if line.contains("NVRM:") && line.contains("is not supported by the NVIDIA") {
            let i = line.find("NVRM:").unwrap_or(0);
            return Some(LogEvent::UnsupportedGpu {
                detail: clean(line.get(i..).unwrap_or(line)),
            });
        }
        if let Some(i) = line.find("PCIe Bus Error: severity=") {
            return Some(pcie_aer(line, i));
        }
        if let Some(e) = display_driver_reset(line) {
            return Some(e);
        }
        if let Some(i) = line.find("Killed process ") {
            if line.contains("out of memory") || line.contains("Out of memory") {
                let r = line.get(i + "Killed process ".len()..).unwrap_or("");
                let (pid, r) = match digits_prefix(r) {
                    Some((p, r)) => (Some(p), r),
                    None => (None, r),
                };
                if pid.is_some() && self.oom_pid.take() == pid {
                    return None;
                }
                let process = r
                    .trim_start()
                    .strip_prefix('(')
                    .and_then(|x| x.split(')').next())
                    .map(clean);
                return Some(LogEvent::OomKill { pid, process });
            }
        }
        // mm/oom_kill.c's one-line summary: "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),
        // cpuset=…,mems_allowed=0,oom_memcg=…,task_memcg=…,task=python,pid=4242,uid=0".
        if let Some(i) = line.find("oom-kill:constraint=") {
            let r = line.get(i..).unwrap_or("");
            let field = |k: &str| {
                r.split(',')
                    .find_map(|f| f.trim().strip_prefix(k))
                    .map(str::trim)
            };
            let pid = field("pid=").and_then(|p| p.parse().ok());
            let process = field("task=").filter(|t| !t.is_empty()).map(clean);
            self.oom_pid = pid;
            return Some(LogEvent::OomKill { pid, process });
        }
        if let Some((e, _)) = crate::knowledge::kernel::match_line(line) {
            return Some(of_family(&e.id, line));
        }
        if let Some(r) = self.linux_line(line) {
            return r;
        }
        // Any other error or warning the driver prints: its family (knowledge/kernel-messages.yaml)
        // when the line says what went wrong; a context or notice line is no event.
        let msg = crate::knowledge::kernel::match_message(line)?;
        if msg.role != crate::knowledge::kernel::Role::Cause || msg.event.is_some() {
            return None;
        }
        Some(of_family(&msg.family, line))
    }

    /// A line of the Linux kernel's own (knowledge/linux-messages.yaml): `Some(event or none)`
    /// when the line is one, None when it is not.
    fn linux_line(&mut self, line: &str) -> Option<Option<LogEvent>> {
        use crate::knowledge::linux::{self, Scope};
        let (msg, f) = linux::match_line(line)?;
        // nouveau's own lines (its firmware requests name "nvidia/...") are read as nouveau's.
        if matches!(f.scope, Scope::NvidiaModule | Scope::GpuModule)
            && linux::printed_by_nouveau(line)
        {
            return None;
        }
        let id = f.event.id.as_str();
        let at = msg
            .pieces
            .first()
            .and_then(|p| line.find(p.as_str()))
            .unwrap_or(0);
        let said = clean(line.get(at..).unwrap_or(line));
        let event = |detail: String| LogEvent::Kernel {
            event: id.to_string(),
            bus_id: if f.scope == Scope::Any {
                any_bus(line)
            } else {
                None
            },
            detail: Some(detail),
        };
        if f.event.role == crate::knowledge::kernel::Role::Notice {
            return Some(None);
        }
        Some(match f.scope {
            Scope::Any => Some(event(said)),
            Scope::NvidiaModule | Scope::GpuModule => {
                f.scope.names_its_driver(line).then(|| event(said))
            }
            Scope::GpuReport if msg.format.contains("RIP:") => {
                // The crash site of a report: the report's reading when it is the driver's.
                if !linux::names_gpu_code(line) {
                    return Some(None);
                }
                match self.report.as_mut() {
                    Some(r) if r.done => None,
                    Some(r) => {
                        r.done = true;
                        Some(LogEvent::Kernel {
                            event: r.family.clone(),
                            bus_id: None,
                            detail: Some(format!("{} ({said})", r.head)),
                        })
                    }
                    None => Some(event(said)),
                }
            }
            Scope::GpuReport => {
                let names = linux::names_gpu_code(line);
                self.report = Some(Report {
                    family: id.to_string(),
                    head: said.clone(),
                    lines: 0,
                    done: names,
                });
                names.then(|| event(said))
            }
        })
    }

    /// A line inside an open kernel report: the report's event when it is the first to name the
    /// GPU's driver (a frame "os_acquire_rwlock_read+0x35/0x50 [nvidia]", "RIP: ...
    /// [nvidia]"). The module list ("Modules linked in: ... nvidia(PO)") names every module
    /// loaded, not the one that failed: it does not count.
    fn report_line(&mut self, line: &str) -> Option<LogEvent> {
        let r = self.report.as_mut()?;
        r.lines += 1;
        if r.lines > REPORT_LINES || line.contains("---[ end ") {
            self.report = None;
            return None;
        }
        if r.done
            || line.contains("Modules linked in")
            || crate::knowledge::linux::match_line(line).is_some_and(|(_, f)| f.report)
            || !crate::knowledge::linux::names_gpu_code(line)
        {
            return None;
        }
        r.done = true;
        Some(LogEvent::Kernel {
            event: r.family.clone(),
            bus_id: None,
            detail: Some(format!("{} ({})", r.head, clean(line))),
        })
    }

    /// The line after an API-mismatch line: it may carry the versions the first one lacked; the
    /// event is complete with the module's version, or two lines on.
    fn api_mismatch_continued(
        &mut self,
        line: &str,
        client: Option<String>,
        module: Option<String>,
        waited: u8,
    ) -> Option<LogEvent> {
        let client = client.or_else(|| version_after(line, "has the version").map(str::to_string));
        let module = module
            .or_else(|| {
                let i = line.find("kernel module has")?;
                version_after(line.get(i..)?, "the version").map(str::to_string)
            })
            .or_else(|| {
                // "NVRM: the version 550.54.14.  Please make sure …" on its own line.
                let i = line.find("NVRM: the version")?;
                version_after(line.get(i..)?, "the version").map(str::to_string)
            });
        if module.is_some() || waited >= 2 {
            return Some(LogEvent::ApiMismatch {
                client_version: client,
                module_version: module,
            });
        }
        self.api = Some((client, module, waited + 1));
        None
    }
}

/// "RmInitAdapter failed! (0x22:0x56:884)" / "rm_init_adapter failed": the driver could not
/// initialise the GPU, with its code; NV_ERR_NOT_SUPPORTED (nvstatuscodes.h) is the driver
/// refusing the GPU as the system presents it (a BAR too small, a mode it does not support).
fn rm_init_failed(line: &str) -> LogEvent {
    let code = line
        .find("RmInitAdapter failed! (")
        .and_then(|i| line.get(i + "RmInitAdapter failed! (".len()..))
        .and_then(|r| r.split(')').next())
        .map(clean);
    let refused = code.as_deref().is_some_and(|c| {
        crate::knowledge::kernel::rm_init_codes(c)
            .1
            .is_some_and(|s| s.name == "NV_ERR_NOT_SUPPORTED")
    });
    if refused {
        return LogEvent::Kernel {
            event: "rm_init_not_supported".into(),
            bus_id: gpu_prefix_bus(line),
            detail: code,
        };
    }
    LogEvent::RmInitAdapterFailed {
        bus_id: gpu_prefix_bus(line),
        code,
    }
}

/// A PCIe AER error at byte `i` of the line, with its severity and the device it names.
fn pcie_aer(line: &str, i: usize) -> LogEvent {
    let r = line
        .get(i + "PCIe Bus Error: severity=".len()..)
        .unwrap_or("");
    let severity = clean(r.split(',').next().unwrap_or(""));
    // "pcieport 0000:00:01.0: …" or "nvidia 0000:17:00.0: …" before the message.
    let device = line
        .get(..i)
        .unwrap_or("")
        .split_whitespace()
        .rev()
        .find_map(|w| norm_bus_id(w.trim_end_matches(':')));
    LogEvent::PcieAer { severity, device }
}

/// Event Viewer text pasted into `explain --log`: Display 4101 (the word before "successfully"
/// varies: "has recovered" / "has successfully recovered") and nvlddmkm 153.
fn display_driver_reset(line: &str) -> Option<LogEvent> {
    if let Some(i) = line.find("Display driver ") {
        let r = line.get(i + "Display driver ".len()..).unwrap_or("");
        if let Some((driver, _)) = r.split_once(" stopped responding and has") {
            let driver = driver.trim();
            return Some(LogEvent::DisplayDriverReset {
                device: (!driver.is_empty() && !driver.contains(' ')).then(|| clean(driver)),
            });
        }
    }
    if line.contains("TDR occurred on GPUID") {
        return Some(LogEvent::DisplayDriverReset { device: None });
    }
    None
}

/// Parses a whole text (tests, small logs).
pub fn parse_all(text: &str) -> Vec<LogEvent> {
    let mut p = LogParser::new();
    text.lines().filter_map(|l| p.feed(l)).collect()
}

#[cfg(test)]
#[path = "logparse_tests.rs"]
mod tests;
