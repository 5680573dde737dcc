//! `probe.timeout`'s cases (tests/it/rules.rs `a_probe_that_timed_out`: NVML after 10002 ms).
use super::RULE;
use crate::report::{Category::ProbeTimeout, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "nvml-timed-out",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 10002, "outcome": "timeout"}"#,
            )],
            expect: Fires(Warning, ProbeTimeout),
            ..CASE
        },
        Case {
            name: "nvml-stuck-in-a-call",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 10002, "outcome": "timeout", "stuck_in": "GPU 0: nvmlDeviceGetRemappedRows"}"#,
            )],
            expect: Fires(Warning, ProbeTimeout),
            ..CASE
        },
        // --deep's import: more time is the fix (30 s at least).
        Case {
            name: "deep-import-timed-out",
            set: &[(
                "/probes/-",
                r#"{"name": "deep import in /opt/venv", "millis": 8000, "outcome": "timeout"}"#,
            )],
            expect: Fires(Warning, ProbeTimeout),
            ..CASE
        },
        Case {
            name: "panicked",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 3, "outcome": "panic"}"#,
            )],
            expect: Fires(Warning, ProbeTimeout),
            ..CASE
        },
        // A crash is probe.crashed's.
        Case {
            name: "nvml-crashed",
            set: &[(
                "/probes/2",
                r#"{"name": "nvml", "millis": 12, "outcome": "crash"}"#,
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
