//! `smoke.failed`: a GPU smoke test failed, timed out or gave a wrong result, or the driver
//! could not be initialised for them. The category comes from the CUDA error
//! ([`crate::gpu::category_of`]); a wrong result is `smoke_failure`.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::snapshot::category_of;
use crate::snapshot::{GpuCallError, StepStatus};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "smoke.failed",
        category: Category::SmokeFailure,
        area: Area::Smoke,
        summary: "A GPU smoke test (context, copies, our own kernel, SGEMM, cuDNN) failed",
    },
    check,
};

/// The fix for a failure of this category: text and commands a person can paste. Commands
/// that name a GPU (`nvidia-smi -i`, `--gpu`) are left out when its NVML index is unknown
/// (a failure before the device was matched to NVML): a placeholder cannot be pasted.
fn fix_for(c: Category, index: Option<u32>) -> (&'static str, Vec<String>) {
    let per_gpu = |f: &dyn Fn(u32) -> String| index.map(f).into_iter();
    match c {
        Category::DriverTooOld => (
            "Install a newer NVIDIA driver: gpudoctor recommend names a branch that fits your frameworks, and compat.driver-too-old (gpudoctor check) prints the install command for this distribution:",
            vec!["gpudoctor recommend".into(), "gpudoctor check --only compat.driver-too-old".into()],
        ),
        Category::ArchUnsupported => (
            "This driver cannot compile kernels for this GPU: install a driver branch that supports its architecture:",
            vec!["gpudoctor recommend".into()],
        ),
        Category::FabricManager => (
            "Start NVIDIA Fabric Manager (its version must equal the driver's) and check it again:",
            vec![
                "sudo systemctl enable --now nvidia-fabricmanager".into(),
                "systemctl status nvidia-fabricmanager".into(),
            ],
        ),
        Category::DriverLibraryMismatch => (
            "The loaded kernel module and the driver libraries differ (an upgrade without a reboot): reboot, or reload the module when no process uses the GPU:",
            vec!["sudo reboot".into()],
        ),
        Category::GpuMemoryExhausted => (
            "Other processes hold this GPU's memory; see which, and stop them:",
            vec!["nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv".into()],
        ),
        Category::EccMemory => (
            "An uncorrectable memory error: drain the node, reset the GPU (or reboot), and check the row-remapping state; replace the GPU if it recurs:",
            per_gpu(&|i| format!("sudo nvidia-smi -r -i {i}"))
                .chain(["nvidia-smi -q -d ROW_REMAPPER,ECC".to_string()])
                .collect(),
        ),
        // CUDA_ERROR_STUB_LIBRARY (34): the libcuda.so.1 the loader resolves is a toolkit's
        // link stub (its stubs/ directory, or a link to it, ahead of the driver's).
        Category::LibraryPathConflict => (
            "The libcuda.so.1 the loader finds is a CUDA toolkit's link stub, not the driver's: remove the toolkit's stubs directory from LD_LIBRARY_PATH (and your shell profile), and any libcuda.so.1 link into it:",
            vec![
                "echo $LD_LIBRARY_PATH".into(),
                "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v '/stubs' | paste -sd:)".into(),
            ],
        ),
        // CUDA_ERROR_NO_DEVICE (100), CUDA_ERROR_DEVICE_UNAVAILABLE (46): hidden or held.
        Category::Configuration => (
            "The driver gives this process no usable GPU: check what hides or holds it (CUDA_VISIBLE_DEVICES, the container's GPU access, the device nodes, the compute mode):",
            vec![
                "echo $CUDA_VISIBLE_DEVICES".into(),
                "ls -l /dev/nvidia*".into(),
                "nvidia-smi --query-gpu=index,compute_mode --format=csv".into(),
            ],
        ),
        _ => (
            "Look for Xid errors in the kernel log, reset the GPU, and run a stress test before trusting it again:",
            ["sudo dmesg | grep -E 'NVRM|Xid' | tail -20".to_string()]
                .into_iter()
                .chain(per_gpu(&|i| format!("sudo nvidia-smi -r -i {i}")))
                .chain(per_gpu(&|i| format!("gpudoctor stress --minutes 5 --gpu {i}")))
                .collect(),
        ),
    }
}

