//! `compat.forward-compat`: a CUDA forward-compatibility libcuda (cuda-compat) in use on a
//! kernel branch or a GPU it does not support.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::version::CudaVersion;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "compat.forward-compat",
        category: Category::DriverLibraryMismatch,
        area: Area::Driver,
        summary: "A cuda-compat (forward compatibility) libcuda is used on a kernel branch or GPU it does not support",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let d = &ctx.snap.driver;
    let Some(lib) = d.libcuda.get() else {
        return Vec::new();
    };
    let Some(path) = lib.path.as_deref().filter(|p| p.contains("/compat/")) else {
        return Vec::new();
    };
    let Some(module) = d
        .kernel_version()
        .and_then(crate::version::DriverVersion::parse)
    else {
        return Vec::new();
    };
    // The package's CUDA: what its libcuda reports, else the cuda-X.Y in its path.
    let cuda = lib
        .cuda_driver_version
        .and_then(CudaVersion::from_api)
        .or_else(|| {
            path.split('/')
                .find_map(|p| p.strip_prefix("cuda-"))
                .and_then(CudaVersion::parse)
        });
    let mut out = Vec::new();
    let own_branch = lib
        .file_version
        .as_deref()
        .and_then(crate::version::DriverVersion::parse)
        .map(|v| v.major);
    if let Some(row) = cuda.and_then(|c| ctx.matrix.forward_compat(c)) {
        if !row.branches.contains(&module.major) && own_branch != Some(module.major) {
            let list: Vec<String> = row.branches.iter().map(|b| format!("R{b}")).collect();
            out.push(
                doc.finding(
                    Severity::Error,
                    format!("cuda-compat {} does not support kernel driver R{}", row.cuda, module.major),
                    format!(
                        "libcuda comes from {path} (CUDA {} forward compatibility) but the kernel module is {module}; that package runs only on {}. CUDA calls fail with error 803 (system has unsupported display driver / cuda driver combination).",
                        row.cuda,
                        list.join(", ")
                    ),
                )
                .fix("Take the compat directory off the library path, or install a supported driver branch:", &["echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep compat"])
                .evidence(json!({"libcuda": path, "compat_cuda": row.cuda, "kernel_module": module.to_string(), "supported_branches": row.branches}))
                .link(&row.source),
            );
        }
    }
    for g in ctx.snap.gpu_list() {
        if g.name.get().is_some_and(|n| n.contains("GeForce")) {
            // This is CUDA error 804 before it happens: the category is that code's one home's
            // (knowledge/code-categories.yaml: driver_too_old, the compat package is there because
            // the driver is older than the CUDA wanted).
            let mut f = doc.finding(
                Severity::Error,
                format!("Forward compatibility does not work on {}", g.label()),
                    format!("libcuda comes from {path}, a CUDA forward-compatibility package, which supports only data center GPUs, select NGC Server Ready RTX SKUs and Jetson; on this GeForce GPU CUDA fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)."),
                )
                .fix("Remove the compat directory from LD_LIBRARY_PATH and install a driver new enough for the CUDA you need.", &[])
                .evidence(json!({"libcuda": path, "gpu": g.name.get()}))
            .on_gpu(g.index)
            .link("https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html");
            if let Some(c) = crate::knowledge::codes::cuda_category(804) {
                f.category = c;
            }
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
#[path = "compat_forward_tests.rs"]
pub(super) mod tests;
