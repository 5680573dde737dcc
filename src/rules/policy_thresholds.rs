//! `policy.thresholds`: the limits a `--policy` file sets for this node class: a minimum driver,
//! a highest GPU temperature, and a most uncorrectable ECC errors per GPU (the expected GPU
//! count goes to `gpus.expected-count`). Silent without a policy.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::version::DriverVersion;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "policy.thresholds",
        category: Category::Configuration,
        area: Area::Gpus,
        summary: "A limit of the --policy file is not met (driver, temperature, ECC)",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let o = ctx.opts;
    let mut out = Vec::new();
    if let Some(min) = o.min_driver.as_deref().and_then(DriverVersion::parse) {
        if let Some(have) = ctx.driver_version().and_then(|v| DriverVersion::parse(&v)) {
            if have < min {
                let mut f = doc
                    .finding(Severity::Error, format!("Driver {have} is older than this node class's minimum {min}"), "The policy file pins a minimum driver for this class of node.")
                    .fix("Install the class's driver (gpudoctor recommend shows what fits the frameworks):", &["gpudoctor recommend"])
                    .evidence(json!({"driver": have.to_string(), "min_driver": min.to_string()}));
                f.category = Category::DriverTooOld;
                f.area = Area::Driver;
                out.push(f);
            }
        }
    }
    for g in ctx.snap.gpu_list() {
        if let (Some(max), Some(t)) = (o.max_temperature_c, g.temperature_c.get()) {
            if *t > max {
                let mut f = doc
                    .finding(
                        Severity::Error,
                        format!("{}: {t} °C, above this node class's {max} °C", g.label()),
                        "The policy file sets the highest temperature for GPUs of this class.",
                    )
                    .fix(
                        "Check airflow, fans and the inlet temperature:",
                        &["nvidia-smi -q -d TEMPERATURE"],
                    )
                    .evidence(json!({"temperature_c": t, "max_temperature_c": max}))
                    .on_gpu(g.index);
                f.category = Category::ThermalPower;
                out.push(f);
            }
        }
        let agg = g
            .health
            .get()
            .and_then(|h| h.ecc)
            .and_then(|e| e.aggregate_uncorrected);
        if let (Some(max), Some(n)) = (o.max_ecc_uncorrected, agg) {
            if n > max {
                let mut f = doc
                    .finding(Severity::Error, format!("{}: {n} uncorrectable ECC errors over its life, the class allows {max}", g.label()), "The policy file sets the most uncorrectable ECC errors a GPU of this class may have had.")
                    .fix("Drain the GPU and check its row remapping; replace it per the class's standard:", &["nvidia-smi -q -d ECC,ROW_REMAPPER"])
                    .evidence(json!({"aggregate_uncorrected": n, "max_ecc_uncorrected": max}))
                    .on_gpu(g.index);
                f.category = Category::EccMemory;
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "policy_thresholds_tests.rs"]
pub(super) mod tests;
