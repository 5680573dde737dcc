//! `health.throttle`: clock slowdowns from heat or power under load, and temperatures at the
//! slowdown threshold (../shared/reference/faults.md §4; DCGM's diag failure mask).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.throttle",
        category: Category::ThermalPower,
        area: Area::Gpus,
        summary: "Clocks slowed by heat, power brake or hardware slowdown under load; temperature at the slowdown threshold",
    },
    check,
};

/// nvmlClocksEventReasons bits (NVML; faults.md §4).
const IDLE: u64 = 0x001;
const HW_SLOWDOWN: u64 = 0x008;
const SW_THERMAL: u64 = 0x020;
const HW_THERMAL: u64 = 0x040;
const HW_POWER_BRAKE: u64 = 0x080;

/// Busy: some utilisation, or P0 without the idle reason (faults.md §5: judge under load only).
pub fn busy(h: &crate::snapshot::GpuHealth) -> bool {
    h.utilization_gpu.is_some_and(|u| u > 0)
        || (h.pstate == Some(0) && h.clock_event_reasons.is_some_and(|r| r & IDLE == 0))
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some(h) = g.health.get() else { continue };
        if let Some(r) = h.clock_event_reasons {
            if busy(h) {
                let mut reasons = Vec::new();
                for (bit, name, sev) in [
                    (HW_THERMAL, "hardware thermal slowdown", Severity::Error),
                    (HW_POWER_BRAKE, "hardware power brake", Severity::Error),
                    (HW_SLOWDOWN, "hardware slowdown", Severity::Error),
                    (SW_THERMAL, "software thermal slowdown", Severity::Warning),
                ] {
                    if r & bit != 0 {
                        reasons.push((name, sev));
                    }
                }
                if let Some(worst) = reasons.iter().map(|(_, s)| *s).max() {
                    let names: Vec<&str> = reasons.iter().map(|(n, _)| *n).collect();
                    out.push(
                        doc.finding(worst, format!("{}: clocks held back by {} under load", g.label(), names.join(", ")),
                            format!("While the GPU was busy ({}% utilisation), NVML reported clock event reasons 0x{r:x}: {}. These cut clocks by half or more; DCGM's diagnostics fail a GPU on them.", h.utilization_gpu.unwrap_or(0), names.join(", ")))
                            .fix("Check cooling and power; watch it live:", &["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER", "nvidia-smi dmon -s pct"])
                            .evidence(json!({"clock_event_reasons": r, "utilization_gpu": h.utilization_gpu, "temperature_c": g.temperature_c.get()}))
                            .on_gpu(g.index)
                            .link("https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"),
                    );
                }
            }
        }
        if let (Some(t), Some(slow)) = (g.temperature_c.get(), h.temperature_slowdown_c) {
            if *t >= slow {
                out.push(
                    doc.finding(Severity::Warning, format!("{}: {t} °C, at or above its slowdown threshold of {slow} °C", g.label()),
                        format!("The GPU slows its clocks in hardware at {slow} °C{}.", h.temperature_shutdown_c.map(|s| format!(" and shuts down at {s} °C")).unwrap_or_default()))
                        .fix("Improve cooling: check fans, airflow and inlet temperature.", &["nvidia-smi -q -d TEMPERATURE"])
                        .evidence(json!({"temperature_c": t, "slowdown_c": slow, "shutdown_c": h.temperature_shutdown_c}))
                        .on_gpu(g.index),
                );
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "health_throttle_tests.rs"]
pub(super) mod tests;
