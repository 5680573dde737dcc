//! `windows.tdr`'s cases (tests/it/windows_tdr.rs): the recorded no-driver machine assumed to be
//! Windows, with the TDR registry values and the System event log records of
//! tests/fixtures/windows/eventlog (four display-driver resets among them).
use super::RULE;
use crate::report::{
    Category::Configuration,
    Severity::{Info, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const RESETS: &[&str] = &[
    "display-4101.xml",
    "nvlddmkm-153.xml",
    "nvlddmkm-153-restarting.xml",
    "nvlddmkm-13.xml",
    "nvlddmkm-0.xml",
];
const W: Case = Case {
    base: NoDriver,
    assume: &["os=windows"],
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "resets-with-the-default-delay",
            set: &[("/host/value/windows", "{}")],
            eventlog: RESETS,
            expect: Fires(Warning, Configuration),
            ..W
        },
        Case {
            name: "resets-despite-a-60-s-delay",
            set: &[("/host/value/windows", r#"{"tdr_delay_s": 60}"#)],
            eventlog: RESETS,
            expect: Fires(Warning, Configuration),
            ..W
        },
        Case {
            name: "resets-registry-unreadable",
            set: &[(
                "/host/value/windows",
                r#"{"registry_error": "access denied"}"#,
            )],
            eventlog: RESETS,
            expect: Fires(Warning, Configuration),
            ..W
        },
        // No reset, default delay, and a GPU: an info, the kernel-length limit.
        Case {
            name: "default-delay-no-reset-a-gpu",
            base: Synthetic,
            set: &[("/host/value/windows", "{}")],
            eventlog: &["nvlddmkm-13.xml"],
            expect: Fires(Info, Configuration),
            ..W
        },
        Case {
            name: "default-delay-no-reset-no-gpu",
            set: &[("/host/value/windows", "{}")],
            eventlog: &["nvlddmkm-13.xml"],
            expect: Quiet,
            ..W
        },
        Case {
            name: "tdr-off",
            set: &[("/host/value/windows", r#"{"tdr_level": 0}"#)],
            eventlog: RESETS,
            expect: Quiet,
            ..W
        },
        // Every GPU in TCC mode: no display, no TDR.
        Case {
            name: "all-gpus-tcc",
            base: Synthetic,
            set: &[
                ("/host/value/windows", "{}"),
                ("/gpus/value/0/driver_model", r#""TCC""#),
                ("/gpus/value/1/driver_model", r#""TCC""#),
            ],
            eventlog: RESETS,
            expect: Quiet,
            ..W
        },
        Case {
            name: "resets-on-linux",
            set: &[("/host/value/windows", "{}")],
            eventlog: RESETS,
            assume: &[],
            expect: Quiet,
            ..W
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
