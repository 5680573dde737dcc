//! `health.config`: GPU settings that stop or slow jobs: persistence mode off, compute mode
//! prohibited or exclusive, MIG enabled with no instances, a MIG mode change pending.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.config",
        category: Category::Configuration,
        area: Area::Gpus,
        summary:
            "Persistence mode off, compute mode prohibited or exclusive, MIG on with no instances",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let persistenced = ctx.snap.driver.daemons.get().is_some_and(|d| {
        d.iter()
            .any(|x| x.name == "nvidia-persistenced" && x.running)
    });
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let l = g.label();
        if g.persistence_mode.get() == Some(&false) && !persistenced {
            out.push(doc.finding(Severity::Warning, format!("{l}: persistence mode is off"),
                "Without persistence mode or nvidia-persistenced, the driver unloads GPU state whenever no client is attached: each job starts slower and volatile ECC counters reset (DCGM's deployment check warns).".to_string())
                .fix("Enable the persistence daemon (or legacy persistence mode):", &["sudo systemctl enable --now nvidia-persistenced", "sudo nvidia-smi -pm 1"])
                .evidence(json!({"persistence_mode": false}))
                .on_gpu(g.index)
                .link("https://docs.nvidia.com/deploy/driver-persistence/persistence-daemon.html"));
        }
        match g.compute_mode.get().map(String::as_str) {
            Some("prohibited") => out.push(doc.finding(Severity::Error, format!("{l}: compute mode is PROHIBITED"),
                "No CUDA context can be created on this GPU: programs fail with 'CUDA-capable device(s) is/are busy or unavailable' (46).".to_string())
                .fix_owned("Set the default compute mode:", vec![format!("sudo nvidia-smi -i {} -c DEFAULT", g.index)])
                .evidence(json!({"compute_mode": "prohibited"})).on_gpu(g.index)),
            Some("exclusive_process") | Some("exclusive_thread") => out.push(doc.finding(Severity::Info, format!("{l}: compute mode is exclusive"),
                "Only one process at a time can use this GPU; a second one gets 'CUDA-capable device(s) is/are busy or unavailable' (46). Intended on shared clusters, surprising elsewhere.".to_string())
                .fix_owned("If not intended, set the default compute mode:", vec![format!("sudo nvidia-smi -i {} -c DEFAULT", g.index)])
                .evidence(json!({"compute_mode": g.compute_mode.get()})).on_gpu(g.index)),
            _ => {}
        }
        if let Some(m) = g.mig_mode.get() {
            let instances = g.health.get().and_then(|h| h.mig_devices);
            if m.current && instances == Some(0) {
                out.push(doc.finding(Severity::Error, format!("{l}: MIG is enabled but no MIG instance exists"),
                    "With MIG on and no GPU/compute instance, CUDA sees no device on this GPU ('no CUDA-capable device is detected', 100).".to_string())
                    .fix_owned("Create instances (nvidia-smi mig -lgip lists the profiles), or disable \
                        MIG (may need a GPU reset):", vec![format!("sudo nvidia-smi mig -i {} -lgip", g.index), format!("sudo nvidia-smi mig -i {} -cgi <profile> -C", g.index), format!("sudo nvidia-smi -i {} -mig 0", g.index)])
                    .evidence(json!({"mig_mode": m, "mig_devices": instances})).on_gpu(g.index));
            }
            if m.current != m.pending {
                out.push(
                    doc.finding(
                        Severity::Warning,
                        format!("{l}: a MIG mode change is pending"),
                        format!(
                            "MIG is {} now and {} after the next GPU reset.",
                            if m.current { "on" } else { "off" },
                            if m.pending { "on" } else { "off" }
                        ),
                    )
                    .fix_owned(
                        "Reset the GPU to apply it:",
                        vec![format!("sudo nvidia-smi -r -i {}", g.index)],
                    )
                    .evidence(json!({"mig_mode": m}))
                    .on_gpu(g.index),
                );
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "health_config_tests.rs"]
pub(super) mod tests;
