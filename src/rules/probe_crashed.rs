//! `probe.crashed`: a driver library crashed, aborted or exited inside a probe's helper process.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "probe.crashed",
        category: Category::DriverFault,
        area: Area::Driver,
        summary: "A driver library (NVML) crashed, aborted or exited while it was probed",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    ctx.snap
        .probes
        .iter()
        .filter(|p| p.outcome == "crash")
        .map(|p| {
            let at = p.stuck_in.as_ref().map(|c| format!(" in {c}")).unwrap_or_default();
            let what = if p.name == "nvml" { "NVML" } else { p.name.as_str() };
            doc.finding(
                Severity::Error,
                format!("The {what} library crashed{at}"),
                format!(
                    "{}. Every program that calls it (nvidia-smi, DCGM, the frameworks) is likely to fail the same way.",
                    p.detail.as_deref().unwrap_or("its helper process ended without an answer")
                ),
            )
            .fix(
                "Look for driver errors in the kernel log, compare the library with the loaded module, and reinstall the driver or reboot:",
                &[
                    "sudo dmesg | grep -E 'NVRM|Xid' | tail -20",
                    "cat /proc/driver/nvidia/version",
                    "nvidia-smi",
                ],
            )
            .evidence(json!(p))
        })
        .collect()
}

#[cfg(test)]
#[path = "probe_crashed_tests.rs"]
pub(super) mod tests;
