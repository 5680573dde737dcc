//! `probe.crashed`'s cases: the probe line the probe writes when NVML's helper process dies
//! (probe::mod: outcome "crash", `stuck_in` the call), as tests/it/standin_nvml.rs
//! `a_crashing_nvml_is_a_finding` makes the stand-in NVML do (SIGSEGV in nvmlInit_v2).
use super::RULE;
use crate::report::{Category::DriverFault, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "nvml-segfault-in-init",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 12, "outcome": "crash", "stuck_in": "nvmlInit_v2",
                "detail": "the NVML probe (libnvidia-ml.so.1) was killed by SIGSEGV"}"#,
            )],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
        Case {
            name: "crash-without-detail",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 12, "outcome": "crash"}"#,
            )],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
        // A timeout is probe.timeout's.
        Case {
            name: "nvml-timed-out",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 10002, "outcome": "timeout"}"#,
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
