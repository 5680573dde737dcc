//! `driver.library-mismatch`: the loaded kernel module and the user-space driver (NVML,
//! libcuda) are different versions, typically after a driver upgrade without a reboot.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "driver.library-mismatch",
        category: Category::DriverLibraryMismatch,
        area: Area::Driver,
        summary: "Kernel module and user-space driver libraries are different versions",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    if super::windows_fixes::on_windows(ctx.snap) {
        return on_windows(ctx, doc);
    }
    let d = &ctx.snap.driver;
    let module = d.kernel_version().map(str::to_string);
    let nvml = d.nvml.get().and_then(|n| n.driver_version.clone());
    // A cuda-compat libcuda (…/compat/libcuda.so.<newer>) differs from the module on purpose:
    // that is forward compatibility (reference/compat-facts.md §1c), not a mismatch.
    let libcuda = d
        .libcuda
        .get()
        .filter(|l| !l.path.as_deref().is_some_and(|p| p.contains("/compat/")))
        .and_then(|l| l.file_version.clone());
    let libcuda_803 = d
        .libcuda
        .get()
        .and_then(|l| l.error.as_deref())
        .is_some_and(|e| e.contains("803"));
    let nvml_mismatch = d.nvml.code() == Some("lib_rm_version_mismatch");
    let mut differing = Vec::new();
    if let Some(m) = &module {
        if let Some(n) = nvml.as_ref().filter(|n| *n != m) {
            differing.push(format!("NVML reports {n}"));
        }
        if let Some(l) = libcuda.as_ref().filter(|l| *l != m) {
            differing.push(format!(
                "libcuda is {l} ({})",
                d.libcuda
                    .get()
                    .and_then(|x| x.path.clone())
                    .unwrap_or_default()
            ));
        }
    }
    if differing.is_empty() && !nvml_mismatch && !libcuda_803 {
        return Vec::new();
    }
    let mut detail = match &module {
        Some(m) => format!("The loaded kernel module is {m}"),
        None => "The loaded kernel module's version is unknown".to_string(),
    };
    if !differing.is_empty() {
        detail.push_str(&format!(", but {}", differing.join(" and ")));
    }
    detail.push('.');
    if nvml_mismatch {
        detail.push_str(" NVML refuses to start: Driver/library version mismatch.");
    }
    if libcuda_803 {
        detail.push_str(" cuDriverGetVersion returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803).");
    }
    detail
        .push_str(" This usually means the driver was upgraded and the machine was not rebooted.");
    vec![doc
        .finding(Severity::Error, "The NVIDIA kernel module and driver libraries do not match", detail)
        .fix(
            "Reboot so the new module loads; or, with no process using the GPUs, reload the modules (as root):",
            &[
                "sudo reboot",
                "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia && sudo modprobe nvidia_uvm",
            ],
        )
        .evidence(json!({"kernel_module": module, "nvml_driver_version": nvml, "libcuda_file_version": libcuda, "nvml_error": d.nvml.reason()}))
        .link("https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html")]
}

/// Windows has no kernel module to compare with: NVML's driver version and the one in
/// nvcuda.dll's version resource must agree. They differ after a driver update that did not
/// finish, or where an nvcuda.dll copied next to a program (or left in System32 by an old
/// install) shadows the driver's own.
fn on_windows(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let d = &ctx.snap.driver;
    let Some(nvml) = d.nvml.get().and_then(|n| n.driver_version.clone()) else {
        return Vec::new();
    };
    let Some(lib) = d.libcuda.get() else {
        return Vec::new();
    };
    let Some(file) = lib.file_version.clone() else {
        return Vec::new();
    };
    let same = match (
        crate::version::DriverVersion::parse(&nvml),
        crate::version::DriverVersion::parse(&file),
    ) {
        (Some(a), Some(b)) => (a.major, a.minor) == (b.major, b.minor),
        _ => nvml == file,
    };
    if same {
        return Vec::new();
    }
    let path = lib.path.clone().unwrap_or_else(|| "nvcuda.dll".into());
    vec![doc
        .finding(
            Severity::Error,
            format!("nvml.dll and nvcuda.dll are from different drivers ({nvml} and {file})"),
            format!("NVML reports driver {nvml}, but the CUDA driver library programs load, \
                {path}, is from driver {file}. CUDA programs then fail to start or \
                report the wrong driver (CUDA error 803, 'system has unsupported \
                display driver / cuda driver combination'). A driver update that did \
                not finish, or an nvcuda.dll copied next to a program, does this."),
        )
        .fix(
            "Reinstall the NVIDIA driver (its installer's clean installation option) and restart Windows; remove any nvcuda.dll copied into a program's folder:",
            &[
                "Start-Process 'https://www.nvidia.com/en-us/drivers/'",
                "shutdown /r /t 0",
            ],
        )
        .evidence(json!({"nvml_driver": nvml, "nvcuda_driver": file, "nvcuda_path": path}))]
}

#[cfg(test)]
#[path = "driver_library_mismatch_tests.rs"]
pub(super) mod tests;
