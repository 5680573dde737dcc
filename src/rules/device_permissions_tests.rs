//! `driver.device-permissions`'s cases (tests/it/rules.rs `device_permissions`).
use super::RULE;
use crate::report::{Category::Configuration, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "nvidiactl-not-writable",
            set: &[("/driver/device_nodes/value/4/writable", "false")],
            expect: Fires(Error, Configuration),
            ..CASE
        },
        Case {
            name: "nvidia0-not-readable",
            set: &[("/driver/device_nodes/value/2/readable", "false")],
            expect: Fires(Error, Configuration),
            ..CASE
        },
        // /dev/nvidia-caps/* are root's by design (MIG capabilities).
        Case {
            name: "nvidia-caps-not-accessible",
            set: &[(
                "/driver/device_nodes/value/-",
                r#"{"path": "/dev/nvidia-caps/nvidia-cap1", "readable": false, "writable": false}"#,
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
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
