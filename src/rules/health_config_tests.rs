//! `health.config`'s cases (tests/it/health.rs `configuration`, tests/it/rules.rs
//! `per_gpu_fix_commands_name_the_gpu`), on the recorded H100 (persistence mode on, the daemon
//! not running) and the synthetic 2 × H100 (the daemon running).
use super::RULE;
use crate::report::{
    Category::Configuration,
    Severity::{Error, Info, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const H: Case = Case { base: H100, ..CASE };

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "healthy-recorded-h100",
            expect: Quiet,
            ..H
        },
        Case {
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "persistence-off-no-daemon",
            set: &[("/gpus/value/0/persistence_mode/value", "false")],
            expect: Fires(Warning, Configuration),
            ..H
        },
        // nvidia-persistenced keeps the state without persistence mode.
        Case {
            name: "persistence-off-daemon-running",
            set: &[("/gpus/value/0/persistence_mode/value", "false")],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "compute-mode-prohibited",
            set: &[("/gpus/value/0/compute_mode/value", r#""prohibited""#)],
            expect: Fires(Error, Configuration),
            ..H
        },
        Case {
            name: "compute-mode-exclusive",
            set: &[("/gpus/value/0/compute_mode/value", r#""exclusive_process""#)],
            expect: Fires(Info, Configuration),
            ..H
        },
        Case {
            name: "mig-on-without-instances",
            set: &[(
                "/gpus/value/0/mig_mode/value",
                r#"{"current": true, "pending": true}"#,
            )],
            expect: Fires(Error, Configuration),
            ..H
        },
        Case {
            name: "mig-on-with-two-instances",
            set: &[
                (
                    "/gpus/value/0/mig_mode/value",
                    r#"{"current": true, "pending": true}"#,
                ),
                ("/gpus/value/0/health/value/mig_devices", "2"),
            ],
            expect: Quiet,
            ..H
        },
        Case {
            name: "mig-change-pending-on-gpu-1",
            set: &[(
                "/gpus/value/1/mig_mode/value",
                r#"{"current": false, "pending": true}"#,
            )],
            expect: Fires(Warning, Configuration),
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
