//! `libs.unloadable`'s cases: a library whose version query failed, as the probe records it
//! (tests/it/real_libraries.rs `a_cudnn_that_aborts_when_loaded_is_a_finding_not_a_crash`: the real
//! libcudnn.so.9 9.1.0.70 without its libcudnn_graph.so.9 aborts in cudnnGetVersion).
use super::RULE;
use crate::report::{
    Category::{CudaRuntimeMismatch, CudnnMismatch},
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const ABORT: &str = r#"{"status": "failed", "error": "cudnnGetVersion: the helper process was killed by SIGABRT (Could not load library libcudnn_graph.so.9)"}"#;

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        // The recorded H100's system cuDNN (on the search path).
        Case {
            name: "cudnn-on-the-search-path-aborts",
            base: H100,
            set: &[("/cudnn/value/0/version", ABORT)],
            expect: Fires(Error, CudnnMismatch),
            ..CASE
        },
        // Its pip cuDNN (reached through RPATH only).
        Case {
            name: "pip-cudnn-aborts",
            base: H100,
            set: &[("/cudnn/value/1/version", ABORT)],
            expect: Fires(Warning, CudnnMismatch),
            ..CASE
        },
        Case {
            name: "cudart-fails",
            base: H100,
            set: &[(
                "/cuda/runtimes/value/0/api_version",
                r#"{"status": "failed", "error": "cudaRuntimeGetVersion: the helper process was killed by SIGSEGV"}"#,
            )],
            expect: Fires(Error, CudaRuntimeMismatch),
            ..CASE
        },
        // Absent (not failed): a version not known is not a broken library.
        Case {
            name: "cudnn-version-absent",
            base: H100,
            set: &[(
                "/cudnn/value/0/version",
                r#"{"status": "absent", "why": "no cudnnGetVersion"}"#,
            )],
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
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}

/// A CUDA runtime that fails to load is fixed by reinstalling the CUDA runtime (its wheel, or
/// the toolkit it came with), not cuDNN: the fix names nvidia-cudnn-cu12 for every library.
#[test]
#[ignore = "bug: libs.unloadable's fix reinstalls nvidia-cudnn-cu12 for a broken libcudart too"]
fn a_broken_cuda_runtime_is_not_fixed_by_reinstalling_cudnn() {
    let case = TABLE
        .cases
        .iter()
        .find(|c| c.name == "cudart-fails")
        .expect("the case");
    let findings = crate::rules::testkit::run(&TABLE.rule, case);
    assert_eq!(findings.len(), 1);
    for c in &findings[0].fix.commands {
        assert!(!c.contains("cudnn"), "{c}");
    }
}
