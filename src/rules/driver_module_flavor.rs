//! `driver.module-flavor`: the kernel module's flavour (open or proprietary) does not drive
//! this GPU. The open modules support Turing and newer only; Grace Hopper and Blackwell
//! GPUs require them (NVIDIA, "NVIDIA Transitions Fully Towards Open-Source GPU Kernel
//! Modules", July 2024; ../shared/reference/compat-facts.md).

use crate::fixes::{driver_fix, DriverAction, Terms, Values};
use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "driver.module-flavor",
        category: Category::ArchUnsupported,
        area: Area::Driver,
        summary: "The open or proprietary kernel module does not support this GPU",
    },
    check,
};

/// Compute capability as (major, minor) from "9.0".
fn cc(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(module) = ctx.snap.driver.kernel_module.get() else {
        return Vec::new();
    };
    let open = match module.flavor.as_str() {
        "open" => true,
        "proprietary" => false,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some((major, minor)) = g.compute_capability.get().and_then(|c| cc(c)) else {
            continue;
        };
        let name = g.name.get().cloned().unwrap_or_default();
        let label = format!("GPU {} ({name})", g.index);
        let (title, detail, pkg) = if open && (major, minor) < (7, 5) {
            (
                format!("{label}: the open kernel module does not drive a compute {major}.{minor} GPU"),
                format!(
                    "The loaded module is the open one ({}); it supports Turing (7.5) and newer only and refuses this GPU. Use the proprietary module of a branch that still supports it.",
                    module.version
                ),
                DriverAction::InstallProprietary,
            )
        } else if !open && (major >= 10 || name.contains("GH200") || name.contains("GB200")) {
            (
                format!("{label}: this GPU needs the open kernel module, and the proprietary one is loaded"),
                format!(
                    "Grace Hopper and Blackwell GPUs (compute {major}.{minor}) are supported by the open GPU kernel modules only; the loaded module ({}) is the proprietary one.",
                    module.version
                ),
                DriverAction::InstallOpen,
            )
        } else {
            continue;
        };
        let mut f = doc
            .finding(Severity::Error, title, detail)
            .with_fix({
                // The same branch; a pre-Turing GPU on R590+ needs R580, the last branch with
                // Pascal/Volta (https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/).
                let branch = module.version.split('.').next().unwrap_or("580").to_string();
                let mut fix = driver_fix(
                    &Terms::of(ctx.snap),
                    pkg,
                    &Values { branch: &branch, version: Some(&module.version) },
                );
                fix.text = format!("Install the other flavour of the same driver branch ({branch}). {}", fix.text);
                fix
            })
            .evidence(json!({"module_flavor": module.flavor, "compute_capability": format!("{major}.{minor}")}))
            .on_gpu(g.index);
        f.links = vec!["https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/".to_string()];
        out.push(f);
    }
    out
}

#[cfg(test)]
#[path = "driver_module_flavor_tests.rs"]
pub(super) mod tests;
