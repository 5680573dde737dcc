//! `stress.run`'s cases: the recorded H100's `stress --minutes 3` (docs/validation run 3,
//! passed), its SIGTERM at 12 of 60 s (run 5, sigterm.txt), a machine with no driver (the error
//! gpu::cudadrv writes when libcuda.so.1 does not load), and a GPU stopped by a CUDA error.
use super::RULE;
use crate::report::{
    Category::{DriverMissing, EccMemory, StressFailure},
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const S: Case = Case {
    base: H100Stress,
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-passed",
            expect: Quiet,
            ..S
        },
        Case {
            name: "recorded-h100-with-xid-31-from-another-process",
            base: H100StressXid,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "no-stress-run",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "interrupted-by-sigterm",
            set: &[
                ("/stress/planned_seconds", "60.0"),
                ("/stress/seconds", "12.2"),
                ("/stress/interrupted_by", r#""SIGTERM""#),
            ],
            expect: Fires(Warning, StressFailure),
            ..S
        },
        Case {
            name: "no-driver",
            base: NoDriver,
            set: &[(
                "/stress",
                r#"{"planned_seconds": 60.0, "seconds": 0.0, "tests": ["memory", "compute"], "gpus": [],
                "error": {"call": "dlopen libcuda", "message": "the CUDA driver library (libcuda.so.1) could not be loaded (libcuda.so.1: cannot open shared object file: No such file or directory): no NVIDIA driver is installed for this system or container"}}"#,
            )],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "no-gpu-tested",
            set: &[("/stress/gpus", "[]")],
            expect: Fires(Error, StressFailure),
            ..S
        },
        Case {
            name: "gpu-stopped-on-an-ecc-error",
            set: &[(
                "/stress/gpus/0/failure",
                r#"{"call": "cuStreamSynchronize", "code": 214, "name": "CUDA_ERROR_ECC_UNCORRECTABLE", "message": "uncorrectable ECC error encountered"}"#,
            )],
            expect: Fires(Error, EccMemory),
            ..S
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
