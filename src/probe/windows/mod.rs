//! Windows: the facts that stand where Linux has `/proc`, `/sys`, `/etc` and the kernel log
//! (issue 19). Nothing here reads a Linux path. The parsers are plain functions compiled on every
//! platform, so that recorded Windows data is tested on Linux too; the calls into Windows (the
//! registry, SetupAPI, `wevtutil`) are `cfg(windows)`.

pub mod adapters;
pub mod eventlog;
pub mod registry;

use std::path::{Path, PathBuf};

use crate::snapshot::{
    Driver, DriverInstall, Host, KernelLog, OsRelease, Probed, SecureBoot, WindowsHost,
};

/// The host facts on Windows: the edition, release and build from
/// `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion`, where winver reads them.
pub fn host(env: &dyn Fn(&str) -> Option<String>) -> Host {
    let _ = env;
    use registry::{dword, string, Root};
    const KEY: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
    let get = |name: &str| string(Root::LocalMachine, KEY, Some(name));
    let build = get("CurrentBuild").or_else(|| get("CurrentBuildNumber"));
    let ubr = dword(Root::LocalMachine, KEY, "UBR");
    Host {
        os: "windows".to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel: build.as_deref().map(|b| {
            let b = crate::sanitize::clean_line(b, 20);
            match ubr {
                Some(u) => format!("NT 10.0 build {b}.{u}"),
                None => format!("NT 10.0 build {b}"),
            }
        }),
        distribution: get("ProductName").map(|p| {
            describe_os(
                &p,
                get("DisplayVersion")
                    .or_else(|| get("ReleaseId"))
                    .as_deref(),
                build.as_deref(),
                ubr,
            )
        }),
        windows: Some(WindowsHost {
            adapters: adapters::probe(),
            ..tdr_settings()
        }),
        ..Default::default()
    }
}

/// "Windows 11 Pro 23H2 (build 22631.4460)" from the registry's values. Windows 11 still says
/// "Windows 10" in ProductName; its builds start at 22000 (Windows 10 ends at 1904x, Server
/// 2022 is 20348: https://github.com/nvaccess/nvda/issues/12509).
pub fn describe_os(
    product: &str,
    release: Option<&str>,
    build: Option<&str>,
    ubr: Option<u32>,
) -> String {
    let clean = |s: &str| crate::sanitize::clean_line(s.trim(), 60);
    let mut name = clean(product);
    let build_no: Option<u32> = build.and_then(|b| b.trim().parse().ok());
    if build_no.is_some_and(|b| b >= 22000) {
        if let Some(rest) = name.strip_prefix("Windows 10") {
            name = format!("Windows 11{rest}");
        }
    }
    if let Some(r) = release.map(clean).filter(|r| !r.is_empty()) {
        name = format!("{name} {r}");
    }
    match (build.map(clean), ubr) {
        (Some(b), Some(u)) => format!("{name} (build {b}.{u})"),
        (Some(b), None) => format!("{name} (build {b})"),
        _ => name,
    }
}

/// The os-release facts of Windows: id "windows", version_id "11" from build 22000 on, else
/// "10" (the same build boundary as `describe_os`), and winver's name as pretty_name.
pub fn os_release_from(
    product: Option<&str>,
    release: Option<&str>,
    build: Option<&str>,
    ubr: Option<u32>,
) -> OsRelease {
    let build_no: Option<u32> = build.and_then(|b| b.trim().parse().ok());
    OsRelease {
        id: "windows".to_string(),
        id_like: Vec::new(),
        version_id: build_no.map(|b| if b >= 22000 { "11" } else { "10" }.to_string()),
        pretty_name: product.map(|p| describe_os(p, release, build, ubr)),
    }
}

/// This machine's os-release facts from the registry (where winver reads them).
pub fn os_release() -> Probed<OsRelease> {
    use registry::{dword, string, Root};
    const KEY: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
    let get = |name: &str| string(Root::LocalMachine, KEY, Some(name));
    let build = get("CurrentBuild").or_else(|| get("CurrentBuildNumber"));
    if build.is_none() && get("ProductName").is_none() {
        return Probed::failed(format!(
            "HKLM\\{KEY}: CurrentBuild and ProductName could not be read"
        ));
    }
    Probed::found(os_release_from(
        get("ProductName").as_deref(),
        get("DisplayVersion")
            .or_else(|| get("ReleaseId"))
            .as_deref(),
        build.as_deref(),
        dword(Root::LocalMachine, KEY, "UBR"),
    ))
}

/// The key whose `UEFISecureBootEnabled` REG_DWORD is 1 when Secure Boot is on (Microsoft,
/// "Secure Boot" registry, https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/disabling-secure-boot).
pub const SECURE_BOOT_KEY: &str = r"SYSTEM\CurrentControlSet\Control\SecureBoot\State";

