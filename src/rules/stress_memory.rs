//! `stress.memory`: words of GPU memory that read back wrong under the pattern test, the
//! coverage of free memory, and whether every injected bit flip was found.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "stress.memory",
        category: Category::StressFailure,
        area: Area::Stress,
        summary: "GPU memory read back wrong under memtest patterns",
    },
    check,
};

/// The coverage of free memory the stress issue and design.md ask for.
pub const MIN_COVERAGE: f64 = 0.95;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = &ctx.snap.stress else {
        return Vec::new();
    };
    if !run.tests.iter().any(|t| t == "memory") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for g in run
        .gpus
        .iter()
        .filter(|g| g.failure.is_none() || g.memory_errors > 0)
    {
        let on = |f: Finding| match g.index {
            Some(i) => f.on_gpu(i),
            None => f,
        };
        // Flips that --inject-faults wrote itself and found again are the self-test, not the GPU.
        let real_errors = g.memory_errors.saturating_sub(g.injected_found);
        if real_errors > 0 {
            out.push(on(wrong_words(doc, g, real_errors)));
        }
        if g.injected_flips > 0 {
            let all = g.injected_found == g.injected_flips;
            out.push(on(doc.finding(
                if all { Severity::Info } else { Severity::Error },
                format!("{}: {} of {} injected bit flips found at their address", g.label(), g.injected_found, g.injected_flips),
                if all { "--inject-faults: every flip written between fill and verify was reported with its address and bit.".to_string() } else { "--inject-faults: the test missed flips it was given; its results cannot be trusted.".to_string() },
            )));
        }
        // A run that ended before one full round has not verified every pattern: it must not
        // pass silently (a 3-second run used to pass with 0 rounds).
        if g.failure.is_none() && g.tested_bytes > 0 && g.memory_rounds == 0 {
            let gpu_arg = g.index.map(|i| format!(" --gpu {i}")).unwrap_or_default();
            let mut f = doc.finding(
                Severity::Warning,
                format!("{}: the memory test did not complete a round", g.label()),
                format!(
                    "The run ended after {:.1} s, before one round of the patterns (four moving inversions, twelve passes over {:.2} GiB) was done: the memory was not fully tested.",
                    run.seconds,
                    g.tested_bytes as f64 / (1u64 << 30) as f64
                ),
            )
            .fix_owned(
                "Run the stress test longer (--minutes; a round takes seconds on a healthy GPU):",
                vec![format!("gpudoctor stress --minutes 5{gpu_arg}")],
            )
            .evidence(json!({"memory_rounds": 0, "seconds": run.seconds, "tested_bytes": g.tested_bytes}));
            f.category = Category::Configuration;
            out.push(on(f));
        }
        if g.free_bytes > 0 && g.failure.is_none() {
            let cov = g.tested_bytes as f64 / g.free_bytes as f64;
            if cov < MIN_COVERAGE {
                out.push(on(doc.finding(
                    Severity::Info,
                    format!("{}: the pattern test covered {:.1} % of free memory", g.label(), 100.0 * cov),
                    format!("{:.2} of {:.2} GiB free at the start could be allocated (other processes, or --memory-fraction).", g.tested_bytes as f64 / (1u64 << 30) as f64, g.free_bytes as f64 / (1u64 << 30) as f64),
                )));
            }
        }
    }
    out
}

/// Memory words that read back wrong (beyond the flips --inject-faults wrote), with the first
/// few of them.
fn wrong_words(doc: &RuleDoc, g: &crate::snapshot::StressGpu, real_errors: u64) -> Finding {
    // Commands that name the GPU need its NVML index (nvidia-smi -i, stress --gpu), not the
    // CUDA ordinal; without one they are left out rather than guessed.
    let gpu_cmds = |f: &dyn Fn(u32) -> String| g.index.map(f).into_iter();
    let first: Vec<String> = g
        .first_memory_errors
        .iter()
        .take(4)
        .map(|e| {
            format!(
                "chunk {} offset {:#x}: expected {:#010x}, read {:#010x} (bits {:#010x}, {})",
                e.chunk, e.offset, e.expected, e.actual, e.flipped_bits, e.pattern
            )
        })
        .collect();
    doc.finding(
        Severity::Error,
        format!(
            "{}: {} memory word(s) read back wrong",
            g.label(),
            real_errors
        ),
        format!(
            "Over {} round(s) of {:.1} GiB: {}",
            g.memory_rounds,
            g.tested_bytes as f64 / (1u64 << 30) as f64,
            first.join("; ")
        ),
    )
    .fix_owned(
        "Drain the GPU, check row remapping and ECC, reset it and test again; \
                replace it if errors recur:",
        gpu_cmds(&|i| format!("nvidia-smi -q -d ROW_REMAPPER,ECC -i {i}"))
            .chain(gpu_cmds(&|i| format!("sudo nvidia-smi -r -i {i}")))
            .chain(gpu_cmds(&|i| {
                format!("gpudoctor stress --minutes 5 --gpu {i}")
            }))
            .collect(),
    )
    .evidence(json!({"errors": g.memory_errors, "first": g.first_memory_errors}))
}

#[cfg(test)]
#[path = "stress_memory_tests.rs"]
pub(super) mod tests;
