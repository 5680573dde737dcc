//! Windows: the facts that stand where Linux has `/proc`, `/sys`, `/etc` and the kernel log
//! (issue 19). Nothing here reads a Linux path. The parsers are plain functions compiled on every
//! platform, so that recorded Windows data is tested on Linux too; the calls into Windows (the
//! registry, SetupAPI, `wevtutil`) are `cfg(windows)`.

pub mod eventlog;

use std::path::Path;
use std::time::Duration;

use crate::snapshot::{Driver, Host, KernelLog, Probed, WindowsHost};

/// The host facts on Windows.
pub fn host(env: &dyn Fn(&str) -> Option<String>) -> Host {
    let _ = env;
    Host {
        os: "windows".to_string(),
        arch: std::env::consts::ARCH.to_string(),
        windows: Some(tdr_settings()),
        ..Default::default()
    }
}

/// The key that holds the TDR values.
pub const GRAPHICS_DRIVERS_KEY: &str = r"SYSTEM\CurrentControlSet\Control\GraphicsDrivers";

/// What one registry read gave: the value, "not set", or an error code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DwordRead {
    Value(u32),
    NotSet,
    Error(u32),
}

/// TdrDelay and TdrLevel from the reads of the two values (ERROR_FILE_NOT_FOUND, 2, is a value
/// or key that is not there: Windows' default applies).
pub fn tdr_from_reads(delay: DwordRead, level: DwordRead) -> WindowsHost {
    let mut errors = Vec::new();
    let mut take = |name: &str, r: DwordRead| match r {
        DwordRead::Value(v) => Some(v),
        DwordRead::NotSet => None,
        DwordRead::Error(code) => {
            errors.push(format!("{name}: Windows error {code}"));
            None
        }
    };
    let tdr_delay_s = take("TdrDelay", delay);
    let tdr_level = take("TdrLevel", level);
    WindowsHost {
        tdr_delay_s,
        tdr_level,
        registry_error: (!errors.is_empty())
            .then(|| format!("HKLM\\{GRAPHICS_DRIVERS_KEY}: {}", errors.join("; "))),
    }
}

/// Reads TdrDelay and TdrLevel from the registry.
#[cfg(windows)]
pub fn tdr_settings() -> WindowsHost {
    tdr_from_reads(read_dword("TdrDelay"), read_dword("TdrLevel"))
}

#[cfg(not(windows))]
pub fn tdr_settings() -> WindowsHost {
    WindowsHost::default()
}

/// One REG_DWORD under the GraphicsDrivers key.
#[cfg(windows)]
fn read_dword(name: &str) -> DwordRead {
    use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
    use windows_sys::Win32::System::Registry::{
        RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD,
    };
    let wide = |s: &str| -> Vec<u16> { s.encode_utf16().chain(std::iter::once(0)).collect() };
    let key = wide(GRAPHICS_DRIVERS_KEY);
    let value = wide(name);
    let mut data: u32 = 0;
    let mut size: u32 = std::mem::size_of::<u32>() as u32;
    // SAFETY: both names are NUL-terminated UTF-16 that outlive the call; `data` is a u32 and
    // `size` says so; RRF_RT_REG_DWORD makes any other type fail instead of writing more.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    match rc {
        ERROR_SUCCESS => DwordRead::Value(data),
        ERROR_FILE_NOT_FOUND => DwordRead::NotSet,
        e => DwordRead::Error(e),
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

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
