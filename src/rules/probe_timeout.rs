//! `probe.timeout`: a probe did not finish before its deadline, or failed internally.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "probe.timeout",
        category: Category::ProbeTimeout,
        area: Area::Driver,
        summary: "A probe did not answer before its deadline (a wedged driver or file system)",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    ctx.snap
        .probes
        .iter()
        .filter(|p| p.outcome != "ok" && p.outcome != "crash")
        .map(|p| {
            if p.outcome == "timeout" && p.name.starts_with(DEEP_IMPORT) {
                return deep_import(doc, p);
            }
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

/// How the probe names a `--deep` import (src/probe/mod.rs).
const DEEP_IMPORT: &str = "deep import in ";

/// A `--deep` import that missed its deadline: a slow first import (cold caches, a network file
/// system, CUDA initialising every GPU) more often than a fault, so the fix is more time.
fn deep_import(doc: &RuleDoc, p: &crate::snapshot::ProbeRun) -> Finding {
    let env = p.name.trim_start_matches(DEEP_IMPORT);
    let secs = p.millis as f64 / 1000.0;
    // Three times what it had, in whole tens of seconds, within --timeout's limit.
    let more = (((secs * 3.0) / 10.0).ceil() * 10.0).clamp(30.0, 3600.0) as u64;
    let mut f = doc
        .finding(
            Severity::Warning,
            format!("Importing the frameworks in {env} timed out after {secs:.1} s"),
            "--deep imports torch, tensorflow and jax in each Python environment \
            under --timeout; this import did not finish, so what it would have \
            shown (torch.cuda.is_available(), the architectures the build has, the \
            cuDNN it loads) is unknown. A first import after boot or on a network \
            file system can take tens of seconds; one that never finishes hangs in \
            CUDA initialisation (then check the kernel log)."
                .to_string(),
        )
        .fix_owned(
            format!("Give the imports more time with --timeout {more} (seconds, at most 3600):"),
            vec![format!("gpudoctor check --deep --timeout {more}")],
        )
        .evidence(json!(p));
    // Shown under the frameworks it was importing, not under the driver.
    f.area = Area::Frameworks;
    f
}

#[cfg(test)]
#[path = "probe_timeout_tests.rs"]
pub(super) mod tests;
