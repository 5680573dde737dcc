//! `matrix.stale`'s cases. What is "newer than the matrix" moves with the embedded matrix: when
//! compat-matrix/ learns a newer release, the cases that name one past it must move on too.
use super::RULE;
use crate::report::{Category::MatrixStale, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        // torch 2.7.1+cu126 and CUDA 12.6: well inside the matrix.
        Case {
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
        // torch 2.16 is one minor past the matrix's newest (2.15).
        Case {
            name: "torch-newer-than-the-matrix",
            set: &[("/python/value/0/torch/version", r#""2.16.0+cu126""#)],
            expect: Fires(Warning, MatrixStale),
            ..CASE
        },
        Case {
            name: "torch-2-15-known",
            set: &[("/python/value/0/torch/version", r#""2.15.0+cu126""#)],
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
