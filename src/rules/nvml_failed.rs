//! `nvml.failed`: NVML answered, but with an error that no other rule explains: its
//! initialisation failed for a reason other than a missing driver or a version mismatch, it
//! could not count the GPUs, it counted none, or it would not give a GPU's handle. Without this
//! rule such a host would pass with an empty GPU list.

use serde_json::json;

use super::{unprobed, Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "nvml.failed",
        category: Category::DriverFault,
        area: Area::Driver,
        summary: "NVML returned an error: it could not initialise, count the GPUs or open one",
    },
    check,
};

/// The codes NVML's own errors are recorded with (the others belong to other rules:
/// driver.missing, driver.library-mismatch, probe.timeout, probe.crashed, or mean "not probed").
const NVML_ERRORS: &[&str] = &["nvml_error", "no_permission", "gpu_lost", "reset_required"];

/// The NVML return code a probe code stands for ("gpu_lost" is NVML_ERROR_GPU_IS_LOST, the
/// others are the name's tail in lower case); "nvml_error" stands for none in particular.
pub fn nvml_name(code: &str) -> String {
    match code {
        "gpu_lost" => "NVML_ERROR_GPU_IS_LOST".to_string(),
        c => format!("NVML_ERROR_{}", c.to_ascii_uppercase()),
    }
}

/// The category of an NVML failure: its return code's, from the knowledge (the same as
/// `explain NVML_ERROR_...` gives); an unnamed failure takes NVML's default category.
pub fn category_for(code: &str) -> Category {
    use crate::knowledge::codes;
    codes::nvml_named(&nvml_name(code))
        .map(|c| c.category)
        .or_else(|| codes::emitter("nvml").map(|e| e.default_category))
        .unwrap_or(Category::DriverFault)
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let d = &ctx.snap.driver;
    if unprobed(&d.nvml) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |code: &str, title: String, detail: &str, gpu: Option<u32>| {
        let mut f = doc
            .finding(Severity::Error, title, detail.to_string())
            .fix(
                "Look for driver errors in the kernel log, then reset the GPU or reboot:",
                &[
                    "sudo dmesg | grep -E 'NVRM|Xid' | tail -20",
                    "nvidia-smi",
                    "ls -l /dev/nvidia*",
                ],
            )
            .evidence(json!({"code": code, "error": detail}));
        f.category = category_for(code);
        if let Some(i) = gpu {
            f = f.on_gpu(i);
        }
        out.push(f);
    };
    let code = d.nvml.code().unwrap_or("");
    if !d.nvml.is_found() && NVML_ERRORS.contains(&code) {
        let why = d.nvml.reason().unwrap_or("NVML failed");
        push(code, "NVML could not be initialised".to_string(), why, None);
        return out;
    }
    if !d.nvml.is_found() {
        return out;
    }
    let gcode = ctx.snap.gpus.code().unwrap_or("");
    if !ctx.snap.gpus.is_found() && NVML_ERRORS.contains(&gcode) {
        let why = ctx.snap.gpus.reason().unwrap_or("NVML failed");
        push(gcode, "NVML could not list the GPUs".to_string(), why, None);
        return out;
    }
    if d.nvml.get().and_then(|i| i.device_count) == Some(0) {
        let in_container = ctx.snap.host.get().is_some_and(|h| h.container.is_some());
        let mut f = doc
            .finding(
                Severity::Error,
                "The NVIDIA driver is loaded but NVML lists no GPUs",
                "nvmlDeviceGetCount answered 0: no program on this machine can use a \
                    GPU. In a container, no GPU was passed in (NVIDIA_VISIBLE_DEVICES, \
                    --gpus); on a host, the GPUs failed to initialise (look for \
                    RmInitAdapter failed in the kernel log) or are bound to another driver \
                    (vfio-pci for a VM)."
                    .to_string(),
            )
            .fix(
                "See what the driver and the PCI bus say:",
                &[
                    "sudo dmesg | grep -E 'NVRM|Xid|RmInit' | tail -20",
                    "lspci -nnk -d 10de:",
                ],
            );
        f.category = if in_container {
            Category::ContainerNoGpu
        } else {
            Category::DriverFault
        };
        out.push(f);
        return out;
    }
    for g in ctx.snap.gpu_list() {
        let (Some(c), Some(why)) = (g.name.code(), g.name.reason()) else {
            continue;
        };
        // A lost GPU is health.gpu-lost's.
        if g.handle_failed() && c != "gpu_lost" {
            push(
                c,
                format!("GPU {}: NVML could not open it", g.index),
                why,
                Some(g.index),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "nvml_failed_tests.rs"]
pub(super) mod tests;
