//! `libs.stub-libcuda`'s cases (tests/it/rules.rs `stub_libcuda_ahead_of_the_driver`).
use super::RULE;
use crate::report::{Category::LibraryPathConflict, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "toolkit-stub-first-on-ld-library-path",
            set: &[(
                "/driver/libcuda_files/value",
                r#"[{"path": "/usr/local/cuda-12.6/lib64/stubs/libcuda.so", "origin": "LD_LIBRARY_PATH", "stub": true},
                    {"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "origin": "ld.so.cache", "stub": false}]"#,
            )],
            expect: Fires(Error, LibraryPathConflict),
            ..CASE
        },
        // The stub is there, but after the driver's own: nothing loads it.
        Case {
            name: "toolkit-stub-after-the-driver",
            set: &[(
                "/driver/libcuda_files/value",
                r#"[{"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "origin": "ld.so.cache", "stub": false},
                    {"path": "/usr/local/cuda-12.6/lib64/stubs/libcuda.so", "origin": "LD_LIBRARY_PATH", "stub": true}]"#,
            )],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "libcuda-answers-stub-library",
            set: &[(
                "/driver/libcuda/value/error",
                r#""CUDA_ERROR_STUB_LIBRARY (34)""#,
            )],
            expect: Fires(Error, LibraryPathConflict),
            ..CASE
        },
        Case {
            name: "smoke-cuinit-answers-34",
            set: &[(
                "/smoke",
                r#"{"status": "found", "value": {"gpus": [], "error": {"call": "cuInit", "code": 34, "name": "CUDA_ERROR_STUB_LIBRARY", "message": "CUDA driver is a stub library"}}}"#,
            )],
            expect: Fires(Error, LibraryPathConflict),
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
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
