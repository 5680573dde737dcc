//! `health.throttle`'s cases: the recorded H100's real NVML health (P0, no clock event
//! reason, 49 °C against a slowdown threshold of 89 °C) with one value changed
//! (tests/it/health.rs `hw_slowdown_under_load_but_not_at_idle`, `temperature_at_the_slowdown_threshold`).
use super::RULE;
use crate::report::{
    Category::ThermalPower,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const H: Case = Case { base: H100, ..CASE };
const BUSY: (&str, &str) = ("/gpus/value/0/health/value/utilization_gpu", "97");

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "healthy-recorded-h100",
            expect: Quiet,
            ..H
        },
        Case {
            name: "hw-slowdown-under-load",
            set: &[
                BUSY,
                ("/gpus/value/0/health/value/clock_event_reasons", "8"),
            ],
            expect: Fires(Error, ThermalPower),
            ..H
        },
        Case {
            name: "hw-thermal-slowdown-under-load",
            set: &[
                BUSY,
                ("/gpus/value/0/health/value/clock_event_reasons", "64"),
            ],
            expect: Fires(Error, ThermalPower),
            ..H
        },
        Case {
            name: "sw-thermal-slowdown-under-load",
            set: &[
                BUSY,
                ("/gpus/value/0/health/value/clock_event_reasons", "32"),
            ],
            expect: Fires(Warning, ThermalPower),
            ..H
        },
        // 0x9: hardware slowdown with the idle bit, at P8 and 0 % utilisation: not under load.
        Case {
            name: "hw-slowdown-at-idle",
            set: &[
                ("/gpus/value/0/health/value/clock_event_reasons", "9"),
                ("/gpus/value/0/health/value/pstate", "8"),
            ],
            expect: Quiet,
            ..H
        },
        // 0x4: the applications-clocks setting, not a slowdown.
        Case {
            name: "applications-clocks-under-load",
            set: &[
                BUSY,
                ("/gpus/value/0/health/value/clock_event_reasons", "4"),
            ],
            expect: Quiet,
            ..H
        },
        Case {
            name: "at-the-slowdown-temperature",
            set: &[("/gpus/value/0/temperature_c/value", "89")],
            expect: Fires(Warning, ThermalPower),
            ..H
        },
        Case {
            name: "one-below-the-slowdown-temperature",
            set: &[("/gpus/value/0/temperature_c/value", "88")],
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
