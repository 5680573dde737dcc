//! `driver.missing`: no usable NVIDIA driver, with the reason: no module, module not loaded,
//! nouveau bound, user-space libraries missing, or no device nodes.

use serde_json::json;

use super::{unprobed, Context, Rule, RuleDoc};
use crate::fixes::{driver_fix, DriverAction, Terms, Values};
use crate::vocab::{Area, Category, Finding, Fix, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "driver.missing",
        category: Category::DriverMissing,
        area: Area::Driver,
        summary: "No usable NVIDIA driver: module not loaded, nouveau bound, libraries or device nodes missing",
    },
    check,
};

const INSTALL_LINK: &str =
    "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html";

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let s = ctx.snap;
    let d = &s.driver;
    if unprobed(&d.kernel_module) && unprobed(&d.nvml) && !s.is_assumed("driver") {
        return Vec::new();
    }
    if s.host.get().is_some_and(|h| h.tegra.is_some()) {
        // A Jetson has no nvidia module and no PCI GPU by design: host.tegra reports it.
        return Vec::new();
    }
    if super::windows_fixes::on_windows(s) {
        return on_windows(ctx, doc);
    }
    let pci = d.pci_devices.get().cloned().unwrap_or_default();
    let gpus_on_bus: Vec<_> = pci.iter().filter(|p| p.is_gpu()).collect();
    let nouveau = d.nouveau_loaded.get().copied().unwrap_or(false);
    let module = d.kernel_module.is_found() || d.sys_module_version.is_found();
    let nvml_code = d.nvml.code().unwrap_or("");
    let evidence = json!({
        "kernel_module": d.kernel_module.reason(),
        "nvml": d.nvml.reason(),
        "libcuda": d.libcuda.reason(),
        "nouveau_loaded": nouveau,
        "nvidia_gpus_on_pci_bus": gpus_on_bus.iter().map(|p| json!({"bus_id": p.bus_id, "driver": p.driver})).collect::<Vec<_>>(),
    });

    if ctx.driver_present() && module {
        return device_nodes(s, doc);
    }
    if ctx.driver_present() {
        // A version is known without a loaded module (assumed, or NVML/libcuda only): fine
        // unless NVML says the module is not loaded.
        if nvml_code != "driver_not_loaded" {
            return Vec::new();
        }
    }
    if nvml_code == "lib_rm_version_mismatch" {
        // driver.library-mismatch reports this one.
        return Vec::new();
    }

    let (title, detail, fix) = diagnosis(ctx, &gpus_on_bus, nouveau, module);
    vec![doc
        .finding(Severity::Error, title, detail)
        .with_fix(fix)
        .evidence(evidence)
        .link(INSTALL_LINK)]
}

/// The module is loaded; are the device nodes there?
fn device_nodes(s: &crate::snapshot::Snapshot, doc: &RuleDoc) -> Vec<Finding> {
    let d = &s.driver;
    let nodes = d.device_nodes.get().cloned().unwrap_or_default();
    let has_ctl = nodes.iter().any(|n| n.path.ends_with("/nvidiactl"));
    let has_gpu = nodes.iter().any(|n| {
        n.path
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_prefix("nvidia"))
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    });
    let has_uvm = nodes.iter().any(|n| n.path.ends_with("/nvidia-uvm"));
    if d.device_nodes.is_found()
        && (!has_ctl || !has_gpu)
        && s.host.get().is_some_and(|h| h.container.is_none())
    {
        return vec![doc
            .finding(
                Severity::Error,
                "The NVIDIA module is loaded but its device nodes are missing",
                "/dev/nvidiactl or /dev/nvidia0… do not exist, so no program can open a GPU. They are created by nvidia-modprobe or udev when the driver loads.",
            )
            .fix("Create the device nodes (as root):", &["sudo nvidia-modprobe -c 0 -u"])
            .evidence(json!({"device_nodes": nodes.iter().map(|n| &n.path).collect::<Vec<_>>()}))
            .link(INSTALL_LINK)];
    }
    if d.device_nodes.is_found() && has_ctl && has_gpu && !has_uvm {
        return vec![doc
            .finding(
                Severity::Error,
                "/dev/nvidia-uvm is missing: the nvidia_uvm module is not loaded",
                "CUDA needs the unified-memory module; without it cuInit fails with CUDA_ERROR_UNKNOWN (999) and PyTorch reports 'CUDA unknown error' (common after suspend/resume).",
            )
            .fix("Load the module and create its node (as root):", &["sudo modprobe nvidia_uvm", "sudo nvidia-modprobe -c 0 -u"])
            .link("https://github.com/pytorch/pytorch/issues/49081")];
    }
    Vec::new()
}

