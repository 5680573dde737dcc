//! `health.nvlink`: NVLink links down while others are up, and CRC error rates above DCGM's
//! threshold (anchors.md §1.2: NVLink CRC errors matter at 100 a second).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.nvlink",
        category: Category::HardwareFault,
        area: Area::Gpus,
        summary: "NVLink links down while others are up, or NVLink CRC errors at a high rate",
    },
    check,
};

/// DCGM_LIMIT NVLink CRC errors per second (common/DcgmGPUHardwareLimits.h).
const CRC_PER_SECOND: f64 = 100.0;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some(h) = g.health.get() else { continue };
        let up: Vec<u32> = h
            .nvlinks
            .iter()
            .filter(|l| l.active)
            .map(|l| l.link)
            .collect();
        let down: Vec<u32> = h
            .nvlinks
            .iter()
            .filter(|l| !l.active)
            .map(|l| l.link)
            .collect();
        if !up.is_empty() && !down.is_empty() {
            out.push(
                doc.finding(Severity::Warning, format!("{}: NVLink link(s) {} down, {} up", g.label(), list(&down), up.len()),
                    "Some NVLink links of this GPU are inactive while others work: peer-to-peer traffic loses bandwidth or falls back to PCIe.".to_string())
                    .fix("Inspect the links and reset the GPU:", &["nvidia-smi nvlink -s", "nvidia-smi nvlink -e"])
                    .evidence(json!({"down": down, "up": up}))
                    .on_gpu(g.index),
            );
        }
        if let Some(secs) = ctx.snap.uptime_seconds.filter(|s| *s > 0.0) {
            for l in &h.nvlinks {
                let crc = l.crc_errors.unwrap_or(0) as f64;
                if crc / secs >= CRC_PER_SECOND {
                    out.push(
                        doc.finding(Severity::Warning, format!("{}: NVLink {} CRC errors at {:.0}/s or more", g.label(), l.link, crc / secs),
                            format!("{crc:.0} CRC errors since boot on link {} exceed DCGM's {CRC_PER_SECOND:.0} a second.", l.link))
                            .fix("Reset the GPU; if it persists, have the NVLink hardware checked.", &["nvidia-smi nvlink -e"])
                            .evidence(json!({"link": l}))
                            .on_gpu(g.index),
                    );
                }
            }
        }
    }
    out
}

fn list(v: &[u32]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "health_nvlink_tests.rs"]
pub(super) mod tests;
