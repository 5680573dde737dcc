//! `compat.cudnn`'s cases (tests/it/rules.rs `a_cudnn_wheel_of_the_wrong_major`: the synthetic
//! 2 × H100's torch 2.7.1+cu126, built with cuDNN 9.5.1.17, given the cuDNN 8.9.7 wheel).
use super::RULE;
use crate::report::{
    Category::CudnnMismatch,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

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
            name: "cu126-with-cudnn-8",
            set: &[
                ("/python/value/0/packages/1/version", r#""8.9.7.29""#),
                ("/cudnn/value/0/version/value", r#""8.9.7""#),
            ],
            expect: Fires(Error, CudnnMismatch),
            ..CASE
        },
        // An older minor of the same major: PyTorch warns or fails depending on the release.
        Case {
            name: "cu126-with-cudnn-9-1",
            set: &[
                ("/python/value/0/packages/1/version", r#""9.1.0.70""#),
                ("/cudnn/value/0/version/value", r#""9.1.0""#),
            ],
            expect: Fires(Warning, CudnnMismatch),
            ..CASE
        },
        Case {
            name: "cu126-with-a-newer-cudnn-9",
            set: &[
                ("/python/value/0/packages/1/version", r#""9.10.2.21""#),
                ("/cudnn/value/0/version/value", r#""9.10.2""#),
            ],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
