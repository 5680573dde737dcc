//! `health.gpu-lost`: a GPU that NVML reports lost or needing a reset, and NVIDIA GPUs on the PCI
//! bus bound to the NVIDIA driver that NVML does not list.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::logparse::norm_bus_id;
use crate::snapshot::Probed;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.gpu-lost",
        category: Category::HardwareFault,
        area: Area::Gpus,
        summary: "A GPU is lost or needs a reset, or is on the PCI bus but not usable",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let codes = [
            g.name.code(),
            g.memory.code(),
            g.uuid.code(),
            g.temperature_c.code(),
        ];
        let lost = codes.contains(&Some("gpu_lost"));
        let reset = codes.contains(&Some("reset_required"));
        if lost || reset {
            out.push(doc.finding(Severity::Error, format!("{}: {}", g.label(), if lost { "the GPU is lost (fallen off the bus)" } else { "the GPU needs a reset" }),
                if lost { "NVML answers NVML_ERROR_GPU_IS_LOST: the driver can no longer reach this GPU.".to_string() } else { "NVML answers NVML_ERROR_RESET_REQUIRED: the GPU must be reset before it can be used again.".to_string() })
                .fix_owned("Drain the node and reset the GPU, or reboot:", vec![format!("sudo nvidia-smi -r -i {}", g.index), "sudo reboot".into()])
                .evidence(json!({"lost": lost, "reset_required": reset}))
                .on_gpu(g.index));
        }
    }
    if let (Some(pci), Probed::Found { value: gpus }) =
        (ctx.snap.driver.pci_devices.get(), &ctx.snap.gpus)
    {
        let listed: Vec<String> = gpus
            .iter()
            .filter_map(|g| norm_bus_id(g.pci_bus_id.get()?))
            .collect();
        let missing: Vec<&str> = pci
            .iter()
            .filter(|d| d.is_gpu() && d.driver.as_deref() == Some("nvidia"))
            .filter(|d| norm_bus_id(&d.bus_id).is_some_and(|b| !listed.contains(&b)))
            .map(|d| d.bus_id.as_str())
            .collect();
        if !missing.is_empty() && !listed.is_empty() {
            out.push(doc.finding(Severity::Error, format!("{} NVIDIA GPU(s) on the PCI bus are not usable", missing.len()),
                format!("{} are bound to the nvidia driver but NVML does not list them: they failed to initialise, fell off the bus, or are excluded.", missing.join(", ")))
                .fix("Look at the kernel log for these bus ids, then reboot:", &["sudo dmesg -T | grep -E 'NVRM: (Xid|GPU|RmInitAdapter)'", "nvidia-smi -q | grep -i excluded"])
                .evidence(json!({"missing": missing, "listed": listed})));
        }
    }
    out
}

#[cfg(test)]
#[path = "health_lost_tests.rs"]
pub(super) mod tests;
