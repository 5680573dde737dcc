//! Findings, the report and the exit status: plain data made by rules, read by renderers.

use serde::{Deserialize, Serialize};

use crate::snapshot::Snapshot;

pub const REPORT_SCHEMA: &str = "gpudoctor.report/1";

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    pub text: String,
    /// Commands a person can paste, in order.
    #[serde(default)]
    pub commands: Vec<String>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRef {
    pub version: String,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Findings a policy waived (not counted above).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waived: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `check` found: the report of design.md's JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub tool: Tool,
    pub matrix: MatrixRef,
    pub verdict: Verdict,
    pub summary: Summary,
    pub findings: Vec<Finding>,
    pub snapshot: Snapshot,
}

impl Report {
    /// Sorts findings (most severe first, then by area, rule and GPU) and computes the verdict.
    pub fn new(mut findings: Vec<Finding>, snapshot: Snapshot, matrix: MatrixRef) -> Report {
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.area.cmp(&b.area))
                .then(a.rule.cmp(&b.rule))
                .then(a.gpu.cmp(&b.gpu))
        });
        let count = |s| {
            findings
                .iter()
                .filter(|f| f.severity == s && f.waived.is_none())
                .count()
        };
        let summary = Summary {
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            infos: count(Severity::Info),
            waived: findings.iter().filter(|f| f.waived.is_some()).count(),
        };
        let verdict = if summary.errors > 0 {
            Verdict::Fail
        } else if summary.warnings > 0 {
            Verdict::Warn
        } else {
            Verdict::Pass
        };
        Report {
            schema: REPORT_SCHEMA.to_string(),
            tool: Tool {
                name: "gpudoctor".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            matrix,
            verdict,
            summary,
            findings,
            snapshot,
        }
    }

    /// True when a finding at or above `fail_on` exists (exit 1).
    pub fn unfit(&self, fail_on: Severity) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity >= fail_on && f.waived.is_none())
    }
}

/// gpudoctor's exit codes (design.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Healthy,
    Unfit,
    ToolFailed,
    Interrupted,
    Terminated,
    /// `gpudoctor run`: the command's own status (its exit code, or 128 + the signal).
    Passthrough(u8),
}

impl ExitStatus {
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Healthy => 0,
            ExitStatus::Unfit => 1,
            ExitStatus::ToolFailed => 2,
            ExitStatus::Interrupted => 130,
            ExitStatus::Terminated => 143,
            ExitStatus::Passthrough(c) => i32::from(c),
        }
    }
}
