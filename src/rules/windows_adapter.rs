//! `windows.adapter`: an NVIDIA GPU that Device Manager shows with a problem code ("Code 43") or
//! on Microsoft Basic Display Adapter (no NVIDIA driver bound to it), from the display adapters
//! the Windows probe lists through SetupAPI.
//!
//! The codes are Device Manager's (https://learn.microsoft.com/en-us/windows-hardware/drivers/install/device-manager-error-messages).
//! What people met behind them on NVIDIA GPUs: Code 43 on a GPU that had failed
//! (dartraiden/NVIDIA-patcher#531), after a BIOS or platform change (arutar/FrankenDriver#77:
//! "above 4G decoding"), in a VM the GPU was passed through to (QaidVoid/Complete-Single-GPU-Passthrough#12,
//! cyberus-technology/virtualbox-kvm#34); Code 31 that a restart cleared
//! (dartraiden/NVIDIA-patcher#550); Code 10 that went away with VT-d off (dartraiden/NVIDIA-patcher#145).

use serde_json::json;

use super::windows_fixes::{on_windows, DRIVER_DOWNLOAD};
use super::{Context, Rule, RuleDoc};
use crate::snapshot::DisplayAdapter;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "windows.adapter",
        category: Category::DriverMissing,
        area: Area::Driver,
        summary: "An NVIDIA GPU Device Manager shows with a problem code (Code 43) or without NVIDIA's driver",
    },
    check,
};

const LIST: &str =
    "Get-PnpDevice -Class Display | Format-List FriendlyName, Status, Problem, InstanceId";

/// What Device Manager's code means, and what to do, for the codes seen on GPUs.
fn code(problem: u32) -> (Category, &'static str, &'static str) {
    match problem {
        43 => (
            Category::HardwareFault,
            "Windows stopped the device because its driver reported a problem (Code 43)",
            "The NVIDIA driver loaded but found the GPU unusable: a GPU that has \
                failed or is short of power, a BIOS setting (above-4G decoding, \
                resizable BAR) or platform change, a driver install gone wrong, or a \
                GPU passed through to a virtual machine. Reinstall the driver cleanly \
                and restart; if Code 43 stays, check the power cables and seating, then \
                try the GPU in another machine.",
        ),
        10 => (
            Category::DriverMissing,
            "The device cannot start (Code 10)",
            "The driver could not start the GPU. Reinstall the driver and restart; on some boards turning VT-d / IOMMU off in the BIOS has cleared it.",
        ),
        28 => (
            Category::DriverMissing,
            "No driver is installed for the device (Code 28)",
            "Install the NVIDIA driver for this GPU and restart.",
        ),
        31 => (
            Category::DriverMissing,
            "Windows cannot load the device's driver (Code 31)",
            "Restart Windows; if it stays, reinstall the NVIDIA driver.",
        ),
        22 => (
            Category::Configuration,
            "The device is disabled (Code 22)",
            "Enable it in Device Manager (or with Enable-PnpDevice as Administrator).",
        ),
        52 => (
            Category::DriverMissing,
            "Windows cannot verify the driver's signature (Code 52)",
            "Install NVIDIA's signed driver from NVIDIA's download page; a modified driver needs Secure Boot's rules relaxed.",
        ),
        _ => (
            Category::DriverMissing,
            "Device Manager reports a problem with the device",
            "Reinstall the NVIDIA driver and restart; look the code up in Device Manager's error list.",
        ),
    }
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    if !on_windows(ctx.snap) {
        return Vec::new();
    }
    let Some(w) = ctx.snap.host.get().and_then(|h| h.windows.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in w.adapters.iter().filter(|a| a.is_nvidia()) {
        let evidence = json!({"adapter": a});
        if let Some(p) = a.problem {
            let (category, what, fix) = code(p);
            let mut f = doc
                .finding(
                    Severity::Error,
                    format!("{}: {}", name(a), what),
                    format!("Device Manager shows {} ({}) with problem code {p}. {fix}", name(a), a.hardware_id.as_deref().unwrap_or("no hardware id")),
                )
                .fix(fix, &[LIST, &format!("Start-Process '{DRIVER_DOWNLOAD}'")])
                .evidence(evidence)
                .link("https://learn.microsoft.com/en-us/windows-hardware/drivers/install/device-manager-error-messages");
            f.category = category;
            out.push(f);
        } else if a
            .service
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("BasicDisplay"))
        {
            out.push(
                doc.finding(
                    Severity::Error,
                    "An NVIDIA GPU runs on Microsoft Basic Display Adapter",
                    format!("{} is driven by Windows' fallback display driver (BasicDisplay), not NVIDIA's: no NVIDIA driver is installed for it, or its install failed. CUDA cannot use it.", a.hardware_id.as_deref().unwrap_or("The GPU")),
                )
                .fix(
                    "Install the NVIDIA driver for this GPU from NVIDIA's download page and restart Windows:",
                    &[&format!("Start-Process '{DRIVER_DOWNLOAD}'"), "shutdown /r /t 0"],
                )
                .evidence(evidence)
                .link(DRIVER_DOWNLOAD),
            );
        }
    }
    out
}

fn name(a: &DisplayAdapter) -> &str {
    if a.name.is_empty() {
        "The NVIDIA GPU"
    } else {
        &a.name
    }
}

#[cfg(test)]
#[path = "windows_adapter_tests.rs"]
pub(super) mod tests;
