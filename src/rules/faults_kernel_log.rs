//! `faults.kernel-log`: the other GPU-related kernel log lines: a GPU fallen off the bus,
//! RmInitAdapter failures, API (driver/library) mismatches, nouveau holding the GPU, GPUs the
//! driver does not support, unsigned modules under Secure Boot, PCIe AER errors, the OOM killer
//! and NVSwitch SXids (../shared/reference/faults.md §2c); on Windows, where the System event log
//! stands for the kernel log (`probe::windows::eventlog`), the display driver's TDR resets.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::logparse::{norm_bus_id, LogEvent};
use crate::report::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "faults.kernel-log",
        category: Category::DriverFault,
        area: Area::Driver,
        summary: "NVIDIA driver, PCIe and OOM-killer messages in the kernel log",
        what: "Reads the kernel log of the look-back window for NVRM lines (fallen off the bus, RmInitAdapter failed, API mismatch, probe routine not called, no devices probed, unsupported GPU, open module without GSP), unsigned-module rejections, PCIe AER errors, OOM-killer kills and NVSwitch SXids; on Windows, the System event log's display-driver resets (TDR: Display 4101, nvlddmkm 153).",
        why: "These lines say why a GPU is missing or unusable when NVML only says it is: the driver could not initialise it, a user-space upgrade without reboot, nouveau holding the GPU, Secure Boot rejecting the module, a failing PCIe link.",
        fix: "Follow the fix given with each message.",
    },
    check,
};

