//! `nvml.failed`'s cases: NVML's answers as the probe records them (probe::nvml: the code of
//! the NVML return, "nvmlDeviceGetHandleByIndex failed" for a GPU it cannot open), as the
//! stand-in NVML of tests/it/standin_nvml.rs makes them (`device_counts_are_bounded`: count 0).
use super::RULE;
use crate::report::{
    Category::{Configuration, ContainerNoGpu, DriverFault},
    Severity::Error,
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "init-no-permission",
            set: &[(
                "/driver/nvml",
                r#"{"status": "failed", "error": "nvmlInit_v2: NVML_ERROR_NO_PERMISSION (4): Insufficient Permissions", "code": "no_permission"}"#,
            )],
            expect: Fires(Error, Configuration),
            ..CASE
        },
        Case {
            name: "gpu-list-unknown-error",
            set: &[(
                "/gpus",
                r#"{"status": "failed", "error": "nvmlDeviceGetCount_v2: NVML_ERROR_UNKNOWN (999): Unknown Error", "code": "nvml_error"}"#,
            )],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
        Case {
            name: "no-gpus-on-a-host",
            set: &[
                ("/driver/nvml/value/device_count", "0"),
                ("/gpus/value", "[]"),
            ],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
        // The recorded H100 ran in Docker: no GPU there means none was passed in.
        Case {
            name: "no-gpus-in-a-container",
            base: H100,
            set: &[
                ("/driver/nvml/value/device_count", "0"),
                ("/gpus/value", "[]"),
            ],
            expect: Fires(Error, ContainerNoGpu),
            ..CASE
        },
        Case {
            name: "gpu-1-cannot-be-opened",
            set: &[(
                "/gpus/value/1/name",
                r#"{"status": "failed", "error": "nvmlDeviceGetHandleByIndex failed: NVML_ERROR_NO_PERMISSION (4): Insufficient Permissions", "code": "no_permission"}"#,
            )],
            expect: Fires(Error, Configuration),
            ..CASE
        },
        // A lost GPU is health.gpu-lost's to report.
        Case {
            name: "gpu-1-lost",
            set: &[(
                "/gpus/value/1/name",
                r#"{"status": "failed", "error": "nvmlDeviceGetHandleByIndex failed: NVML_ERROR_GPU_IS_LOST (15): GPU is lost", "code": "gpu_lost"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
        // No driver is driver.missing's.
        Case {
            name: "driver-not-loaded",
            set: &[(
                "/driver/nvml",
                r#"{"status": "failed", "error": "driver not loaded", "code": "driver_not_loaded"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "recorded-no-driver-machine",
            base: NoDriver,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "nothing-probed",
            base: Empty,
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
