//! `env.debug-injection`'s cases (tests/it/rules.rs `debug_injection_variables`; the variables are
//! DCGM's deployment list, probe::env::DEBUG_INJECTION).
use super::RULE;
use crate::report::{Category::Configuration, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "injection-library",
            set: &[("/env/CUDA_INJECTION64_PATH", r#""/opt/tool/libinject.so""#)],
            expect: Fires(Warning, Configuration),
            ..CASE
        },
        Case {
            name: "two-variables",
            set: &[
                ("/env/CUDA_INJECTION64_PATH", r#""/opt/tool/libinject.so""#),
                ("/env/CUDA_ENABLE_COREDUMP_ON_EXCEPTION", r#""1""#),
            ],
            expect: Fires(Warning, Configuration),
            ..CASE
        },
        Case {
            name: "cuda-visible-devices-only",
            set: &[("/env/CUDA_VISIBLE_DEVICES", r#""0""#)],
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
