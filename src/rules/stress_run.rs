//! `stress.run`: the stress test could not start, a GPU's test stopped on a CUDA error, or the
//! run was interrupted.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::snapshot::category_of;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "stress.run",
        category: Category::StressFailure,
        area: Area::Stress,
        summary: "The stress test could not run on a GPU, or was interrupted",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = &ctx.snap.stress else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(e) = &run.error {
        let (category, title, fix, cmds): (Category, String, &str, Vec<String>) = if e.call
            == "dlopen libcuda"
        {
            (
                Category::DriverMissing,
                "No NVIDIA driver: the stress test cannot run".into(),
                "Install the NVIDIA driver (gpudoctor check says what is missing), or run in a container started with GPU access:",
                vec!["gpudoctor check".into()],
            )
        } else {
            (
                category_of(e),
                format!(
                    "The CUDA driver could not be initialised ({})",
                    if e.name.is_empty() { &e.call } else { &e.name }
                ),
                "Run gpudoctor check for the cause:",
                vec!["gpudoctor check".into()],
            )
        };
        let mut f = doc
            .finding(Severity::Error, title, e.to_string())
            .fix_owned(fix, cmds)
            .evidence(json!({"error": e}));
        f.category = category;
        out.push(f);
        return out;
    }
    if run.gpus.is_empty() {
        out.push(
            doc.finding(Severity::Error, "No GPU was stress-tested", "The driver listed no CUDA device (or none matched --gpu).")
                .fix("Check that the GPUs are visible (CUDA_VISIBLE_DEVICES, the container's GPU access):", &["gpudoctor check"]),
        );
    }
    for g in &run.gpus {
        if let Some(e) = &g.failure {
            let mut f = doc
                .finding(
                    Severity::Error,
                    format!(
                        "{}: the stress test stopped: {}",
                        g.label(),
                        if e.name.is_empty() {
                            e.call.as_str()
                        } else {
                            e.name.as_str()
                        }
                    ),
                    e.to_string(),
                )
                .fix(
                    "Look for Xid errors in the kernel log and reset the GPU before trusting it:",
                    &[
                        "sudo dmesg | grep -E 'NVRM|Xid' | tail -20",
                        "gpudoctor check",
                    ],
                )
                .evidence(json!({"error": e}));
            // The stress kernels are gpudoctor's own, known good: a code that blames the
            // program (application_error) says here that the GPU did not run them.
            let c = category_of(e);
            f.category = if matches!(c, Category::SmokeFailure | Category::ApplicationError) {
                Category::StressFailure
            } else {
                c
            };
            if let Some(i) = g.index {
                f = f.on_gpu(i);
            }
            out.push(f);
        }
    }
    if let Some(sig) = &run.interrupted_by {
        out.push(
            doc.finding(
                Severity::Warning,
                format!("Interrupted by {sig} after {:.0} of {:.0} s: the results are partial", run.seconds, run.planned_seconds),
                "The GPUs were tested for less time than asked; a fault that needs longer to show may have been missed.",
            )
            .fix("Run the whole test again when the machine is free:", &[]),
        );
    }
    out
}

#[cfg(test)]
#[path = "stress_run_tests.rs"]
pub(super) mod tests;
