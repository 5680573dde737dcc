//! `health.pcie`'s cases: the recorded H100 (gen5 x16 at gen5 x16, P0, 3 replays in the 59 s
//! since boot) with one value changed (tests/it/health.rs `a_x8_link_under_load_but_not_at_idle`,
//! `replay_counter_rates`: DCGM's 1.92 replays a lane a minute on gen5, 31 for x16).
use super::RULE;
use crate::report::{
    Category::PcieDegraded,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const H: Case = Case { base: H100, ..CASE };
const BUSY: (&str, &str) = ("/gpus/value/0/health/value/utilization_gpu", "80");
const IDLE: &[(&str, &str)] = &[
    ("/gpus/value/0/health/value/utilization_gpu", "0"),
    ("/gpus/value/0/health/value/pstate", "8"),
    ("/gpus/value/0/health/value/clock_event_reasons", "1"),
];

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "healthy-recorded-h100",
            expect: Quiet,
            ..H
        },
        Case {
            name: "x8-under-load",
            set: &[BUSY, ("/gpus/value/0/pcie/value/width", "8")],
            expect: Fires(Error, PcieDegraded),
            ..H
        },
        Case {
            name: "gen4-under-load",
            set: &[BUSY, ("/gpus/value/0/pcie/value/gen", "4")],
            expect: Fires(Warning, PcieDegraded),
            ..H
        },
        // An idle GPU lowers its link to save power.
        Case {
            name: "gen1-x8-at-idle",
            set: &[
                IDLE[0],
                IDLE[1],
                IDLE[2],
                ("/gpus/value/0/pcie/value/gen", "1"),
                ("/gpus/value/0/pcie/value/width", "8"),
            ],
            expect: Quiet,
            ..H
        },
        Case {
            name: "32-replays-in-the-first-minute",
            set: &[("/gpus/value/0/health/value/pcie_replays", "32")],
            expect: Fires(Warning, PcieDegraded),
            ..H
        },
        Case {
            name: "31-replays-in-the-first-minute",
            set: &[("/gpus/value/0/health/value/pcie_replays", "31")],
            expect: Quiet,
            ..H
        },
        Case {
            name: "1920-replays-in-an-hour",
            set: &[
                ("/uptime_seconds", "3600.0"),
                ("/gpus/value/0/health/value/pcie_replays", "1920"),
            ],
            expect: Fires(Warning, PcieDegraded),
            ..H
        },
        Case {
            name: "1860-replays-in-an-hour",
            set: &[
                ("/uptime_seconds", "3600.0"),
                ("/gpus/value/0/health/value/pcie_replays", "1860"),
            ],
            expect: Quiet,
            ..H
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
