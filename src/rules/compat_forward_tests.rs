//! `compat.forward-compat`'s cases (tests/it/rules.rs
//! `forward_compatibility_on_a_supported_and_an_unsupported_branch`: cuda-compat 13.1, whose
//! libcuda is 590.44.01, on the synthetic 2 × H100 with the kernel module of another branch).
use super::RULE;
use crate::report::{
    Category::{DriverLibraryMismatch, DriverTooOld},
    Severity::Error,
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const COMPAT: (&str, &str) = (
    "/driver/libcuda/value",
    r#"{"path": "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01", "file_version": "590.44.01", "cuda_driver_version": 13010}"#,
);
const R535: &[(&str, &str)] = &[
    ("/driver/kernel_module/value/version", r#""535.216.01""#),
    ("/driver/sys_module_version/value", r#""535.216.01""#),
    ("/driver/nvml/value/driver_version", r#""535.216.01""#),
];
const R550: &[(&str, &str)] = &[
    ("/driver/kernel_module/value/version", r#""550.127.08""#),
    ("/driver/sys_module_version/value", r#""550.127.08""#),
    ("/driver/nvml/value/driver_version", r#""550.127.08""#),
];

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "cuda-compat-13-1-on-r535",
            set: &[R535[0], R535[1], R535[2], COMPAT],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "cuda-compat-13-1-on-r550",
            set: &[R550[0], R550[1], R550[2], COMPAT],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        Case {
            name: "cuda-compat-on-geforce",
            set: &[
                R535[0],
                R535[1],
                R535[2],
                COMPAT,
                ("/gpus/value/0/name/value", r#""NVIDIA GeForce RTX 4090""#),
            ],
            expect: Fires(Error, DriverTooOld),
            ..CASE
        },
        // The driver's own libcuda, not a compat one.
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
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
