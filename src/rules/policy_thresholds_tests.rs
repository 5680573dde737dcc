//! `policy.thresholds`'s cases: a `--policy` node class's limits (as `policy_options` passes
//! them) against the recorded H100 (driver 580.159.04, 50 °C, no uncorrectable ECC error).
use super::RULE;
use crate::report::{
    Category::{DriverTooOld, EccMemory, ThermalPower},
    Severity::Error,
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Opts, Quiet, Table, CASE, NO_OPTS};

const H: Case = Case { base: H100, ..CASE };
const MIN_DRIVER: Opts = Opts {
    min_driver: Some("580.159.05"),
    ..NO_OPTS
};
const SAME_DRIVER: Opts = Opts {
    min_driver: Some("580.159.04"),
    ..NO_OPTS
};
const MAX_49: Opts = Opts {
    max_temperature_c: Some(49),
    ..NO_OPTS
};
const MAX_50: Opts = Opts {
    max_temperature_c: Some(50),
    ..NO_OPTS
};
const MAX_ECC_0: Opts = Opts {
    max_ecc_uncorrected: Some(0),
    ..NO_OPTS
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "no-policy",
            expect: Quiet,
            ..H
        },
        Case {
            name: "driver-below-the-class-minimum",
            opts: MIN_DRIVER,
            expect: Fires(Error, DriverTooOld),
            ..H
        },
        Case {
            name: "driver-at-the-class-minimum",
            opts: SAME_DRIVER,
            expect: Quiet,
            ..H
        },
        Case {
            name: "temperature-above-the-class-maximum",
            opts: MAX_49,
            expect: Fires(Error, ThermalPower),
            ..H
        },
        Case {
            name: "temperature-at-the-class-maximum",
            opts: MAX_50,
            expect: Quiet,
            ..H
        },
        Case {
            name: "ecc-at-the-class-maximum",
            opts: MAX_ECC_0,
            expect: Quiet,
            ..H
        },
        Case {
            name: "ecc-above-the-class-maximum",
            set: &[("/gpus/value/0/health/value/ecc/aggregate_uncorrected", "1")],
            opts: MAX_ECC_0,
            expect: Fires(Error, EccMemory),
            ..H
        },
        // No driver: nothing to compare.
        Case {
            name: "no-driver-with-a-minimum",
            base: NoDriver,
            opts: MIN_DRIVER,
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
