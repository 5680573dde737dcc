//! `gpu.memory-held`: other processes hold a large share of a GPU's memory.

use serde_json::json;

use super::{gib, Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

/// JAX preallocates 75 % of GPU memory by default (XLA_PYTHON_CLIENT_MEM_FRACTION=.75,
/// https://docs.jax.dev/en/latest/gpu_memory_allocation.html): when less than that is free, a
/// default JAX job cannot start, and PyTorch/TensorFlow jobs sized for the card run out of memory.
const FREE_FRACTION_NEEDED: f64 = 0.75;

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "gpu.memory-held",
        category: Category::GpuMemoryExhausted,
        area: Area::Gpus,
        summary: "Other processes hold so much GPU memory that a new job will run out of memory",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some(m) = g.memory.get() else { continue };
        if m.total_bytes == 0 {
            continue;
        }
        let free_frac = m.free_bytes as f64 / m.total_bytes as f64;
        let procs = g.processes.get().cloned().unwrap_or_default();
        if free_frac >= FREE_FRACTION_NEEDED || procs.is_empty() {
            continue;
        }
        let named: Vec<String> = procs
            .iter()
            .map(|p| {
                format!(
                    "PID {} ({}) holds {}",
                    p.pid,
                    p.name.as_deref().unwrap_or("name unknown"),
                    p.used_bytes
                        .map(gib)
                        .unwrap_or_else(|| "an unknown amount".to_string())
                )
            })
            .collect();
        let pids: Vec<String> = procs.iter().map(|p| p.pid.to_string()).collect();
        out.push(
            doc.finding(
                Severity::Warning,
                format!(
                    "{}: only {} of {} free; other processes hold the rest",
                    g.label(),
                    gib(m.free_bytes),
                    gib(m.total_bytes)
                ),
                format!("{}.", named.join("; ")),
            )
            .fix_owned(
                "Stop the processes if they are yours and finished (check first with ps):",
                vec![format!("ps -o pid,user,etime,cmd -p {}", pids.join(",")), format!("kill {}", pids.join(" "))],
            )
            .evidence(json!({"total_bytes": m.total_bytes, "free_bytes": m.free_bytes, "used_bytes": m.used_bytes, "processes": procs}))
            .on_gpu(g.index)
            .link("https://docs.jax.dev/en/latest/gpu_memory_allocation.html"),
        );
    }
    out
}

#[cfg(test)]
#[path = "gpu_memory_held_tests.rs"]
pub(super) mod tests;
