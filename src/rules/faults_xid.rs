//! `faults.xid`: Xid errors in the kernel log, with NVIDIA's meaning, a severity, the action to
//! take, the GPU they belong to (by PCI bus id) and how often they repeated.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::logparse::{norm_bus_id, LogEvent};
use crate::faults::xid::{lookup, recovery_action, Level};
use crate::vocab::{Area, Category, Finding};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "faults.xid",
        category: Category::HardwareFault,
        area: Area::Gpus,
        summary: "Xid errors in the kernel log, with NVIDIA's meaning and the action to take",
    },
    check,
};

const CATALOG: &str = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(log) = ctx.snap.kernel_log.get() else {
        return Vec::new();
    };
    let gpus: Vec<(u32, String, String)> = ctx
        .snap
        .gpu_list()
        .iter()
        .filter_map(|g| Some((g.index, norm_bus_id(g.pci_bus_id.get()?)?, g.label())))
        .collect();
    let mut out = Vec::new();
    for e in &log.events {
        let LogEvent::Xid {
            xid,
            bus_id,
            caused_by,
            fatal,
            recovery_action: action,
            pid,
            process,
            ..
        } = &e.event
        else {
            continue;
        };
        let gpu = bus_id
            .as_ref()
            .and_then(|b| gpus.iter().find(|(_, gb, _)| gb == b));
        let where_ = match (gpu, bus_id) {
            (Some((_, _, label)), _) => label.clone(),
            (None, Some(b)) => format!("the GPU at {b}"),
            (None, None) => "a GPU".to_string(),
        };
        let times = if e.count == 1 {
            format!("once in the last {} h", log.window_hours)
        } else {
            format!("{} times in the last {} h", e.count, log.window_hours)
        };
        let (name, meaning, category, mut level, action_text) = match lookup(*xid) {
            Some(i) => (
                i.name.as_str(),
                i.meaning.as_str(),
                i.category,
                i.level,
                i.action.clone(),
            ),
            None => (
                "UNKNOWN",
                "an Xid that is not in the catalog gpudoctor knows",
                Category::DriverFault,
                Level::Warn,
                "look it up in NVIDIA's Xid catalog; update gpudoctor".to_string(),
            ),
        };
        let mut action_text = action_text;
        if let Some(a) = action {
            let (what, l) = recovery_action(*a);
            level = l;
            action_text = format!("the driver now asks for: {what}");
        }
        if *fatal == Some(true) {
            level = Level::Crit;
        }
        if let Some(prev) = caused_by {
            level = level.min(Level::Info);
            action_text = format!("it was caused by a previous Xid {prev}: act on that one");
        }
        let who = match (pid, process) {
            (Some(p), Some(n)) => format!(" It hit process {n} (PID {p})."),
            (Some(p), None) => format!(" It hit PID {p}."),
            _ => String::new(),
        };
        let mut f = doc
            .finding(
                level.severity(),
                format!("Xid {xid} ({name}) on {where_}, {times}"),
                format!("{}: {meaning}.{who} Kernel log: {}", capital(meaning_lead(category)), e.first_line),
            )
            .fix_owned(format!("{}.", capital(&action_text)), vec!["sudo dmesg -T | grep -E 'NVRM: Xid' | tail -20".to_string()])
            .evidence(json!({"xid": xid, "name": name, "count": e.count, "bus_id": bus_id, "window_hours": log.window_hours, "line": e.first_line, "source": log.source}))
            .link(CATALOG);
        f.category = category;
        if let Some((i, _, _)) = gpu {
            f = f.on_gpu(*i);
        }
        out.push(f);
    }
    out
}

/// What kind of fault the Xid's category (knowledge/xid.yaml) makes it.
fn meaning_lead(c: Category) -> &'static str {
    match c {
        Category::ApplicationError => "usually an application problem",
        Category::EccMemory => "GPU memory",
        Category::HardwareFault => "the GPU hardware",
        Category::DriverFault => "the driver or its GPU firmware",
        Category::PcieDegraded => "the PCIe bus",
        Category::ThermalPower => "power or cooling",
        _ => "NVIDIA's catalog",
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "faults_xid_tests.rs"]
pub(super) mod tests;
