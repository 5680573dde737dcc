//! `compat.cuda-runtime`'s cases (tests/it/rules.rs `a_framework_without_its_cuda_runtime`: the
//! synthetic 2 × H100's torch 2.7.1+cu126 without, with an older and with its own CUDA 12
//! runtime).
use super::RULE;
use crate::report::{
    Category::CudaRuntimeMismatch,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const CUDART_12_4: (&str, &str) = (
    "/cuda/runtimes/value",
    r#"[{"path": "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "origins": ["LD_LIBRARY_PATH"], "soname_major": 12, "api_version": {"status": "found", "value": 12040}, "on_search_path": true}]"#,
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
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
            name: "cu126-without-a-cuda-12-runtime",
            set: &[("/cuda/runtimes/value", "[]")],
            expect: Fires(Error, CudaRuntimeMismatch),
            ..CASE
        },
        Case {
            name: "cu126-with-cuda-12-4-only",
            set: &[CUDART_12_4],
            expect: Fires(Warning, CudaRuntimeMismatch),
            ..CASE
        },
        Case {
            name: "cu126-with-cuda-12-6-on-the-path",
            set: &[
                CUDART_12_4,
                ("/cuda/runtimes/value/0/api_version/value", "12060"),
            ],
            expect: Quiet,
            ..CASE
        },
        // Windows: where the DLLs are is not inspected.
        Case {
            name: "cu126-without-runtime-on-windows",
            set: &[("/cuda/runtimes/value", "[]")],
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