fn finding(
    doc: &RuleDoc,
    title: String,
    err: &GpuCallError,
    timed_out: bool,
    index: Option<u32>,
) -> Finding {
    // The smoke test's own kernels and calls are known good: a code whose category blames the
    // program (application_error) says here that the GPU or driver did not run them.
    let category = match category_of(err) {
        _ if timed_out => Category::SmokeFailure,
        Category::ApplicationError => Category::SmokeFailure,
        c => c,
    };
    let (text, commands) = fix_for(category, index);
    let mut f = doc
        .finding(Severity::Error, title, err.to_string())
        .fix_owned(text, commands)
        .evidence(json!({"error": err}));
    f.category = category;
    if let Some(i) = index {
        f = f.on_gpu(i);
    }
    f
}

/// GPUs (NVML index) with persistence mode off while nvidia-persistenced is not running.
fn without_persistence(ctx: &Context) -> Vec<u32> {
    let persistenced = ctx.snap.driver.daemons.get().is_some_and(|d| {
        d.iter()
            .any(|x| x.name == "nvidia-persistenced" && x.running)
    });
    if persistenced {
        return Vec::new();
    }
    ctx.snap
        .gpu_list()
        .iter()
        .filter(|g| g.persistence_mode.get() == Some(&false))
        .map(|g| g.index)
        .collect()
}

/// A smoke run that timed out while the driver was bringing GPUs up (cuInit, or a GPU's
/// `context` step) on a node with persistence mode off: without persistence the driver
/// initialises every GPU when a process first opens it, 1-3 s per GPU and more on an 8-GPU
/// node, and the smoke tests' deadline can pass before they are up (NVIDIA Driver Persistence,
/// docs.nvidia.com/deploy/driver-persistence). Says so in the finding's detail and fix.
fn persistence_hint(f: Finding, off: &[u32]) -> Finding {
    if off.is_empty() {
        return f;
    }
    let list: Vec<String> = off.iter().map(|i| i.to_string()).collect();
    let mut f = f;
    f.detail = format!(
        "{} Persistence mode is off on GPU {} and nvidia-persistenced is not running: the driver initialises each GPU when a process first opens it (1-3 s per GPU, GPUs one after another), which is the likely reason the deadline passed.",
        f.detail,
        list.join(", ")
    );
    if let Some(o) = f.evidence.as_object_mut() {
        o.insert("persistence_mode_off".into(), json!(off));
    }
    f.fix_owned(
        "Keep the GPUs initialised with the persistence daemon (or legacy persistence mode), then check again; or give check more time (--timeout):",
        vec![
            "sudo systemctl enable --now nvidia-persistenced".into(),
            "sudo nvidia-smi -pm 1".into(),
        ],
    )
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(run) = ctx.snap.smoke.get() else {
        return Vec::new();
    };
    let off = without_persistence(ctx);
    if let Some(e) = &run.error {
        // A timeout (no CUresult, no name) while the driver initialised.
        let init_timeout = e.code.is_none()
            && e.name.is_empty()
            && matches!(e.call.as_str(), "cuInit" | "cuDeviceGetCount");
        let f = finding(
            doc,
            format!(
                "The CUDA driver could not be initialised for the smoke tests ({})",
                if e.name.is_empty() {
                    e.call.as_str()
                } else {
                    e.name.as_str()
                }
            ),
            e,
            false,
            None,
        );
        return vec![if init_timeout {
            persistence_hint(f, &off)
        } else {
            f
        }];
    }
    run.gpus
        .iter()
        .filter_map(|g| {
            let step = g.failure()?;
            let err = step.error.clone().unwrap_or_else(|| GpuCallError {
                call: step.name.clone(),
                message: "failed".into(),
                ..Default::default()
            });
            let timed_out = step.status == StepStatus::TimedOut;
            let what = if timed_out {
                "hung".to_string()
            } else if err.name == "WRONG_RESULT" {
                "gave a wrong result".to_string()
            } else if err.name.is_empty() {
                "failed".to_string()
            } else {
                format!("failed: {}", err.name)
            };
            let f = finding(
                doc,
                format!("{}: smoke test '{}' {what}", g.label(), step.name),
                &err,
                timed_out,
                g.index,
            );
            Some(if timed_out && step.name == "context" {
                persistence_hint(f, &off)
            } else {
                f
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "smoke_failed_tests.rs"]
pub(super) mod tests;
