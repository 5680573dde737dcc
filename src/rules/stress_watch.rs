//! `stress.watch`: what NVML showed while the GPUs were loaded: thermal and power slowdowns,
//! ECC errors and pending row remaps, PCIe replays and Xid events.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::xid;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "stress.watch",
        category: Category::ThermalPower,
        area: Area::Stress,
        summary: "Throttling, ECC errors, row remaps, PCIe replays or Xids during the stress test",
    },
    check,
};

/// The finding, about GPU `g` where its NVML index is known.
fn on(g: &crate::snapshot::StressGpu, f: Finding) -> Finding {
    match g.index {
        Some(i) => f.on_gpu(i),
        None => f,
    }
}

/// More replays than this during a stress run is a marginal link (DCGM's targeted_stress
/// `max_pcie_replays` 160, anchors.md §1).
pub const MAX_REPLAYS: u64 = 160;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = &ctx.snap.stress else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in &run.gpus {
        slowdowns(doc, g, &mut out);
        ecc_errors(doc, g, &mut out);
        pcie_replays(doc, g, &mut out);
        xids(doc, g, &mut out);
        unwatched(doc, g, &mut out);
    }
    out
}

/// Thermal, power-brake and other clock slowdowns seen under load.
fn slowdowns(doc: &RuleDoc, g: &crate::snapshot::StressGpu, out: &mut Vec<Finding>) {
    let w = &g.watch;
    for (name, sev, why) in [
        (
            "hw_thermal_slowdown",
            Severity::Error,
            "the GPU hit its hardware thermal limit and slowed down",
        ),
        (
            "hw_slowdown",
            Severity::Error,
            "hardware slowdown (thermal or power brake, or an external signal)",
        ),
        (
            "hw_power_brake_slowdown",
            Severity::Error,
            "the power brake slowed the GPU (the power supply asserted it)",
        ),
        (
            "sw_thermal_slowdown",
            Severity::Warning,
            "the driver slowed the GPU for temperature",
        ),
    ] {
        if let Some(n) = w.clock_events.get(name) {
            out.push(on(
                g,
                doc.finding(
                    sev,
                    format!(
                        "{}: {name} in {n} of {} samples under load",
                        g.label(),
                        w.samples
                    ),
                    format!(
                        "{why}; peak {} °C, {} W.",
                        w.max_temperature_c.map_or("?".into(), |t| t.to_string()),
                        w.max_power_w.map_or("?".into(), |p| format!("{p:.0}"))
                    ),
                )
                .fix(
                    "Check airflow, fans, the inlet temperature and the power supply:",
                    &["nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER"],
                )
                .evidence(json!({"watch": w})),
            ));
        }
    }
}

/// ECC errors and row remaps that came during the test.
fn ecc_errors(doc: &RuleDoc, g: &crate::snapshot::StressGpu, out: &mut Vec<Finding>) {
    let w = &g.watch;
    let mut ecc = |sev: Severity, title: String, detail: &str| {
        let mut f = on(g, doc
            .finding(sev, title, detail.to_string())
            .fix("Check ECC and row remapping; drain and reset the GPU, and replace it if it recurs:", &["nvidia-smi -q -d ECC,ROW_REMAPPER"])
            .evidence(json!({"watch": w})));
        f.category = Category::EccMemory;
        out.push(f);
    };
    if w.ecc_uncorrected_delta > 0 {
        ecc(
            Severity::Error,
            format!(
                "{}: {} uncorrectable ECC error(s) during the test",
                g.label(),
                w.ecc_uncorrected_delta
            ),
            "Uncorrectable errors corrupt data or end processes (Xid 48/94/95).",
        );
    }
    if w.remap_pending {
        ecc(
            Severity::Error,
            format!("{}: a row remap became pending during the test", g.label()),
            "The GPU needs a reset to apply it.",
        );
    }
    if w.ecc_corrected_delta > 0 {
        ecc(Severity::Info, format!("{}: {} corrected ECC error(s) during the test", g.label(), w.ecc_corrected_delta), "Corrected errors are handled by ECC; many of them often come before uncorrectable ones.");
    }
}

