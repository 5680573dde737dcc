//! `health.pcie`: a PCIe link below its generation or width while the GPU is busy, and a PCIe
//! replay rate above DCGM's limit (../shared/reference/faults.md §5).

use serde_json::json;

use super::health_throttle::busy;
use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.pcie",
        category: Category::PcieDegraded,
        area: Area::Gpus,
        summary: "PCIe link below its generation or width under load, or too many PCIe replays",
    },
    check,
};

/// DCGM health: replays per lane per minute by generation (BER 1e-12), faults.md §5.
fn replays_per_lane_per_minute(gen: u32) -> Option<f64> {
    match gen {
        1 => Some(0.15),
        2 => Some(0.3),
        3 => Some(0.48),
        4 => Some(0.96),
        5 => Some(1.92),
        6 => Some(3.84),
        _ => None,
    }
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some(h) = g.health.get() else { continue };
        let Some(link) = g.pcie.get() else { continue };
        if busy(h) {
            if let (Some(w), Some(mw)) = (link.width, link.max_width) {
                if w < mw {
                    out.push(
                        doc.finding(Severity::Error, format!("{}: PCIe link at x{w} of x{mw} under load", g.label()),
                            format!("The link runs {w} of its {mw} lanes while the GPU is busy: host-device bandwidth is cut to {:.0}%. Lanes are lost to a bad seat, riser, slot or BIOS setting.", 100.0 * f64::from(w) / f64::from(mw)))
                            .fix("Reseat the GPU and riser; check the slot's bifurcation setting in the BIOS:", &["sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'"])
                            .evidence(json!({"pcie": link, "utilization_gpu": h.utilization_gpu}))
                            .on_gpu(g.index),
                    );
                }
            }
            if let (Some(gen), Some(mg)) = (link.gen, link.max_gen) {
                if gen < mg {
                    out.push(
                        doc.finding(Severity::Warning, format!("{}: PCIe gen{gen} of gen{mg} under load", g.label()),
                            format!("The link trained to generation {gen} although both ends support {mg}, while the GPU is busy."))
                            .fix("Check the slot's generation setting in the BIOS and reseat the GPU:", &["sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'"])
                            .evidence(json!({"pcie": link, "utilization_gpu": h.utilization_gpu}))
                            .on_gpu(g.index),
                    );
                }
            }
        }
        // Replays counted since the driver loaded, at most since boot: replays / uptime is a
        // lower bound of the rate, so exceeding the limit with it is certain.
        if let (Some(replays), Some(up), Some(gen), Some(w)) = (
            h.pcie_replays,
            ctx.snap.uptime_seconds,
            link.max_gen.or(link.gen),
            link.width.or(link.max_width),
        ) {
            if let Some(per_lane) = replays_per_lane_per_minute(gen) {
                let limit = (per_lane * f64::from(w)).ceil();
                let minutes = (up / 60.0).max(1.0);
                let rate = replays as f64 / minutes;
                if rate > limit {
                    out.push(
                        doc.finding(Severity::Warning, format!("{}: {replays} PCIe replays, at least {rate:.1} a minute", g.label()),
                            format!("Averaged over the {:.0} minutes since boot, the replay rate exceeds DCGM's limit for a gen{gen} x{w} link ({limit:.0} a minute): the link is marginal.", minutes))
                            .fix("Reseat the card, check risers and cables, and run the system's PCIe diagnostics.", &["nvidia-smi -q -d PCIE"])
                            .evidence(json!({"replays": replays, "uptime_seconds": up, "rate_per_minute_at_least": rate, "limit_per_minute": limit}))
                            .on_gpu(g.index),
                    );
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "health_pcie_tests.rs"]
pub(super) mod tests;
