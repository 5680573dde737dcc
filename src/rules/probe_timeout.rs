//! `probe.timeout`: a probe did not finish before its deadline, or failed internally.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::report::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "probe.timeout",
        category: Category::ProbeTimeout,
        area: Area::Driver,
        summary: "A probe did not answer before its deadline (a wedged driver or file system)",
        what: "Records every probe that missed its deadline (--timeout) or failed internally.",
        why: "A driver that hangs in NVML or /proc reads is itself a fault: nvidia-smi hangs the same way. What the probe would have found is unknown ([?]).",
        fix: "Look at the kernel log for NVRM and Xid messages; a GPU that hangs the driver usually needs a reset or a reboot.",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    ctx.snap
        .probes
        .iter()
        .filter(|p| p.outcome != "ok" && p.outcome != "crash")
        .map(|p| {
            let (title, sev) = if p.outcome == "timeout" {
                let at = p.stuck_in.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
                (format!("Probing '{}' timed out after {} ms{at}", p.name, p.millis), Severity::Warning)
            } else {
                (format!("Probing '{}' failed internally", p.name), Severity::Warning)
            };
            doc.finding(
                sev,
                title,
                "What this probe would have found is unknown. A hang in the driver is often a sign of a GPU that needs a reset.".to_string(),
            )
            .fix("Look for driver errors in the kernel log:", &["sudo dmesg | grep -E 'NVRM|Xid' | tail -20"])
            .evidence(json!(p))
        })
        .collect()
}