/// More PCIe replays than DCGM allows a stress run.
fn pcie_replays(doc: &RuleDoc, g: &crate::snapshot::StressGpu, out: &mut Vec<Finding>) {
    let w = &g.watch;
    if w.pcie_replay_delta > MAX_REPLAYS {
        let mut f = on(g, doc
            .finding(Severity::Warning, format!("{}: {} PCIe replays during the test", g.label(), w.pcie_replay_delta), format!("More than DCGM's limit of {MAX_REPLAYS} for a stress run: a marginal link (riser, slot, cable)."))
            .fix("Reseat the GPU and riser:", &["sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'"]));
        f.category = Category::PcieDegraded;
        out.push(f);
    }
}

/// Xid events during the test: from another process when gpudoctor's own work ran clean, else
/// /// the GPU's.
fn xids(doc: &RuleDoc, g: &crate::snapshot::StressGpu, out: &mut Vec<Finding>) {
    let w = &g.watch;
    // gpudoctor's own work on this GPU ran clean: no CUDA failure, every result verified
    // (flips it injected itself do not count).
    let own_clean = g.failure.is_none()
        && g.memory_errors <= g.injected_found
        && g.compute_errors == 0
        && g.gemm_errors == 0;
    for x in &w.xids {
        let info = u32::try_from(*x).ok().and_then(xid::lookup);
        let (name, meaning, cat) = info.map_or(
            (
                "unknown Xid",
                "not in gpudoctor's catalog",
                Category::HardwareFault,
            ),
            |i| (i.name.as_str(), i.meaning.as_str(), i.category),
        );
        // An application-class Xid (13, 31, 43, ...) while our own kernels kept running and
        // verifying came from another process on the GPU: seen on an H100 when a second
        // process wrote out of bounds during the test (docs/validation/h100-2026-11-23-run1).
        if cat == Category::ApplicationError && own_clean {
            let mut f = on(g, doc
                .finding(
                    Severity::Warning,
                    format!(
                        "{}: Xid {x} ({name}) from another process during the test",
                        g.label()
                    ),
                    format!(
                        "{meaning}. gpudoctor's own kernels on this GPU kept running and every result was verified, so another program on the GPU caused it; the stress result stands, but a burn-in belongs on an idle GPU."
                    ),
                )
                .fix_owned(
                    "Find the process named in the kernel log's Xid line, and run the stress test with the GPU idle:",
                    vec![
                        "sudo dmesg -T | grep -E 'NVRM: Xid' | tail -5".to_string(),
                        "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv".to_string(),
                    ],
                )
                .evidence(json!({"xid": x, "own_work_clean": true})));
            f.category = Category::ApplicationError;
            out.push(f);
            continue;
        }
        let mut f = on(
            g,
            doc.finding(
                Severity::Error,
                format!("{}: Xid {x} ({name}) during the test", g.label()),
                meaning.to_string(),
            )
            .fix_owned(
                "Follow NVIDIA's action for this Xid:",
                vec![format!("gpudoctor explain 'Xid {x}'")],
            )
            .evidence(json!({"xid": x})),
        );
        // gpudoctor's verified kernels are the application here: an application-class Xid
        // that hit them points at the GPU.
        f.category = if cat == Category::ApplicationError {
            Category::HardwareFault
        } else {
            cat
        };
        out.push(f);
    }
}

/// What could not be watched: Xid events, or the whole health watch.
fn unwatched(doc: &RuleDoc, g: &crate::snapshot::StressGpu, out: &mut Vec<Finding>) {
    let w = &g.watch;
    if let (Some(why), None) = (&w.xids_unwatched, &w.unavailable) {
        out.push(on(g, doc.finding(
            Severity::Info,
            format!("{}: Xid events not watched", g.label()),
            format!("{why}. Temperatures, clocks and ECC were watched; Xids of this run are only in the kernel log (gpudoctor check reads it)."),
        )));
    }
    if let Some(why) = &w.unavailable {
        out.push(on(
            g,
            doc.finding(
                Severity::Info,
                format!("{}: no health watch", g.label()),
                why.clone(),
            ),
        ));
    }
}

#[cfg(test)]
#[path = "stress_watch_tests.rs"]
pub(super) mod tests;
