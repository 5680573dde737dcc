//! `smoke.failed`'s cases: the recorded H100's smoke runs (docs/validation: run 3 passed, run 1
//! failed its d2d step), the context timeout of tests/it/rules.rs
//! `a_context_timeout_without_persistence_names_it`, and CUDA_ERROR_UNKNOWN (999) from the context step (a driver fault in knowledge/cuda-driver.yaml).
use super::*;
use crate::report::Category::{DriverFault, EccMemory, SmokeFailure};
use crate::report::Severity::Error;
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const CONTEXT_TIMEOUT: (&str, &str) = (
    "/smoke",
    r#"{"status": "found", "value": {"gpus": [{"ordinal": 0, "index": 0, "steps": [
        {"name": "context", "status": "timed_out", "millis": 0, "detail": "",
         "error": {"call": "context", "name": "", "message": "did not finish within 2900 ms (--timeout); the GPU or the driver may be hung"}}
    ], "millis": 2900}], "millis": 2900}}"#,
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-all-steps-passed",
            base: H100Smoke,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "recorded-h100-d2d-wrong-result",
            base: H100SmokeD2d,
            expect: Fires(Error, SmokeFailure),
            ..CASE
        },
        Case {
            name: "recorded-h100-smoke-not-run",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        // The smoke tests of the recorded no-driver machine: absent, no driver (the check.json
        // beside it in tests/fixtures).
        Case {
            name: "recorded-no-driver-machine",
            base: NoDriver,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "context-timed-out-persistenced-running",
            set: &[CONTEXT_TIMEOUT],
            expect: Fires(Error, SmokeFailure),
            ..CASE
        },
        Case {
            name: "context-timed-out-persistence-off",
            set: &[
                CONTEXT_TIMEOUT,
                ("/driver/daemons/value/0/running", "false"),
                (
                    "/gpus/value/0/persistence_mode",
                    r#"{"status": "found", "value": false}"#,
                ),
                (
                    "/gpus/value/1/persistence_mode",
                    r#"{"status": "found", "value": false}"#,
                ),
            ],
            expect: Fires(Error, SmokeFailure),
            ..CASE
        },
        Case {
            name: "cuinit-timed-out",
            set: &[(
                "/smoke",
                r#"{"status": "found", "value": {"gpus": [], "millis": 2900,
                "error": {"call": "cuInit", "message": "did not finish within 2900 ms (--timeout); the GPU or the driver may be hung"}}}"#,
            )],
            expect: Fires(Error, SmokeFailure),
            ..CASE
        },
        Case {
            name: "memory-step-ecc-uncorrectable",
            set: &[(
                "/smoke",
                r#"{"status": "found", "value": {"gpus": [{"ordinal": 1, "index": 1, "steps": [
                {"name": "context", "status": "passed", "millis": 100, "detail": "primary context"},
                {"name": "memory", "status": "failed", "millis": 20, "detail": "",
                 "error": {"call": "cuMemcpyDtoH", "code": 214, "name": "CUDA_ERROR_ECC_UNCORRECTABLE", "message": "uncorrectable ECC error encountered"}}
            ], "millis": 120}], "millis": 120}}"#,
            )],
            expect: Fires(Error, EccMemory),
            ..CASE
        },
        Case {
            name: "context-unknown-error-999",
            set: &[(
                "/smoke",
                r#"{"status": "found", "value": {"gpus": [{"ordinal": 0, "index": 0, "steps": [
                {"name": "context", "status": "failed", "millis": 3, "detail": "",
                 "error": {"call": "cuDevicePrimaryCtxRetain", "code": 999, "name": "CUDA_ERROR_UNKNOWN", "message": "unknown error"}}
            ], "millis": 3}], "millis": 3}}"#,
            )],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}

/// Without the GPU's NVML index the fix has no per-GPU command (it used to print
/// `sudo nvidia-smi -r -i N`); with it, the commands name the GPU.
#[test]
fn per_gpu_commands_need_the_index() {
    for c in [
        Category::EccMemory,
        Category::SmokeFailure,
        Category::HardwareFault,
    ] {
        let (_, cmds) = fix_for(c, None);
        assert!(!cmds.is_empty(), "{c:?}");
        for cmd in &cmds {
            assert!(
                !cmd.contains(" -i ") && !cmd.contains("--gpu") && !cmd.ends_with(" N"),
                "{c:?}: {cmd}"
            );
        }
        let (_, cmds) = fix_for(c, Some(3));
        assert!(
            cmds.contains(&"sudo nvidia-smi -r -i 3".to_string()),
            "{c:?}: {cmds:?}"
        );
    }
}