/// Why there is no driver, and its fix: nouveau in the way, the user-space driver missing, the
/// module not loaded for the GPUs on the bus, or no driver at all.
fn diagnosis(
    ctx: &Context,
    gpus_on_bus: &[&crate::snapshot::PciDevice],
    nouveau: bool,
    module: bool,
) -> (&'static str, String, Fix) {
    let s = ctx.snap;
    let d = &s.driver;
    let nouveau_bound: Vec<_> = gpus_on_bus
        .iter()
        .filter(|p| p.driver.as_deref() == Some("nouveau"))
        .collect();
    let terms = Terms::of(s);
    let module_version = d.kernel_version().map(str::to_string);
    let module_branch = module_version
        .as_deref()
        .and_then(|v| v.split('.').next())
        .map(str::to_string);
    let newest = ctx.matrix.newest_branch().unwrap_or(580).to_string();
    if !nouveau_bound.is_empty() || (nouveau && !module) {
        (
            "The nouveau driver is bound to the GPU instead of the NVIDIA driver",
            format!(
                "The open-source nouveau driver is loaded{}; it cannot run CUDA and blocks the NVIDIA module (NVRM: 'The NVIDIA probe routine was not called … nouveau').",
                if nouveau_bound.is_empty() { String::new() } else { format!(" and drives {}", nouveau_bound.iter().map(|p| p.bus_id.as_str()).collect::<Vec<_>>().join(", ")) }
            ),
            driver_fix(
                &terms,
                DriverAction::BlacklistNouveau,
                &Values { branch: &newest, version: None },
            ),
        )
    } else if module {
        (
            "The NVIDIA kernel module is loaded but the user-space driver is missing",
            format!(
                "The kernel module is there, but {}. Install the driver's user-space libraries of the same version as the module (in a container, the NVIDIA Container Toolkit injects them).",
                d.nvml.reason().unwrap_or("NVML could not be loaded")
            ),
            driver_fix(
                &terms,
                DriverAction::Utils,
                &Values {
                    branch: module_branch.as_deref().unwrap_or(&newest),
                    version: module_version.as_deref(),
                },
            ),
        )
    } else if !gpus_on_bus.is_empty() {
        (
            "NVIDIA GPUs are present but the NVIDIA kernel module is not loaded",
            format!(
                "{} NVIDIA GPU(s) are on the PCI bus ({}) with {}. The module may not be built for this kernel (DKMS), may be rejected by Secure Boot, or may not be installed.",
                gpus_on_bus.len(),
                gpus_on_bus.iter().map(|p| p.bus_id.as_str()).collect::<Vec<_>>().join(", "),
                match gpus_on_bus.first().and_then(|p| p.driver.as_deref()) {
                    Some(drv) => format!("the '{drv}' driver bound"),
                    None => "no driver bound".to_string(),
                }
            ),
            crate::fixes::make_fix(
                "Load the module and look at why it fails (as root):",
                vec!["sudo modprobe nvidia".into(), "sudo dmesg | grep -iE 'nvidia|nvrm' | tail -20".into(), "dkms status".into()],
                "sh",
            ),
        )
    } else {
        (
            "No NVIDIA driver found",
            format!(
                "No NVIDIA kernel module is loaded, {}, and no NVIDIA GPU is visible on the PCI bus. This machine cannot run CUDA as it is.",
                if d.nvml.code() == Some("nvml_library_missing") {
                    "the driver's libraries (libnvidia-ml.so.1, libcuda.so.1) are not installed"
                } else {
                    "NVML does not start"
                }
            ),
            {
                let mut f = driver_fix(
                    &terms,
                    DriverAction::Install,
                    &Values { branch: &newest, version: None },
                );
                f.text = format!("On a GPU machine, install the NVIDIA driver; in a container, start it with GPU access (docker run --gpus all, or the NVIDIA device plugin on Kubernetes). {}", f.text);
                f
            },
        )
    }
}

/// Windows has no kernel module or device nodes to look at: the driver is there when NVML
/// (`nvml.dll`) or the CUDA driver (`nvcuda.dll`) loads.
fn on_windows(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    if ctx.driver_present() {
        return Vec::new();
    }
    let d = &ctx.snap.driver;
    let nvml = d.nvml.reason().unwrap_or("nvml.dll could not be loaded");
    vec![doc
        .finding(
            Severity::Error,
            "No NVIDIA driver found",
            format!(
                "Neither NVML (nvml.dll) nor the CUDA driver (nvcuda.dll) could be \
                    loaded ({nvml}), so no CUDA program can use a GPU: PyTorch reports \
                    torch.cuda.is_available() as False and TensorFlow lists no GPU. Without \
                    an NVIDIA GPU, or with only Windows' basic display driver, this is what \
                    Windows shows."
            ),
        )
        .fix(
            "Install the NVIDIA driver for your GPU from NVIDIA's download page (GeForce and RTX: the Game Ready or Studio driver; data-centre GPUs: the Data Center driver), then restart Windows. To see which GPU and display driver Windows has:",
            &[
                "Get-CimInstance Win32_VideoController | Format-List Name, DriverVersion, Status",
                "Start-Process 'https://www.nvidia.com/en-us/drivers/'",
            ],
        )
        .evidence(json!({"nvml": d.nvml.reason(), "nvcuda": d.libcuda.reason()}))
        .link(super::windows_fixes::DRIVER_DOWNLOAD)]
}

#[cfg(test)]
#[path = "driver_missing_tests.rs"]
pub(super) mod tests;
