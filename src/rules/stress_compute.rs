//! `stress.compute`: wrong results of the compute burn (the FMA rotation, or GEMM results that
//! differ between iterations), and a GPU much slower than the others.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "stress.compute",
        category: Category::StressFailure,
        area: Area::Stress,
        summary: "Wrong results, or a slow GPU, under the compute burn",
    },
    check,
};

/// A GPU below this fraction of the median FMA rate is slow (DCGM's diagnostic compares GPUs
/// with each other, anchors.md §1; 0.85 leaves room for normal spread between boards).
pub const SLOW_FRACTION: f64 = 0.85;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = &ctx.snap.stress else {
        return Vec::new();
    };
    if !run.tests.iter().any(|t| t == "compute") {
        return Vec::new();
    }
    let mut rates: Vec<f64> = run.gpus.iter().filter_map(|g| g.fma_gflops).collect();
    rates.sort_by(|a, b| a.total_cmp(b));
    let median = rates.get(rates.len() / 2).copied();
    let mut out = Vec::new();
    for g in &run.gpus {
        let on = |f: Finding| match g.index {
            Some(i) => f.on_gpu(i),
            None => f,
        };
        if g.compute_errors > 0 || g.gemm_errors > 0 {
            out.push(on(doc
                .finding(
                    Severity::Error,
                    format!("{}: wrong compute results ({} FMA threads, {} GEMM elements)", g.label(), g.compute_errors, g.gemm_errors),
                    format!("Over {} FMA launches and {} GEMMs ({}), results differed from the known answer (FMA) or from the first result of the same GEMM (tolerance 1e-3).", g.compute_launches, g.gemm_launches, g.gemm_types.join(", ")),
                )
                .fix("Drain the GPU and have it replaced; a GPU that computes wrong cannot be trusted with training:", &["sudo dmesg | grep -E 'NVRM|Xid' | tail -20"])
                .evidence(json!({"fma_errors": g.compute_errors, "gemm_errors": g.gemm_errors}))));
        }
        if let (Some(r), Some(m)) = (g.fma_gflops, median) {
            if rates.len() >= 2 && r < SLOW_FRACTION * m {
                out.push(on(doc
                    .finding(
                        Severity::Warning,
                        format!("{}: {:.0} GFLOP/s, {:.0} % of the median GPU", g.label(), r, 100.0 * r / m),
                        "This GPU computes much slower than the others in the same run: it is throttling (heat, power) or degraded.".to_string(),
                    )
                    .fix("Look at its clocks, temperature and power under load:", &["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"])
                    .evidence(json!({"fma_gflops": r, "median": m}))));
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "stress_compute_tests.rs"]
pub(super) mod tests;
