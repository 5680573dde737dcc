//! The snapshot: everything the probes learned about a machine, as plain serde data.
//!
//! This is the only thing rules see. It is versioned (`gpudoctor.snapshot/1`), can be written
//! with `gpudoctor snapshot`, read back with `check --snapshot`, and edited with `--assume`.
//! Every probed value is a [`Probed`]: found, absent (with why), or failed (with the error), so a
//! value that could not be read is never mistaken for zero.
//!
//! Readers ignore fields they do not know, so a snapshot written by a newer gpudoctor that only
//! added fields stays readable by an older one; an incompatible change bumps the schema string.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::vocab::Category;

/// The schema string written into every snapshot; bumped on any incompatible change.
pub const SNAPSHOT_SCHEMA: &str = "gpudoctor.snapshot/1";

/// The outcome of probing one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Probed<T> {
    Found {
        value: T,
    },
    Absent {
        why: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    Failed {
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
}

impl<T> Probed<T> {
    pub fn found(value: T) -> Self {
        Probed::Found { value }
    }
    pub fn absent(why: impl Into<String>) -> Self {
        Probed::Absent {
            why: why.into(),
            code: None,
        }
    }
    pub fn absent_code(code: &str, why: impl Into<String>) -> Self {
        Probed::Absent {
            why: why.into(),
            code: Some(code.to_string()),
        }
    }
    pub fn failed(error: impl Into<String>) -> Self {
        Probed::Failed {
            error: error.into(),
            code: None,
        }
    }
    pub fn failed_code(code: &str, error: impl Into<String>) -> Self {
        Probed::Failed {
            error: error.into(),
            code: Some(code.to_string()),
        }
    }
    /// The value when found.
    pub fn get(&self) -> Option<&T> {
        match self {
            Probed::Found { value } => Some(value),
            _ => None,
        }
    }
    pub fn get_mut(&mut self) -> Option<&mut T> {
        match self {
            Probed::Found { value } => Some(value),
            _ => None,
        }
    }
    pub fn is_found(&self) -> bool {
        matches!(self, Probed::Found { .. })
    }
    /// The machine-readable code of an absent or failed value.
    pub fn code(&self) -> Option<&str> {
        match self {
            Probed::Found { .. } => None,
            Probed::Absent { code, .. } | Probed::Failed { code, .. } => code.as_deref(),
        }
    }
    /// Why the value is missing, for people.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Probed::Found { .. } => None,
            Probed::Absent { why, .. } => Some(why),
            Probed::Failed { error, .. } => Some(error),
        }
    }
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Probed::Found { value } => Probed::Found { value: f(value) },
            Probed::Absent { why, code } => Probed::Absent { why, code },
            Probed::Failed { error, code } => Probed::Failed { error, code },
        }
    }
}

/// True when a value was not probed at all (`--no-probe`): a rule must not judge it.
pub fn unprobed<T>(p: &Probed<T>) -> bool {
    p.code() == Some("not_probed") || p.code() == Some("skipped")
}

impl<T> Default for Probed<T> {
    fn default() -> Self {
        Probed::absent_code("not_probed", "not probed")
    }
}

/// Everything known about one machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema: String,
    /// gpudoctor version that took the snapshot.
    pub tool_version: String,
    /// Seconds since the Unix epoch when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_at: Option<u64>,
    /// True when `snapshot --redact` removed identifying values.
    #[serde(default)]
    pub redacted: bool,
    #[serde(default)]
    pub host: Probed<Host>,
    #[serde(default)]
    pub driver: Driver,
    #[serde(default)]
    pub gpus: Probed<Vec<Gpu>>,
    #[serde(default)]
    pub cuda: Cuda,
    #[serde(default)]
    pub cudnn: Probed<Vec<CudnnLibrary>>,
    #[serde(default)]
    pub python: Probed<Vec<PythonEnv>>,
    /// The operating system's identity: `/etc/os-release` (or `/usr/lib/os-release`); on
    /// Windows, id "windows" with version_id "10"/"11" and the build.
    #[serde(default)]
    pub os_release: Probed<OsRelease>,
    /// Package managers present on PATH, in preference order: "apt", "dnf", "yum", "zypper",
    /// "pacman", "apk", "winget", "choco".
    #[serde(default)]
    pub package_managers: Probed<Vec<String>>,
    /// Whether UEFI Secure Boot is on (a DKMS-built module then needs a key enrolled in MOK).
    #[serde(default)]
    pub secure_boot: Probed<SecureBoot>,
    /// GPU-related kernel log events over the look-back window.
    #[serde(default)]
    pub kernel_log: Probed<KernelLog>,
    /// The GPU smoke tests `check` ran (absent, with why, when they did not run).
    #[serde(default)]
    pub smoke: Probed<SmokeRun>,
    /// What `gpudoctor stress` did (only in its reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stress: Option<StressRun>,
    /// Environment variables that change GPU behaviour, as they were set (unset ones are absent).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Facts given with `--assume KEY=VALUE`, in the order applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed: Vec<Assumption>,
    /// Seconds since boot when the snapshot was taken (counters since driver load are rated
    /// against it: a lower bound of their rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<f64>,
    /// How long each probe took and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeRun>,
}

