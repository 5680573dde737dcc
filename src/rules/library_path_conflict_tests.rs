//! `libs.path-conflict`'s cases (tests/it/rules.rs `runtimes_of_two_majors_on_the_search_path`;
//! tests/it/real_libraries.rs shows the same with the real libcudart 12 and 13 of PyPI).
use super::RULE;
use crate::report::{Category::LibraryPathConflict, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const TWO_RUNTIMES: (&str, &str) = (
    "/cuda/runtimes/value",
    r#"[{"path": "/usr/local/cuda-11.8/lib64/libcudart.so.11.8.89", "origins": ["LD_LIBRARY_PATH"], "soname_major": 11, "api_version": {"status": "found", "value": 11080}, "on_search_path": true},
        {"path": "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "origins": ["ld.so.cache"], "soname_major": 12, "api_version": {"status": "found", "value": 12040}, "on_search_path": true}]"#,
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "cudart-11-and-12-on-the-search-path",
            set: &[TWO_RUNTIMES],
            expect: Fires(Warning, LibraryPathConflict),
            ..CASE
        },
        // One only reachable through pip's RPATH: no conflict.
        Case {
            name: "cudart-11-only-through-rpath",
            set: &[
                TWO_RUNTIMES,
                ("/cuda/runtimes/value/0/on_search_path", "false"),
            ],
            expect: Quiet,
            ..CASE
        },
        // The recorded H100: libcudart 13 from the toolkit and from pip, cuDNN 9.14 and 9.19: one
        // major each.
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "cudnn-8-and-9-on-the-search-path",
            base: H100,
            set: &[(
                "/cudnn/value/1",
                r#"{"path": "/usr/local/cuda-11.8/lib64/libcudnn.so.8.9.7", "origins": ["LD_LIBRARY_PATH"], "soname_major": 8, "version": {"status": "found", "value": "8.9.7"}, "raw_version": 8907, "on_search_path": true}"#,
            )],
            expect: Fires(Warning, LibraryPathConflict),
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
