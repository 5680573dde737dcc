//! The shared vocabulary under the whole pipeline (docs/decisions.md, "The pipeline's
//! direction"): the categories, severities and areas of a finding, a fix, the finding itself
//! (plain data rules make and the report collects) and the time helpers. It imports nothing of
//! the crate, so probes, knowledge, rules, the report and the renderers can all name it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The fixed category vocabulary of design.md (add new ones, never rename these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    DriverMissing,
    DriverTooOld,
    DriverLibraryMismatch,
    ArchUnsupported,
    CudaRuntimeMismatch,
    CudnnMismatch,
    CpuOnlyBuild,
    FabricManager,
    ContainerNoGpu,
    LibraryPathConflict,
    GpuMemoryExhausted,
    EccMemory,
    HardwareFault,
    DriverFault,
    ThermalPower,
    PcieDegraded,
    Configuration,
    SmokeFailure,
    StressFailure,
    WindowsCrashCode,
    ApplicationError,
    ProbeTimeout,
    /// Host RAM or a cgroup limit ran out: the OOM killer, exit 137, "Killed".
    HostMemoryExhausted,
    /// A version newer than the compatibility matrix knows: gpudoctor cannot tell ([?]).
    MatrixStale,
}

impl Category {
    /// Every category of design.md's vocabulary.
    pub const ALL: [Category; 24] = [
        Category::DriverMissing,
        Category::DriverTooOld,
        Category::DriverLibraryMismatch,
        Category::ArchUnsupported,
        Category::CudaRuntimeMismatch,
        Category::CudnnMismatch,
        Category::CpuOnlyBuild,
        Category::FabricManager,
        Category::ContainerNoGpu,
        Category::LibraryPathConflict,
        Category::GpuMemoryExhausted,
        Category::EccMemory,
        Category::HardwareFault,
        Category::DriverFault,
        Category::ThermalPower,
        Category::PcieDegraded,
        Category::Configuration,
        Category::SmokeFailure,
        Category::StressFailure,
        Category::WindowsCrashCode,
        Category::ApplicationError,
        Category::ProbeTimeout,
        Category::HostMemoryExhausted,
        Category::MatrixStale,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::DriverMissing => "driver_missing",
            Category::DriverTooOld => "driver_too_old",
            Category::DriverLibraryMismatch => "driver_library_mismatch",
            Category::ArchUnsupported => "arch_unsupported",
            Category::CudaRuntimeMismatch => "cuda_runtime_mismatch",
            Category::CudnnMismatch => "cudnn_mismatch",
            Category::CpuOnlyBuild => "cpu_only_build",
            Category::FabricManager => "fabric_manager",
            Category::ContainerNoGpu => "container_no_gpu",
            Category::LibraryPathConflict => "library_path_conflict",
            Category::GpuMemoryExhausted => "gpu_memory_exhausted",
            Category::EccMemory => "ecc_memory",
            Category::HardwareFault => "hardware_fault",
            Category::DriverFault => "driver_fault",
            Category::ThermalPower => "thermal_power",
            Category::PcieDegraded => "pcie_degraded",
            Category::Configuration => "configuration",
            Category::SmokeFailure => "smoke_failure",
            Category::StressFailure => "stress_failure",
            Category::WindowsCrashCode => "windows_crash_code",
            Category::ApplicationError => "application_error",
            Category::ProbeTimeout => "probe_timeout",
            Category::HostMemoryExhausted => "host_memory_exhausted",
            Category::MatrixStale => "matrix_stale",
        }
    }
}

/// Where a finding is shown in the doctor-style human output: one line per area.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    #[default]
    Host,
    Driver,
    Gpus,
    Cuda,
    Cudnn,
    Frameworks,
    Environment,
    /// The GPU smoke tests (shown only when they ran or have findings).
    Smoke,
    /// `gpudoctor stress` (only in its reports).
    Stress,
}

impl Area {
    pub const ALL: [Area; 9] = [
        Area::Host,
        Area::Driver,
        Area::Gpus,
        Area::Smoke,
        Area::Stress,
        Area::Cuda,
        Area::Cudnn,
        Area::Frameworks,
        Area::Environment,
    ];
    /// The name in JSON and Prometheus labels (serde's name).
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Host => "host",
            Area::Driver => "driver",
            Area::Gpus => "gpus",
            Area::Cuda => "cuda",
            Area::Cudnn => "cudnn",
            Area::Frameworks => "frameworks",
            Area::Environment => "environment",
            Area::Smoke => "smoke",
            Area::Stress => "stress",
        }
    }
    pub fn title(self) -> &'static str {
        match self {
            Area::Host => "Host",
            Area::Driver => "NVIDIA driver",
            Area::Gpus => "GPUs",
            Area::Cuda => "CUDA",
            Area::Cudnn => "cuDNN",
            Area::Frameworks => "Frameworks",
            Area::Environment => "Environment",
            Area::Smoke => "GPU smoke tests",
            Area::Stress => "Stress test",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    pub text: String,
    /// Commands a person can paste, in order.
    #[serde(default)]
    pub commands: Vec<String>,
    /// The shell the commands are written for: "sh", "powershell" or "cmd".
    #[serde(default = "default_shell")]
    pub shell: String,
    /// True when a command needs root (sudo) or an Administrator terminal.
    #[serde(default)]
    pub needs_root: bool,
}

fn default_shell() -> String {
    "sh".to_string()
}

impl Default for Fix {
    fn default() -> Self {
        Fix {
            text: String::new(),
            commands: Vec::new(),
            shell: default_shell(),
            needs_root: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    pub category: Category,
    pub title: String,
    pub detail: String,
    pub fix: Fix,
    pub evidence: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    #[serde(default)]
    pub links: Vec<String>,
    /// Set when a `--policy` waiver covers it: it still shows, but no longer counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waived: Option<Waived>,
    /// Where the human renderer shows it (not part of the JSON contract).
    #[serde(skip)]
    pub area: Area,
}

/// A policy waiver on a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waived {
    pub reason: String,
    /// YYYY-MM-DD, the last day it holds.
    pub expires: String,
    /// Where the waiver is: "policy.yaml:12:5".
    pub policy: String,
}

/// Days since 1970-01-01 of a YYYY-MM-DD date, or None when it is not a real date.
pub fn days(date: &str) -> Option<i64> {
    let mut p = date.split('-');
    let (y, m, d): (i64, i64, i64) = (
        p.next()?.parse().ok()?,
        p.next()?.parse().ok()?,
        p.next()?.parse().ok()?,
    );
    if p.next().is_some() || date.len() != 10 || !(1..=12).contains(&m) {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let len = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d < 1 || d > *len.get((m - 1) as usize)? {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// A rule's own documentation.
#[derive(Debug, Clone, Copy)]
pub struct RuleDoc {
    pub id: &'static str,
    pub category: Category,
    pub area: Area,
    /// One line for `gpudoctor rules`.
    pub summary: &'static str,
}

/// Bytes as GiB with one decimal.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}