/// DCGM's AER threshold: 480 errors (32 a minute over 15 minutes; anchors.md §1.3,
/// nvvs/plugin_src/pcie).
const AER_CORRECTED_THRESHOLD: u64 = 480;

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(log) = ctx.snap.kernel_log.get() else {
        return Vec::new();
    };
    let has_xid79 = |b: &Option<String>| {
        log.events.iter().any(|e| matches!(&e.event, LogEvent::Xid { xid: 79, bus_id, .. } if bus_id == b || b.is_none()))
    };
    let gpu_of = |b: &Option<String>| -> Option<u32> {
        let b = b.as_ref()?;
        ctx.snap
            .gpu_list()
            .iter()
            .find(|g| g.pci_bus_id.get().and_then(|x| norm_bus_id(x)).as_ref() == Some(b))
            .map(|g| g.index)
    };
    let label = if log.source == crate::probe::windows::eventlog::SOURCE {
        "System event log"
    } else {
        "Kernel log"
    };
    let mut out = Vec::new();
    for e in &log.events {
        let times = if e.count == 1 {
            String::new()
        } else {
            format!(" ({} times)", e.count)
        };
        let (sev, cat, area, title, detail, fix, cmds): (Severity, Category, Area, String, String, &str, &[&str]) = match &e.event {
            LogEvent::Xid { .. } => continue,
            LogEvent::FallenOffBus { bus_id } => {
                if has_xid79(bus_id) {
                    continue;
                }
                (Severity::Error, Category::HardwareFault, Area::Gpus, format!("A GPU has fallen off the bus{}{times}", bus_id.as_ref().map(|b| format!(" ({b})")).unwrap_or_default()), "The driver can no longer reach the GPU over PCIe (the register reads return all ones). Causes: power, overheating, a failing riser or slot, or the GPU itself.".to_string(), "Reboot the node, then check power, cooling and PCIe seating; RMA the GPU if it repeats:", &["sudo reboot"])
            }
            LogEvent::RmInitAdapterFailed { bus_id, code } => (Severity::Error, Category::HardwareFault, Area::Gpus, format!("The driver could not initialise the GPU{}{times}", bus_id.as_ref().map(|b| format!(" at {b}")).unwrap_or_default()), format!("RmInitAdapter failed{}: the GPU did not come up (hardware, GSP firmware, power, or an unsupported configuration).", code.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()), "Reboot; if it persists, update the driver, check power and reseat the GPU:", &["sudo dmesg -T | grep -B2 -A5 RmInitAdapter"]),
            LogEvent::ApiMismatch { client_version, module_version } => (Severity::Error, Category::DriverLibraryMismatch, Area::Driver, "The kernel log reports an NVIDIA API mismatch".to_string(), format!("A client of driver {} talked to kernel module {}: the user-space driver was upgraded without reloading the module.", client_version.as_deref().unwrap_or("?"), module_version.as_deref().unwrap_or("?")), "Reboot (or reload the NVIDIA modules when no process uses the GPUs):", &["sudo reboot"]),
            LogEvent::ProbeNotCalled => (Severity::Error, Category::DriverMissing, Area::Driver, "The NVIDIA driver's probe routine was not called".to_string(), "Another driver (usually nouveau) claimed the GPU first, so the NVIDIA module could not bind to it.".to_string(), "Blacklist nouveau, rebuild the initramfs and reboot:", &["echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf", "sudo update-initramfs -u && sudo reboot"]),
            LogEvent::NoDevicesProbed => (Severity::Error, Category::DriverMissing, Area::Driver, "The NVIDIA driver found no usable GPU".to_string(), "NVRM: no NVIDIA devices were probed or initialised: the GPU is bound to another driver, unsupported by this driver branch, or failed to initialise.".to_string(), "Look at the messages around it:", &["sudo dmesg -T | grep -i nvrm | tail -30", "lspci -nnk -d 10de:"]),
            LogEvent::UnsupportedGpu { detail } => (Severity::Error, Category::ArchUnsupported, Area::Gpus, "The driver does not support this GPU".to_string(), detail.clone(), "Install a driver branch that supports the GPU (legacy R470 for Kepler, R580 for Maxwell/Pascal/Volta; a newer branch for new GPUs).", &[]),
            LogEvent::OpenModuleNeedsGsp => (Severity::Error, Category::ArchUnsupported, Area::Gpus, "The open kernel module cannot drive this pre-Turing GPU".to_string(), "The open NVIDIA kernel modules support Turing and newer only (they need the GSP); older GPUs need the proprietary module.".to_string(), "Install the proprietary kernel module flavour of the driver (e.g. nvidia-driver-<branch> instead of -open).", &[]),
            LogEvent::UnsignedModule => (Severity::Error, Category::DriverMissing, Area::Driver, "Secure Boot rejected an unsigned kernel module".to_string(), "The kernel refused to load a module without a trusted signature (Secure Boot / lockdown); if it is the NVIDIA module, no GPU can be used.".to_string(), "Enroll the DKMS signing key (MOK) and reboot, or use signed driver packages:", &["mokutil --sb-state", "sudo mokutil --import /var/lib/dkms/mok.pub"]),
            LogEvent::PcieAer { severity, device } => {
                let uncorrected = severity.starts_with("Uncorrected");
                if !uncorrected && e.count < AER_CORRECTED_THRESHOLD {
                    continue;
                }
                (if uncorrected { Severity::Error } else { Severity::Warning }, Category::PcieDegraded, Area::Gpus, format!("PCIe {severity} errors{}{times}", device.as_ref().map(|d| format!(" at {d}")).unwrap_or_default()), format!("The kernel's AER driver logged {} {severity} PCIe error(s) in the last {} h{}.", e.count, log.window_hours, if uncorrected { "" } else { ", above DCGM's threshold of 480" }), "Reseat the GPU and riser, check the slot's link speed, and run the vendor's PCIe diagnostics:", &["sudo lspci -vvv -s <bus id> | grep -E 'LnkSta|UESta|CESta'"])
            }
            LogEvent::OomKill { pid, process } => (Severity::Info, Category::ApplicationError, Area::Host, format!("The OOM killer killed {}{times}", process.as_deref().unwrap_or("a process")), format!("Host memory ran out and the kernel killed {} (PID {}); such a process exits with status 137.", process.as_deref().unwrap_or("a process"), pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())), "Give the job more host memory (fewer data-loader workers, smaller batches) or raise the container's memory limit.", &[]),
            LogEvent::NvswitchSxid { code } => (Severity::Warning, Category::HardwareFault, Area::Gpus, format!("NVSwitch SXid {code}{times}"), "An NVSwitch reported an error; fatal SXids make the fabric unusable until reset.".to_string(), "Check the Fabric Manager log and nvidia-smi nvlink -e; reset the GPUs and NVSwitches if it repeats.", &[]),
            // Windows' timeout detection and recovery: the GPU did not finish (or yield) within
            // TdrDelay, 2 s by default, and Windows reset the driver
            // (https://learn.microsoft.com/en-us/windows-hardware/drivers/display/tdr-registry-keys).
            LogEvent::DisplayDriverReset { device } => (Severity::Warning, Category::DriverFault, Area::Driver, format!("Windows reset the display driver (TDR){times}"), format!("The display driver{} stopped responding within the TDR delay and Windows reset it; every CUDA context on that GPU was lost (the program sees an error such as cudaErrorLaunchTimeout or a lost device). Typical causes: a CUDA kernel that runs longer than the delay on a GPU that also drives a display (WDDM), or a GPU that hangs (overclock, power, heat, a failing card).", device.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()), "If long kernels cause it, raise TdrDelay (windows.tdr) and restart, or run them on a GPU that drives no display (TCC mode on data-centre and workstation GPUs); if it happens under light load, check the GPU's power, cooling and driver:", &[r#"reg add "HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers" /v TdrDelay /t REG_DWORD /d 60 /f"#, "sudo dmesg -T | grep -i nvrm"]),
        };
        let mut f = doc
            .finding(sev, title, format!("{detail} {label}: {}", e.first_line))
            .fix(fix, cmds)
            .evidence(json!({"event": e.event, "count": e.count, "line": e.first_line, "source": log.source}));
        f.category = cat;
        f.area = area;
        let bus = match &e.event {
            LogEvent::FallenOffBus { bus_id } | LogEvent::RmInitAdapterFailed { bus_id, .. } => {
                bus_id.clone()
            }
            _ => None,
        };
        if let Some(g) = gpu_of(&bus) {
            f = f.on_gpu(g);
        }
        out.push(f);
    }
    out
}
