//! `gpus.expected-count`: `--expect-gpus N` and the number of GPUs actually usable.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "gpus.expected-count",
        category: Category::HardwareFault,
        area: Area::Gpus,
        summary: "Fewer (or more) GPUs than --expect-gpus says the node has",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(want) = ctx.opts.expect_gpus else {
        return Vec::new();
    };
    let listed = ctx.snap.gpu_list().len() as u32;
    let on_bus = ctx
        .snap
        .driver
        .pci_devices
        .get()
        .map(|v| v.iter().filter(|d| d.is_gpu()).count() as u32);
    if listed == want {
        return Vec::new();
    }
    let mut detail = format!("Expected {want} GPU(s); the driver lists {listed}");
    if let Some(b) = on_bus {
        detail.push_str(&format!(" and the PCI bus shows {b} NVIDIA GPU(s)"));
        if b > listed {
            detail.push_str(": some GPUs are on the bus but not usable by the driver");
        }
    }
    detail.push('.');
    vec![doc
        .finding(
            Severity::Error,
            format!("{listed} of {want} expected GPUs are usable"),
            detail,
        )
        .fix(
            "Find out what happened to the missing GPUs:",
            &[
                "sudo dmesg | grep -E 'NVRM: (Xid|GPU|RmInitAdapter)' | tail -20",
                "nvidia-smi -L",
                "lspci -d 10de:",
            ],
        )
        .evidence(json!({"expected": want, "nvml_gpus": listed, "pci_gpus": on_bus}))]
}

#[cfg(test)]
#[path = "expected_gpus_tests.rs"]
pub(super) mod tests;
