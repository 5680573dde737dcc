//! `smoke.pcie-bandwidth`: host-device copy rates, measured by the smoke tests with pinned
//! memory, far below what the GPU's PCIe link carries.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "smoke.pcie-bandwidth",
        category: Category::PcieDegraded,
        area: Area::Smoke,
        summary: "Pinned host-device copies far below the PCIe link's rate",
    },
    check,
};

/// Data rate of one lane after line encoding, in GB/s (10^9 bytes/s): 8b/10b for gen 1-2,
/// 128b/130b for gen 3-5, and gen 6 at 64 GT/s (PCI-SIG; https://pcisig.com/specifications).
pub fn lane_gbps(gen: u32) -> Option<f64> {
    match gen {
        1 => Some(0.25),
        2 => Some(0.5),
        3 => Some(8.0 * 128.0 / 130.0 / 8.0),
        4 => Some(16.0 * 128.0 / 130.0 / 8.0),
        5 => Some(32.0 * 128.0 / 130.0 / 8.0),
        6 => Some(64.0 * 242.0 / 256.0 / 8.0),
        _ => None,
    }
}

/// Below this fraction of the link's rate a copy is "far below" it. Healthy pinned copies
/// reach 0.75-0.85 (Azure NHC: 48-52 GB/s on H100 gen5 x16, ../shared/reference/anchors.md;
/// DCGM judges bandwidth at 0.75 of a reference): half of the rate leaves room for the small
/// 64 MiB transfers of the smoke test.
pub const MIN_FRACTION: f64 = 0.5;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = ctx.snap.smoke.get() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sg in &run.gpus {
        let (Some(index), Some(h2d), Some(d2h)) = (sg.index, sg.h2d_gbps, sg.d2h_gbps) else {
            continue;
        };
        let Some(g) = ctx.snap.gpu_list().iter().find(|g| g.index == index) else {
            continue;
        };
        let Some(link) = g.pcie.get() else { continue };
        let (Some(gen), Some(width)) = (link.max_gen.or(link.gen), link.max_width.or(link.width))
        else {
            continue;
        };
        let Some(lane) = lane_gbps(gen).filter(|_| gen >= 3) else {
            continue;
        };
        let rate = lane * f64::from(width);
        let worst = h2d.min(d2h);
        if worst < MIN_FRACTION * rate {
            out.push(
                doc.finding(
                    Severity::Warning,
                    format!("{}: host-device copies at {worst:.1} GB/s on a gen{gen} x{width} link ({rate:.1} GB/s)", g.label()),
                    format!("Pinned copies of 64 MiB ran at {h2d:.1} GB/s to the GPU and {d2h:.1} GB/s back: {:.0} % of the link's data rate, where healthy links reach 75-85 %. Data loading and any traffic over PCIe are slowed as much.", 100.0 * worst / rate),
                )
                .fix("Look at the link while the GPU is busy (LnkSta should equal LnkCap), reseat the GPU and check the slot's BIOS settings:", &["sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'"])
                .evidence(json!({"h2d_gbps": h2d, "d2h_gbps": d2h, "link_gbps": rate, "pcie": link}))
                .on_gpu(index),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "smoke_pcie_tests.rs"]
pub(super) mod tests;
