//! `faults.kernel-log`: the other GPU-related kernel log lines: a GPU fallen off the bus,
//! RmInitAdapter failures, API (driver/library) mismatches, nouveau holding the GPU, GPUs the
//! driver does not support, unsigned modules under Secure Boot, PCIe AER errors, the OOM killer
//! and NVSwitch SXids (../shared/reference/faults.md §2c); on Windows, where the System event log
//! stands for the kernel log (`probe::windows::eventlog`), the display driver's TDR resets. What
//! each event means, its category, severity and fix are data: knowledge/kernel-events.yaml
//! ([`crate::knowledge::kernel`]), which `explain` and `run` read too.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::logparse::{norm_bus_id, LogEvent};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "faults.kernel-log",
        category: Category::DriverFault,
        area: Area::Driver,
        summary: "NVIDIA driver, PCIe and OOM-killer messages in the kernel log",
    },
    check,
};

/// DCGM's AER threshold: 480 errors (32 a minute over 15 minutes; anchors.md §1.3,
/// nvvs/plugin_src/pcie).
const AER_CORRECTED_THRESHOLD: u64 = 480;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(log) = ctx.snap.kernel_log.get() else {
        return Vec::new();
    };
    let has_xid79 = |b: &Option<String>| {
        log.events.iter().any(|e| matches!(&e.event, LogEvent::Xid { xid: 79, bus_id, .. } if bus_id == b || b.is_none()))
    };
    let gpu_of = |b: &Option<String>| -> Option<u32> {
        let b = b.as_ref()?;
        ctx.snap
            .gpu_list()
            .iter()
            .find(|g| g.pci_bus_id.get().and_then(|x| norm_bus_id(x)).as_ref() == Some(b))
            .map(|g| g.index)
    };
    let label = if log.from_event_log() {
        "System event log"
    } else {
        "Kernel log"
    };
    let mut out = Vec::new();
    for e in &log.events {
        let times = if e.count == 1 {
            String::new()
        } else {
            format!(" ({} times)", e.count)
        };
        if matches!(e.event, LogEvent::Xid { .. }) {
            continue;
        }
        if let LogEvent::FallenOffBus { bus_id } = &e.event {
            if has_xid79(bus_id) {
                continue;
            }
        }
        // The event's text, category, severity and fix: knowledge/kernel-events.yaml.
        let Some((k, title, text)) = crate::knowledge::kernel::describe(&e.event) else {
            continue;
        };
        let mut sev = k.severity;
        let mut detail = text;
        if let LogEvent::PcieAer { severity, .. } = &e.event {
            let uncorrected = severity.starts_with("Uncorrected");
            if !uncorrected && e.count < AER_CORRECTED_THRESHOLD {
                continue;
            }
            sev = if uncorrected {
                Severity::Error
            } else {
                Severity::Warning
            };
            detail =
                format!(
                "The kernel's AER driver logged {} {severity} PCIe error(s) in the last {} h{}.",
                e.count,
                log.window_hours,
                if uncorrected { "" } else { ", above DCGM's threshold of 480" }
            );
        }
        let bus = match &e.event {
            LogEvent::FallenOffBus { bus_id }
            | LogEvent::RmInitAdapterFailed { bus_id, .. }
            | LogEvent::Kernel { bus_id, .. } => bus_id.clone(),
            LogEvent::PcieAer { device, .. } => device.clone(),
            _ => None,
        };
        let at = match (&e.event, &bus) {
            (LogEvent::PcieAer { .. }, Some(b)) => format!(" at {b}"),
            (LogEvent::PcieAer { .. } | LogEvent::OomKill { .. }, None) => String::new(),
            (_, Some(b)) if !title.contains(b.as_str()) => format!(" ({b})"),
            _ => String::new(),
        };
        let title = format!("{title}{at}{times}");
        let cmds: Vec<&str> = k.commands.iter().map(String::as_str).collect();
        let (cat, area) = (k.category, k.area);
        let mut f = doc
            .finding(sev, title, format!("{detail} {label}: {}", e.first_line))
            .fix(&k.fix, &cmds)
            .evidence(json!({"event": e.event, "kernel_event": k.id, "count": e.count, "line": e.first_line, "source": log.source}));
        f.category = cat;
        f.area = area;
        if let Some(g) = gpu_of(&bus) {
            f = f.on_gpu(g);
        }
        out.push(f);
    }
    out
}

#[cfg(test)]
#[path = "faults_kernel_log_tests.rs"]
pub(super) mod tests;