impl Snapshot {
    /// An empty snapshot where nothing was probed (`--no-probe`).
    pub fn empty() -> Self {
        Snapshot {
            schema: SNAPSHOT_SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            ..Default::default()
        }
    }

    /// The GPUs found, or an empty slice.
    pub fn gpu_list(&self) -> &[Gpu] {
        self.gpus.get().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The Python environments found, or an empty slice.
    pub fn python_envs(&self) -> &[PythonEnv] {
        self.python.get().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The cuDNN libraries found, or an empty slice.
    pub fn cudnn_list(&self) -> &[CudnnLibrary] {
        self.cudnn.get().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The CUDA runtimes found, or an empty slice.
    pub fn runtime_list(&self) -> &[CudaRuntime] {
        self.cuda.runtimes.get().map(Vec::as_slice).unwrap_or(&[])
    }

    /// True when the snapshot holds a fact given by `--assume` for this key.
    pub fn is_assumed(&self, key: &str) -> bool {
        self.assumed.iter().any(|a| a.key == key)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assumption {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRun {
    pub name: String,
    pub millis: u64,
    /// "ok", "timeout", "panic" or "crash" (its helper process died without an answer).
    pub outcome: String,
    /// For a probe that timed out or crashed: the call it was in ("GPU 1: nvmlDeviceGetRemappedRows").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck_in: Option<String>,
    /// For a probe that crashed: how its helper process ended and what it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Host

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// "linux", "windows", "wsl" (Linux under WSL2) or "macos".
    pub os: String,
    pub arch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// "docker", "podman", "kubernetes", "containerd", "lxc" … when inside a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The markers that gave the container away (files, variables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_markers: Vec<String>,
    #[serde(default)]
    pub wsl: bool,
    /// An NVIDIA Jetson/Tegra board (integrated GPU, driver from Jetson Linux), when detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tegra: Option<Tegra>,
    /// Windows only: the settings of Windows' graphics stack that change what a CUDA program
    /// sees (`probe::windows`). None on Linux and in snapshots older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<WindowsHost>,
}

/// Windows' timeout detection and recovery (TDR) settings, REG_DWORD values under
/// `HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers`. A value that is not set means
/// Windows' default: TdrDelay 2 s, TdrLevel 3 (recover on timeout), per Microsoft's "Testing and
/// debugging TDR" page (https://learn.microsoft.com/en-us/windows-hardware/drivers/display/tdr-registry-keys).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowsHost {
    /// `TdrDelay` in seconds; None when it is not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdr_delay_s: Option<u32>,
    /// `TdrLevel` (0 off, 1 bug check, 2 recover to VGA, 3 recover); None when it is not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdr_level: Option<u32>,
    /// Why the GraphicsDrivers key could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_error: Option<String>,
    /// The display adapters Device Manager lists (SetupAPI), with their driver and problem.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adapters: Vec<DisplayAdapter>,
}

/// One display adapter as Device Manager shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DisplayAdapter {
    /// Its description ("NVIDIA GeForce RTX 4090", "Microsoft Basic Display Adapter").
    pub name: String,
    /// Its first hardware id ("PCI\VEN_10DE&DEV_2684&SUBSYS_...").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_id: Option<String>,
    /// The driver service ("nvlddmkm" for NVIDIA's, "BasicDisplay" for Windows' fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Device Manager's problem code ("Code 43") when the device has a problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<u32>,
}

impl DisplayAdapter {
    /// An NVIDIA device: PCI vendor 10DE in its hardware id.
    pub fn is_nvidia(&self) -> bool {
        self.hardware_id
            .as_deref()
            .is_some_and(|h| h.to_ascii_uppercase().contains("VEN_10DE"))
    }
}

impl WindowsHost {
    /// Windows' TdrDelay when the value is not set (seconds).
    pub const DEFAULT_TDR_DELAY_S: u32 = 2;
    /// Windows' TdrLevel when the value is not set: TdrLevelRecover.
    pub const DEFAULT_TDR_LEVEL: u32 = 3;

    /// The TDR delay in force (seconds).
    pub fn tdr_delay(&self) -> u32 {
        self.tdr_delay_s.unwrap_or(Self::DEFAULT_TDR_DELAY_S)
    }

    /// The TDR level in force.
    pub fn tdr_level(&self) -> u32 {
        self.tdr_level.unwrap_or(Self::DEFAULT_TDR_LEVEL)
    }
}

/// What marks a Jetson/Tegra board, and what it says about itself (`probe::tegra`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tegra {
    /// The Jetson Linux (L4T) release from /etc/nv_tegra_release ("R36.4.3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4t: Option<String>,
    /// The SoC from the device tree ("tegra234").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soc: Option<String>,
    /// The board from the device tree ("NVIDIA Jetson AGX Orin Developer Kit").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The files that gave it away.
    pub markers: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Driver

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Driver {
    /// `/proc/driver/nvidia/version`.
    #[serde(default)]
    pub kernel_module: Probed<KernelModule>,
    /// `/sys/module/nvidia/version`.
    #[serde(default)]
    pub sys_module_version: Probed<String>,
    /// NVML initialisation and the versions it reports.
    #[serde(default)]
    pub nvml: Probed<NvmlInfo>,
    /// `libcuda.so.1` as the dynamic loader finds it.
    #[serde(default)]
    pub libcuda: Probed<LibCuda>,
    /// Every file named libcuda.so* on the loader's search path, in search order.
    #[serde(default)]
    pub libcuda_files: Probed<Vec<LibraryFile>>,
    /// Whether the nouveau module is loaded (`/sys/module/nouveau`).
    #[serde(default)]
    pub nouveau_loaded: Probed<bool>,
    /// NVIDIA devices on the PCI bus (sysfs vendor 0x10de) and the kernel driver bound to each.
    #[serde(default)]
    pub pci_devices: Probed<Vec<PciDevice>>,
    /// `/dev/nvidia*` nodes.
    #[serde(default)]
    pub device_nodes: Probed<Vec<DeviceNode>>,
    /// nvidia-persistenced, nv-fabricmanager.
    #[serde(default)]
    pub daemons: Probed<Vec<Daemon>>,
    /// How the driver was installed (which package owns the module and libcuda.so.1, the
    /// `.run` installer's traces, DKMS, precompiled streams).
    #[serde(default)]
    pub install: Probed<DriverInstall>,
}

/// How the NVIDIA driver was installed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverInstall {
    /// "distribution" (the distribution's own packages), "nvidia-repo" (NVIDIA's CUDA repository
    /// packages), "runfile" (the `.run` installer), "precompiled" (kmod streams /
    /// linux-modules-nvidia-*), "windows", "unknown".
    pub method: String,
    /// The module was built by DKMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dkms: Option<bool>,
    /// The package owning the `nvidia` kernel module, e.g. "nvidia-dkms-580-open".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_module: Option<String>,
    /// The package owning libcuda.so.1, e.g. "libnvidia-compute-580".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libcuda_package: Option<String>,
    /// The package manager that owns them: "dpkg", "rpm", "pacman".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
    /// The driver branch ("580") when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The open GPU kernel modules (true) or the proprietary ones (false), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_modules: Option<bool>,
    /// What was read to decide, for the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

/// The fields of os-release(5) that fixes depend on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsRelease {
    /// `ID` ("ubuntu", "rocky", "amzn"); "linux" when the file does not set it (the spec's
    /// default); "windows" on Windows.
    pub id: String,
    /// `ID_LIKE`, space-separated in the file ("rhel centos fedora").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub id_like: Vec<String>,
    /// `VERSION_ID` ("22.04", "9.4", "2023"); unset on rolling releases (Arch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// `PRETTY_NAME`; on Windows "Windows 11 (build 22631)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pretty_name: Option<String>,
}

impl OsRelease {
    /// True when the id or one of the id_like entries is `family` ("rhel", "debian", "suse").
    pub fn is_like(&self, family: &str) -> bool {
        self.id == family || self.id_like.iter().any(|l| l == family)
    }
    /// The major version: the part of VERSION_ID before the first dot ("9" of "9.4").
    pub fn major(&self) -> Option<&str> {
        self.version_id
            .as_deref()
            .map(|v| v.split('.').next().unwrap_or(v))
    }
}

/// UEFI Secure Boot state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecureBoot {
    pub enabled: bool,
    /// How it was read: "mokutil --sb-state", "efivars", "registry", "assumed".
    pub how: String,
}

impl Driver {
    /// The CUDA version the driver supports (1000*major+10*minor), from NVML or libcuda.
    pub fn cuda_version(&self) -> Option<i32> {
        self.nvml
            .get()
            .and_then(|n| n.cuda_driver_version)
            .or_else(|| self.libcuda.get().and_then(|l| l.cuda_driver_version))
            .filter(|v| *v > 0)
    }

    /// The kernel driver version as best known: /proc, then /sys, then NVML.
    pub fn kernel_version(&self) -> Option<&str> {
        if let Some(k) = self.kernel_module.get() {
            return Some(&k.version);
        }
        if let Some(v) = self.sys_module_version.get() {
            return Some(v);
        }
        None
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelModule {
    pub version: String,
    /// "open", "proprietary" or "unknown".
    pub flavor: String,
    /// The architecture named by the open module ("x86_64", "aarch64").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// The NVRM line as read (sanitised).
    pub line: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvmlInfo {
    /// `nvmlSystemGetDriverVersion`, e.g. "580.159.04".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// `nvmlSystemGetCudaDriverVersion`, 1000*major + 10*minor (12040 = 12.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_driver_version: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvml_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_count: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LibCuda {
    /// The file the loader resolved `libcuda.so.1` to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The driver version in the file name (`libcuda.so.560.35.05`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_version: Option<String>,
    /// `cuDriverGetVersion`, 1000*major + 10*minor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_driver_version: Option<i32>,
    /// The CUresult of `cuDriverGetVersion` when it was not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A shared library file found on disk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LibraryFile {
    pub path: String,
    /// Where it was found: "LD_LIBRARY_PATH", "ld.so.cache", "toolkit", "conda", "pip:<env>", …
    pub origin: String,
    /// A link-time stub (a toolkit `stubs/` directory).
    #[serde(default)]
    pub stub: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PciDevice {
    /// `0000:17:00.0`.
    pub bus_id: String,
    /// PCI device id, e.g. "0x2330".
    pub device_id: String,
    /// PCI class, e.g. "0x030200" (3D controller) or "0x068000" (NVSwitch bridge).
    pub class: String,
    /// The kernel driver bound to it ("nvidia", "nouveau", "vfio-pci"), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl PciDevice {
    /// Display (0x03xxxx) devices are GPUs; bridges (NVSwitch) and audio functions are not.
    pub fn is_gpu(&self) -> bool {
        self.class.starts_with("0x03")
    }
    /// NVSwitches show up as NVIDIA "other bridge" devices (class 0x0680).
    pub fn is_nvswitch(&self) -> bool {
        self.class.starts_with("0x0680")
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceNode {
    pub path: String,
    pub readable: bool,
    pub writable: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Daemon {
    /// "nvidia-persistenced" or "nv-fabricmanager".
    pub name: String,
    pub running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The version the daemon reports (`nv-fabricmanager --version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// GPUs

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub index: u32,
    #[serde(default)]
    pub name: Probed<String>,
    #[serde(default)]
    pub uuid: Probed<String>,
    #[serde(default)]
    pub pci_bus_id: Probed<String>,
    /// "8.6".
    #[serde(default)]
    pub compute_capability: Probed<String>,
    #[serde(default)]
    pub memory: Probed<GpuMemory>,
    #[serde(default)]
    pub processes: Probed<Vec<GpuProcess>>,
    #[serde(default)]
    pub persistence_mode: Probed<bool>,
    /// Windows: the driver model, "WDDM" (a display device, under the display driver's timeout),
    /// "TCC" (compute only) or "MCDM"; absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_model: Option<String>,
    /// "default", "exclusive_thread", "prohibited", "exclusive_process".
    #[serde(default)]
    pub compute_mode: Probed<String>,
    #[serde(default)]
    pub mig_mode: Probed<ModePair>,
    #[serde(default)]
    pub ecc_mode: Probed<ModePair>,
    #[serde(default)]
    pub temperature_c: Probed<u32>,
    #[serde(default)]
    pub power_w: Probed<f64>,
    #[serde(default)]
    pub power_limit_w: Probed<f64>,
    #[serde(default)]
    pub clocks: Probed<Clocks>,
    #[serde(default)]
    pub pcie: Probed<PcieLink>,
    /// ECC, retired pages, row remapping, throttling, temperatures, PCIe replays, NVLink.
    #[serde(default)]
    pub health: Probed<GpuHealth>,
}

impl Gpu {
    /// How a GPU whose handle NVML would not give is named: its `name` fails with this reason.
    pub const HANDLE_FAILED: &'static str = "nvmlDeviceGetHandleByIndex failed";

    /// True when NVML would not give this GPU's handle (see [`Gpu::HANDLE_FAILED`]).
    pub fn handle_failed(&self) -> bool {
        self.name
            .reason()
            .is_some_and(|why| why.starts_with(Self::HANDLE_FAILED))
    }

    pub fn label(&self) -> String {
        match self.name.get() {
            Some(n) => format!("GPU {} ({})", self.index, n),
            None => format!("GPU {}", self.index),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuMemory {
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub free_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// None when the driver cannot tell (e.g. inside a container without the PID namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModePair {
    pub current: bool,
    pub pending: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_max_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_max_mhz: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gen: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gen: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
}

// ---------------------------------------------------------------------------------------------
// CUDA

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cuda {
    /// Every libcudart found.
    #[serde(default)]
    pub runtimes: Probed<Vec<CudaRuntime>>,
    /// CUDA toolkits installed under /usr/local/cuda*, CUDA_HOME, …
    #[serde(default)]
    pub toolkits: Probed<Vec<CudaToolkit>>,
    /// The CUDA version in use when given with `--assume cuda=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed_version: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CudaRuntime {
    pub path: String,
    /// Every place it was found from, first one first.
    pub origins: Vec<String>,
    /// Major version from the soname (`libcudart.so.12`, `libcudart.so.11.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soname_major: Option<u32>,
    /// `cudaRuntimeGetVersion` (1000*major + 10*minor).
    #[serde(default)]
    pub api_version: Probed<i32>,
    /// The full version from the file name, version.json or the pip package ("12.9.79").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_version: Option<String>,
    /// True when the dynamic loader finds it by name (LD_LIBRARY_PATH or ld.so.cache).
    #[serde(default)]
    pub on_search_path: bool,
}

impl CudaRuntime {
    /// "12.9" from the API value, else the soname major.
    pub fn version_string(&self) -> Option<String> {
        if let Some(v) = self.api_version.get() {
            return Some(crate::version::cuda_api_to_string(*v));
        }
        self.full_version.clone()
    }
    /// The CUDA major version, from the API value or the soname.
    pub fn major(&self) -> Option<u32> {
        match self.api_version.get() {
            Some(v) if *v > 0 => Some((*v / 1000) as u32),
            _ => self.soname_major,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CudaToolkit {
    pub root: String,
    /// From version.json ("13.3.0") or version.txt ("10.0.130").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `nvcc --version` "release X.Y, VX.Y.Z" → "X.Y.Z".
    #[serde(default)]
    pub nvcc: Probed<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CudnnLibrary {
    pub path: String,
    pub origins: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soname_major: Option<u32>,
    /// "9.1.0", decoded from `cudnnGetVersion` with the 8.x/9.x rule.
    #[serde(default)]
    pub version: Probed<String>,
    /// The raw `cudnnGetVersion` value (8907, 90100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_version: Option<u64>,
    /// From `cudnn_version.h` beside it, or the pip package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_version: Option<String>,
    #[serde(default)]
    pub on_search_path: bool,
}

impl CudnnLibrary {
    pub fn version_string(&self) -> Option<String> {
        self.version
            .get()
            .cloned()
            .or_else(|| self.full_version.clone())
    }
    pub fn major(&self) -> Option<u32> {
        self.version_string()
            .and_then(|v| v.split('.').next().and_then(|m| m.parse().ok()))
            .or(self.soname_major)
    }
}

// ---------------------------------------------------------------------------------------------
// Python and frameworks

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// The interpreter path it was found through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
    pub prefix: String,
    /// "venv", "uv", "conda" (also mamba/micromamba: the tool is in `tool`), "poetry", "pixi",
    /// "pyenv", "system", "given", "assumed".
    pub kind: String,
    /// The tool that made or manages it, when known: "uv", "conda", "mamba", "micromamba",
    /// "poetry", "pixi".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// How it was found: "gpudoctor installed here" (the running binary sits in its bin/ or
    /// Scripts\), "PATH python3", "VIRTUAL_ENV", "CONDA_PREFIX", "--python", "assumed".
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_version: Option<String>,
    #[serde(default)]
    pub site_packages: Vec<String>,
    /// Installed distributions gpudoctor cares about (torch, tensorflow*, jax*, cupy*, nvidia-*).
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<TorchBuild>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensorflow: Option<TensorflowBuild>,
    /// `--deep`: what importing the frameworks said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep: Option<Probed<serde_json::Value>>,
}

impl PythonEnv {
    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.iter().find(|p| p.name == name)
    }
    /// The first installed package whose normalised name starts with one of these.
    pub fn package_prefixed(&self, prefixes: &[&str]) -> Option<&Package> {
        self.packages
            .iter()
            .find(|p| prefixes.iter().any(|pre| p.name.starts_with(pre)))
    }
    /// A short name for findings: the prefix, or the interpreter.
    pub fn label(&self) -> String {
        format!("{} ({})", self.prefix, self.origin)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Package {
    /// Normalised name (PEP 503: lower case, runs of -_. as -).
    pub name: String,
    pub version: String,
    /// The dist-info or egg-info directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TorchBuild {
    /// `__version__` with its local tag ("2.7.1+cu126").
    pub version: String,
    /// `cuda` ("12.6"), None on CPU and ROCm builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// `hip`, set on ROCm builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_version: Option<String>,
}

impl TorchBuild {
    /// A build without CUDA or ROCm: `cuda` and `hip` are None and the local tag says so
    /// ("+cpu"). A version without a tag (a PyPI wheel named by `--assume torch=2.1.0`, or a
    /// macOS wheel) is not judged.
    pub fn is_cpu_only(&self) -> bool {
        if self.cuda.is_some() || self.hip.is_some() {
            return false;
        }
        match self.version.split_once('+') {
            Some((_, tag)) => {
                let tag = tag.to_ascii_lowercase();
                !tag.starts_with("cu") && !tag.starts_with("rocm")
            }
            None => false,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TensorflowBuild {
    /// The distribution it came from ("tensorflow", "tensorflow-cpu", "tf-nightly" …).
    pub package: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_cuda_build: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_rocm_build: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn_version: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuda_compute_capabilities: Vec<String>,
}

impl TensorflowBuild {
    pub fn is_cpu_only(&self) -> bool {
        self.is_cuda_build == Some(false) && self.is_rocm_build != Some(true)
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel log

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLog {
    /// "/dev/kmsg", "dmesg" or "journalctl -k".
    pub source: String,
    pub window_hours: f64,
    /// Lines read within the window.
    pub lines: u64,
    /// Distinct events, each with how often it occurred.
    pub events: Vec<KernelEvent>,
    /// Sources that could not be read, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

impl KernelLog {
    /// [`KernelLog::source`] of a log read from the Windows System event log.
    pub const WINDOWS_EVENT_LOG: &'static str = "System event log";

    /// True when the log was read from the Windows System event log.
    pub fn from_event_log(&self) -> bool {
        self.source == Self::WINDOWS_EVENT_LOG
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelEvent {
    pub event: crate::knowledge::events::LogEvent,
    pub count: u64,
    /// The first line it came from (from "NVRM:" or the signature on; sanitised).
    pub first_line: String,
}

// ---------------------------------------------------------------------------------------------
// GPU health (NVML)

/// What NVML says about a GPU's health. A value the driver could not give is None; why is in
/// `unavailable`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuHealth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc: Option<EccCounts>,
    /// Pre-Ampere dynamic page retirement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired_pages: Option<RetiredPages>,
    /// Ampere and newer row remapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remapped_rows: Option<RemappedRows>,
    /// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (0 none, 1 GPU reset, 2 node reboot, 3 drain P2P,
    /// 4 drain and reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_action: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inforom_valid: Option<bool>,
    /// nvmlDeviceGetCurrentClocksEventReasons bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_event_reasons: Option<u64>,
    /// GPU utilisation in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_gpu: Option<u32>,
    /// Performance state (0 = P0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pstate: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_slowdown_c: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_shutdown_c: Option<u32>,
    /// PCIe replays since the driver loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_replays: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlinks: Vec<NvLinkState>,
    /// MIG devices (GPU/compute instances) present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_devices: Option<u32>,
    /// Calls that failed (not merely unsupported), and why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EccCounts {
    pub volatile_corrected: Option<u64>,
    pub volatile_uncorrected: Option<u64>,
    pub aggregate_corrected: Option<u64>,
    pub aggregate_uncorrected: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_uncorrected_sram: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_uncorrected_dram: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RetiredPages {
    pub single_bit: u64,
    pub double_bit: u64,
    pub pending: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RemappedRows {
    pub correctable: u32,
    pub uncorrectable: u32,
    pub pending: bool,
    pub failure: bool,
    /// Banks with no spare row left (row remapper histogram "none").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub banks_without_spares: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct NvLinkState {
    pub link: u32,
    pub active: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc_errors: Option<u64>,
}

// ---------------------------------------------------------------------------------------------
// GPU smoke tests

/// What the smoke tests did on this machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmokeRun {
    /// `cuDriverGetVersion` (1000*major + 10*minor), after `cuInit` succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_cuda_version: Option<i32>,
    /// cuBLAS for the SGEMM step: the library name loaded, or why it was absent.
    #[serde(default)]
    pub cublas: Probed<String>,
    /// Every GPU tested, by CUDA device ordinal.
    #[serde(default)]
    pub gpus: Vec<SmokeGpu>,
    /// Wall time of the whole smoke phase, in milliseconds.
    #[serde(default)]
    pub millis: u64,
    /// When the run failed before any GPU could be tested (`cuInit`, device count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<GpuCallError>,
}

/// The smoke tests of one GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmokeGpu {
    /// CUDA device ordinal (the order the driver API enumerates, not necessarily NVML's).
    pub ordinal: u32,
    /// NVML index of the same GPU, matched by PCI bus id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// "9.0".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// The UUID the cuDNN step selects the device by (`CUDA_VISIBLE_DEVICES`): "GPU-…", or
    /// "MIG-…" for a MIG instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    pub steps: Vec<SmokeStep>,
    /// Host to device copy rate with pinned memory, GB/s (10^9 bytes per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2d_gbps: Option<f64>,
    /// Device to host copy rate with pinned memory, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d2h_gbps: Option<f64>,
    /// Device to device copy through the SMs (bytes read + bytes written per second), GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d2d_gbps: Option<f64>,
    /// The SGEMM step's rate, GFLOP/s (a small matrix: a sign of life, not a benchmark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sgemm_gflops: Option<f64>,
    /// Wall time of this GPU's steps, in milliseconds.
    #[serde(default)]
    pub millis: u64,
}

/// "GPU 0 (NVIDIA H100 80GB HBM3)" by NVML index, else "CUDA device 1 (…)" by CUDA ordinal.
fn device_label(index: Option<u32>, name: Option<&str>, ordinal: u32) -> String {
    match (index, name) {
        (Some(i), Some(n)) => format!("GPU {i} ({n})"),
        (None, Some(n)) => format!("CUDA device {ordinal} ({n})"),
        _ => format!("CUDA device {ordinal}"),
    }
}

impl SmokeGpu {
    pub fn label(&self) -> String {
        device_label(self.index, self.name.as_deref(), self.ordinal)
    }

    /// The first step that failed or timed out.
    pub fn failure(&self) -> Option<&SmokeStep> {
        self.steps
            .iter()
            .find(|s| matches!(s.status, StepStatus::Failed | StepStatus::TimedOut))
    }
}

/// One step of a GPU's smoke tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmokeStep {
    /// "context", "memory", "pcie", "module", "kernel", "d2d", "sgemm", "cudnn".
    pub name: String,
    pub status: StepStatus,
    #[serde(default)]
    pub millis: u64,
    /// What was done and seen, or why the step was skipped.
    #[serde(default)]
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<GpuCallError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Passed,
    Failed,
    Skipped,
    TimedOut,
}

/// A failed call into the GPU: which call, the CUDA (or cuBLAS, cuDNN) error code, its name
/// and its description; or a wrong result, with `call` naming the check and no code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuCallError {
    pub call: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// "CUDA_ERROR_UNSUPPORTED_PTX_VERSION".
    #[serde(default)]
    pub name: String,
    pub message: String,
}

/// The category of a failed GPU call: the category of its code in the knowledge
/// ([`crate::knowledge::codes`], knowledge/code-categories.yaml), the same category `explain`
/// gives the code. cuDNN and cuBLAS calls carry their library's status (by name: cuDNN 8 and 9
/// number the same status apart); the driver API's calls a CUresult.
pub fn category_of(err: &GpuCallError) -> Category {
    use crate::knowledge::codes;
    // The driver library crashed or exited in the smoke-test process.
    if err.name == "HELPER_CRASHED" {
        return Category::DriverFault;
    }
    let library = ["cudnn", "cublas"]
        .into_iter()
        .find(|l| err.call.starts_with(l));
    if let Some(lib) = library {
        if let Some((_, c)) = codes::by_name(&err.name) {
            return c.category;
        }
        if let (Some(n), "cublas") = (err.code, lib) {
            if let Some(c) = codes::by_num("cublas", n) {
                return c.category;
            }
        }
        // No status: a cuDNN that cannot create a handle on a GPU that runs our own kernels
        // does not fit its CUDA or driver.
        return if lib == "cudnn" {
            Category::CudnnMismatch
        } else {
            Category::SmokeFailure
        };
    }
    err.code
        .and_then(codes::cuda_category)
        .unwrap_or(Category::SmokeFailure)
}

impl std::fmt::Display for GpuCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.name.is_empty()) {
            (Some(c), false) => write!(
                f,
                "{} failed: {} ({c}): {}",
                self.call, self.name, self.message
            ),
            (Some(c), true) => write!(f, "{} failed with code {c}: {}", self.call, self.message),
            (None, _) => write!(f, "{}: {}", self.call, self.message),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stress

/// What `gpudoctor stress` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StressRun {
    /// The duration asked for, in seconds.
    pub planned_seconds: f64,
    /// How long it ran.
    pub seconds: f64,
    /// "memory", "compute".
    pub tests: Vec<String>,
    /// SIGINT or SIGTERM when it was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    pub gpus: Vec<StressGpu>,
    /// When the run could not start (no driver, cuInit failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<GpuCallError>,
}

/// One GPU's stress results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StressGpu {
    pub ordinal: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Memory free when the test started, and how much of it the pattern test held.
    pub free_bytes: u64,
    pub tested_bytes: u64,
    /// Full passes over the tested memory (one pass = every pattern of a round).
    pub memory_rounds: u64,
    /// Words that read back wrong, over all passes.
    pub memory_errors: u64,
    /// The first wrong words, with where and what.
    #[serde(default)]
    pub first_memory_errors: Vec<MemoryError>,
    /// Bytes read and written per second by the pattern kernels, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gbps: Option<f64>,
    /// The device-to-device copy rate measured in the same run, GB/s (the reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_gbps: Option<f64>,
    /// FMA burn launches and the threads whose result was wrong.
    pub compute_launches: u64,
    pub compute_errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fma_gflops: Option<f64>,
    /// cuBLAS GEMMs (every type): launches, elements that differed from that type's first
    /// result (gpu-burn's check); SGEMM's rate is the reference for the FMA burn.
    #[serde(default)]
    pub gemm_launches: u64,
    #[serde(default)]
    pub gemm_errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sgemm_gflops: Option<f64>,
    /// Half-precision and bfloat16 GEMMs (f32 accumulation), compared the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hgemm_gflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bf16_gflops: Option<f64>,
    /// The GEMM types that ran ("sgemm", "hgemm", "bf16gemm"), and those skipped with why.
    #[serde(default)]
    pub gemm_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gemm_skipped: Vec<String>,
    /// Bit flips injected with --inject-faults, and how many of them the test reported at
    /// their address.
    #[serde(default)]
    pub injected_flips: u64,
    #[serde(default)]
    pub injected_found: u64,
    /// What the health watch saw while the GPU was loaded.
    #[serde(default)]
    pub watch: StressWatch,
    /// A CUDA error that stopped this GPU's test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<GpuCallError>,
}

impl StressGpu {
    pub fn label(&self) -> String {
        device_label(self.index, self.name.as_deref(), self.ordinal)
    }
}

/// A wrong word of the memory test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryError {
    /// Which of the test's allocations (chunks of up to 1 GiB, in the order they were
    /// allocated, from 0) the word is in.
    #[serde(default)]
    pub chunk: u32,
    /// That chunk's size in bytes.
    #[serde(default)]
    pub chunk_bytes: u64,
    /// Byte offset from the start of that chunk (the device address is not stable).
    pub offset: u64,
    pub expected: u32,
    pub actual: u32,
    /// expected XOR actual.
    pub flipped_bits: u32,
    /// The pattern that found it.
    pub pattern: String,
}

/// The health watch over a stress run (sampled every second through NVML).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StressWatch {
    pub samples: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_temperature_c: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_sm_mhz: Option<u32>,
    /// Clock event reasons seen while loaded, by name, with the samples they were seen in.
    #[serde(default)]
    pub clock_events: BTreeMap<String, u64>,
    /// Increases during the run.
    #[serde(default)]
    pub ecc_corrected_delta: u64,
    #[serde(default)]
    pub ecc_uncorrected_delta: u64,
    #[serde(default)]
    pub remap_pending: bool,
    #[serde(default)]
    pub pcie_replay_delta: u64,
    /// Xid events seen through NVML's event set.
    #[serde(default)]
    pub xids: Vec<u64>,
    /// Why there was no watch (no NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Why this GPU's Xid events were not watched (the rest of the watch ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xids_unwatched: Option<String>,
}

/// A progress event of `gpudoctor stress` (`gpu::stress` emits it), for the live view and JSON
/// Lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StressEvent {
    Start {
        gpu: u32,
        name: String,
        free_bytes: u64,
        tested_bytes: u64,
        seconds: f64,
    },
    Progress {
        gpu: u32,
        elapsed_s: f64,
        memory_rounds: u64,
        memory_errors: u64,
        compute_launches: u64,
        compute_errors: u64,
        gemm_errors: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        memory_gbps: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        fma_gflops: Option<f64>,
    },
    MemoryErrors {
        gpu: u32,
        pattern: String,
        count: u64,
        first: Vec<MemoryError>,
    },
    ComputeErrors {
        gpu: u32,
        test: String,
        count: u64,
    },
    Sample {
        gpu: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        temperature_c: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        power_w: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        sm_mhz: Option<u32>,
        clock_events: Vec<String>,
    },
    Xid {
        gpu: u32,
        xid: u64,
    },
    Failed {
        gpu: u32,
        error: GpuCallError,
    },
    Done {
        gpu: u32,
    },
}
