//! `faults.kernel-log-unreadable`'s cases. The Linux error is in the form the probe writes
//! (probe::kernel_log::probe: each source and why), with the errors an unprivileged user gets
//! under `kernel.dmesg_restrict=1`; the Windows one is tests/it/windows_tdr.rs
//! `an_unreadable_event_log_says_how_to_read_it`'s.
use super::RULE;
use crate::report::{Category::Configuration, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "linux-dmesg-restricted",
            base: H100,
            set: &[(
                "/kernel_log",
                r#"{"status": "failed", "code": "unreadable",
                    "error": "/dev/kmsg: Operation not permitted (os error 1); dmesg: dmesg: read kernel buffer failed: Operation not permitted; journalctl -k: No journal files were opened due to insufficient permissions."}"#,
            )],
            expect: Fires(Warning, Configuration),
            ..CASE
        },
        Case {
            name: "windows-event-log-access-denied",
            base: NoDriver,
            set: &[(
                "/kernel_log",
                r#"{"status": "failed", "code": "access_denied",
                    "error": "wevtutil qe System exit status 5: Failed to read events. Access is denied. (run as Administrator, or as a member of the Event Log Readers group)"}"#,
            )],
            assume: &["os=windows"],
            expect: Fires(Warning, Configuration),
            ..CASE
        },
        Case {
            name: "recorded-h100-read-dev-kmsg",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "not-probed",
            base: Empty,
            expect: Quiet,
            ..CASE
        },
        // Another failure (a timeout) is probe.timeout's to report.
        Case {
            name: "timed-out",
            base: H100,
            set: &[(
                "/kernel_log",
                r#"{"status": "failed", "code": "timeout", "error": "did not finish within 2000 ms"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