/// Secure Boot from the value's read.
pub fn secure_boot_from(read: DwordRead) -> Probed<SecureBoot> {
    match read {
        DwordRead::Value(v) => Probed::found(SecureBoot {
            enabled: v == 1,
            how: "registry".to_string(),
        }),
        DwordRead::NotSet => Probed::absent_code(
            "no_efi",
            format!("HKLM\\{SECURE_BOOT_KEY} has no UEFISecureBootEnabled: a legacy BIOS boot, or Windows does not report it"),
        ),
        DwordRead::Error(code) => Probed::failed(format!(
            "HKLM\\{SECURE_BOOT_KEY}\\UEFISecureBootEnabled: Windows error {code}"
        )),
    }
}

#[cfg(windows)]
pub fn secure_boot() -> Probed<SecureBoot> {
    secure_boot_from(
        match registry::dword_result(
            registry::Root::LocalMachine,
            SECURE_BOOT_KEY,
            "UEFISecureBootEnabled",
        ) {
            Ok(Some(v)) => DwordRead::Value(v),
            Ok(None) => DwordRead::NotSet,
            Err(e) => DwordRead::Error(e),
        },
    )
}

#[cfg(not(windows))]
pub fn secure_boot() -> Probed<SecureBoot> {
    Probed::absent_code(
        "not_applicable",
        "the Windows registry exists on Windows only",
    )
}

/// The driver's installation on Windows: always NVIDIA's installer (or Windows Update), which
/// the fixes call "windows".
pub fn driver_install(driver_version: Option<&str>) -> Probed<DriverInstall> {
    Probed::found(DriverInstall {
        method: "windows".to_string(),
        branch: driver_version
            .and_then(|v| v.split('.').next())
            .filter(|b| b.len() == 3 && b.bytes().all(|c| c.is_ascii_digit()))
            .map(str::to_string),
        evidence: vec![
            "Windows: the display driver package (NVIDIA's installer or Windows Update)"
                .to_string(),
        ],
        ..Default::default()
    })
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
        adapters: Vec::new(),
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
    match registry::dword_result(registry::Root::LocalMachine, GRAPHICS_DRIVERS_KEY, name) {
        Ok(Some(v)) => DwordRead::Value(v),
        Ok(None) => DwordRead::NotSet,
        Err(e) => DwordRead::Error(e),
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

/// The System event log's NVIDIA entries over the look-back window, in place of the kernel log,
/// read within the time left before `deadline`.
#[cfg(windows)]
pub fn event_log(window_hours: f64, deadline: super::deadline::Deadline) -> Probed<KernelLog> {
    eventlog::probe(window_hours, deadline.remaining())
}

#[cfg(not(windows))]
pub fn event_log(window_hours: f64, deadline: super::deadline::Deadline) -> Probed<KernelLog> {
    let _ = (window_hours, deadline);
    Probed::absent_code(
        "not_applicable",
        "the System event log exists on Windows only",
    )
}

/// `fs::canonicalize` without Windows' verbatim prefix: `\\?\C:\x` is printed as `C:\x` and
/// `\\?\UNC\server\share` as `\\server\share`, as Explorer and every error message show
/// paths. Elsewhere it is `fs::canonicalize` itself.
pub fn canonical(p: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(p).map(|c| plain_path(&c.to_string_lossy()))
}

/// The folders in `dir`, sorted (install folders such as `CUDA\v*` or `Python3*`); none when it
/// cannot be read.
pub fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// A path string without the verbatim prefix (see [`canonical`]).
pub fn plain_path(s: &str) -> PathBuf {
    if let Some(rest) = s.strip_prefix(r"\\?\UNC\") {
        return PathBuf::from(format!(r"\\{rest}"));
    }
    if let Some(rest) = s.strip_prefix(r"\\?\") {
        let b = rest.as_bytes();
        if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
            return PathBuf::from(rest);
        }
    }
    PathBuf::from(s)
}

/// No error dialog for a crash or a missing DLL, in gpudoctor and (inherited) its helpers: a
/// helper that faults inside a driver library must end at once with its NTSTATUS, not wait for
/// someone to close a Windows Error Reporting window until its deadline kills it.
#[cfg(windows)]
pub fn no_crash_dialogs() {
    use windows_sys::Win32::System::Diagnostics::Debug::{
        SetErrorMode, SEM_FAILCRITICALERRORS, SEM_NOGPFAULTERRORBOX, SEM_NOOPENFILEERRORBOX,
    };
    // SAFETY: SetErrorMode only sets this process's error mode.
    unsafe {
        SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    }
}

#[cfg(not(windows))]
pub fn no_crash_dialogs() {}

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
pub(crate) mod tests;
