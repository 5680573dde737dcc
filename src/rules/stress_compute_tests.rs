//! `stress.compute`'s cases: the recorded H100's `stress --minutes 3` (docs/validation run 3:
//! 4172 FMA launches and 12516 GEMMs, 0 errors, 47593 GFLOP/s), alone and beside a second GPU.
use super::RULE;
use crate::report::{
    Category::StressFailure,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const S: Case = Case {
    base: H100Stress,
    ..CASE
};

/// A second H100 beside it: the same record, index 1, its FMA rate given.
macro_rules! second {
    ($gflops:literal) => {
        (
            "/stress/gpus/-",
            concat!(
                r#"{"ordinal": 1, "index": 1, "name": "NVIDIA H100 80GB HBM3", "free_bytes": 84465090560, "tested_bytes": 81260032528,
                    "memory_rounds": 347, "memory_errors": 0, "first_memory_errors": [], "compute_launches": 4172, "compute_errors": 0,
                    "fma_gflops": "#,
                $gflops,
                r#", "gemm_launches": 12516, "gemm_errors": 0, "gemm_types": ["sgemm", "hgemm", "bf16gemm"], "injected_flips": 0, "injected_found": 0,
                    "watch": {"samples": 179, "clock_events": {}, "ecc_corrected_delta": 0, "ecc_uncorrected_delta": 0, "remap_pending": false, "pcie_replay_delta": 0, "xids": []}}"#
            ),
        )
    };
}

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-passed",
            expect: Quiet,
            ..S
        },
        Case {
            name: "wrong-fma-results",
            set: &[("/stress/gpus/0/compute_errors", "12")],
            expect: Fires(Error, StressFailure),
            ..S
        },
        Case {
            name: "wrong-gemm-results",
            set: &[("/stress/gpus/0/gemm_errors", "3")],
            expect: Fires(Error, StressFailure),
            ..S
        },
        // The median of two is the faster; 85 % of 47593 is 40454.
        Case {
            name: "second-gpu-at-84-percent",
            set: &[second!("40000.0")],
            expect: Fires(Warning, StressFailure),
            ..S
        },
        Case {
            name: "second-gpu-at-86-percent",
            set: &[second!("41000.0")],
            expect: Quiet,
            ..S
        },
        Case {
            name: "memory-only-run",
            set: &[
                ("/stress/tests", r#"["memory"]"#),
                ("/stress/gpus/0/compute_errors", "12"),
            ],
            expect: Quiet,
            ..S
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
