//! Windows: the facts that stand where Linux has `/proc`, `/sys`, `/etc` and the kernel log
//! (issue 19). Nothing here reads a Linux path. The parsers are plain functions compiled on every
//! platform, so that recorded Windows data is tested on Linux too; the calls into Windows (the
//! registry, SetupAPI, `wevtutil`) are `cfg(windows)`.

pub mod eventlog;

use std::path::Path;
use std::time::Duration;

use crate::snapshot::{Driver, Host, KernelLog, Probed};

/// The host facts on Windows.
pub fn host(env: &dyn Fn(&str) -> Option<String>) -> Host {
    let _ = env;
    Host {
        os: "windows".to_string(),
        arch: std::env::consts::ARCH.to_string(),
        ..Default::default()
    }
}

/// What Linux reads from `/proc/driver/nvidia`, `/sys` and `/dev`: none of it exists on Windows.
pub fn driver_files(root: &Path) -> Driver {
    let _ = root;
    let na = || "not on Windows: the driver is seen through NVML and nvcuda.dll".to_string();
    Driver {
        kernel_module: Probed::absent_code("not_applicable", na()),
        sys_module_version: Probed::absent_code("not_applicable", na()),
        nouveau_loaded: Probed::absent_code("not_applicable", na()),
        pci_devices: Probed::absent_code("not_applicable", na()),
        device_nodes: Probed::absent_code("not_applicable", na()),
        daemons: Probed::absent_code("not_applicable", na()),
        ..Default::default()
    }
}

/// The System event log's NVIDIA entries over the look-back window, in place of the kernel log.
#[cfg(windows)]
pub fn event_log(window_hours: f64, limit: Duration) -> Probed<KernelLog> {
    eventlog::probe(window_hours, limit)
}

#[cfg(not(windows))]
pub fn event_log(window_hours: f64, limit: Duration) -> Probed<KernelLog> {
    let _ = (window_hours, limit);
    Probed::absent_code(
        "not_applicable",
        "the System event log exists on Windows only",
    )
}

/// Seconds since boot (GetTickCount64).
#[cfg(windows)]
pub fn uptime_seconds() -> Option<f64> {
    // SAFETY: GetTickCount64 has no preconditions.
    let ms = unsafe { windows_sys::Win32::System::SystemInformation::GetTickCount64() };
    Some(ms as f64 / 1000.0)
}

#[cfg(not(windows))]
pub fn uptime_seconds() -> Option<f64> {
    None
}
