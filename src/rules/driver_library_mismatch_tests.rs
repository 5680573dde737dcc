//! `driver.library-mismatch`'s cases (tests/it/rules.rs `driver_library_mismatch_variations`, on
//! the synthetic 2 × H100 with driver 580.95.05).
use super::RULE;
use crate::report::{Category::DriverLibraryMismatch, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "nvml-reports-another-version",
            set: &[("/driver/nvml/value/driver_version", r#""580.82.07""#)],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        Case {
            name: "nvml-refuses-to-start",
            set: &[(
                "/driver/nvml",
                r#"{"status": "failed", "error": "Driver/library version mismatch", "code": "lib_rm_version_mismatch"}"#,
            )],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        Case {
            name: "libcuda-answers-803",
            set: &[(
                "/driver/libcuda/value/error",
                r#""CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)""#,
            )],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        // A forward-compatibility libcuda (cuda-compat) is newer on purpose.
        Case {
            name: "cuda-compat-libcuda-is-newer-on-purpose",
            set: &[(
                "/driver/libcuda/value",
                r#"{"path": "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01", "file_version": "590.44.01", "cuda_driver_version": 13010}"#,
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
        // Windows: nvml.dll and nvcuda.dll of different drivers (the versions of tests/it/windows_standin.rs `nvml_and_nvcuda_from_different_drivers_are_a_mismatch`).
        Case {
            name: "windows-nvml-and-nvcuda-differ",
            set: &[(
                "/driver/libcuda/value",
                r#"{"path": "C:\\Windows\\system32\\nvcuda.dll", "file_version": "560.94", "cuda_driver_version": 12060}"#,
            )],
            assume: &["os=windows"],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        Case {
            name: "windows-same-driver",
            assume: &["os=windows"],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
