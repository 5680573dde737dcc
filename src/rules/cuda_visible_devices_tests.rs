//! `env.cuda-visible-devices`'s cases (tests/it/rules.rs `cuda_visible_devices`, on the synthetic
//! 2 × H100), and the unit test of the variable's grammar (`apply`).
use super::*;
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "empty-hides-every-gpu",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""""#)],
            expect: Fires(Severity::Error, Category::Configuration),
            ..CASE
        },
        Case {
            name: "minus-one-hides-every-gpu",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""-1""#)],
            expect: Fires(Severity::Error, Category::Configuration),
            ..CASE
        },
        Case {
            name: "index-3-of-two-gpus",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""0,3,1""#)],
            expect: Fires(Severity::Warning, Category::Configuration),
            ..CASE
        },
        Case {
            name: "gpu-1",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""1""#)],
            expect: Quiet,
            ..CASE
        },
        // The last GPU that exists (index count - 1).
        Case {
            name: "both-gpus",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""0,1""#)],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "uuid-prefix-of-gpu-0",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""GPU-REDACTED-0""#)],
            expect: Quiet,
            ..CASE
        },
        // The recorded H100's container had NVIDIA_VISIBLE_DEVICES=0 and no CUDA_VISIBLE_DEVICES.
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        // No GPU anywhere: hiding nothing says nothing.
        Case {
            name: "empty-on-the-no-driver-machine",
            base: NoDriver,
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""""#)],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}

#[test]
fn cuda_rules_for_the_variable() {
    assert!(apply("", Some(4), &[]).visible.is_empty());
    let v = apply("0,2,-1,1", Some(4), &[]);
    assert_eq!(v.visible, vec!["0", "2"]);
    assert_eq!(v.hidden_from, Some(2));
    let v = apply("1,5", Some(2), &[]);
    assert_eq!(v.visible, vec!["1"]);
    let uuids = vec!["GPU-1234abcd-0000".to_string()];
    assert_eq!(apply("GPU-1234", Some(1), &uuids).visible, vec!["GPU-1234"]);
    assert!(apply("GPU-9999", Some(1), &uuids).visible.is_empty());
    assert_eq!(apply("NoDevFiles", Some(1), &[]).hidden_from, Some(0));
}
