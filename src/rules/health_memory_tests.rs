//! `health.memory`'s cases: the recorded H100's real NVML health (every counter 0) with one
//! counter changed at and around each threshold (tests/it/health.rs: DCGM's limits, faults.md).
use super::RULE;
use crate::report::{
    Category::{EccMemory, HardwareFault},
    Severity::{Error, Warning},
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
            name: "one-uncorrectable-ecc-error",
            set: &[("/gpus/value/0/health/value/ecc/volatile_uncorrected", "1")],
            expect: Fires(Error, EccMemory),
            ..H
        },
        Case {
            name: "uncorrectable-sram-ecc",
            set: &[(
                "/gpus/value/0/health/value/ecc/aggregate_uncorrected_sram",
                "1",
            )],
            expect: Fires(Error, EccMemory),
            ..H
        },
        // Corrected errors alone are ECC doing its work.
        Case {
            name: "many-corrected-ecc-errors",
            set: &[(
                "/gpus/value/0/health/value/ecc/volatile_corrected",
                "100000",
            )],
            expect: Quiet,
            ..H
        },
        Case {
            name: "63-retired-pages",
            set: &[(
                "/gpus/value/0/health/value/retired_pages",
                r#"{"single_bit": 40, "double_bit": 23, "pending": false}"#,
            )],
            expect: Fires(Error, EccMemory),
            ..H
        },
        Case {
            name: "62-retired-pages",
            set: &[(
                "/gpus/value/0/health/value/retired_pages",
                r#"{"single_bit": 40, "double_bit": 22, "pending": false}"#,
            )],
            expect: Quiet,
            ..H
        },
        Case {
            name: "page-retirement-pending",
            set: &[(
                "/gpus/value/0/health/value/retired_pages",
                r#"{"single_bit": 1, "double_bit": 0, "pending": true}"#,
            )],
            expect: Fires(Warning, EccMemory),
            ..H
        },
        Case {
            name: "row-remap-pending",
            set: &[("/gpus/value/0/health/value/remapped_rows/pending", "true")],
            expect: Fires(Warning, EccMemory),
            ..H
        },
        Case {
            name: "row-remap-failed",
            set: &[("/gpus/value/0/health/value/remapped_rows/failure", "true")],
            expect: Fires(Error, EccMemory),
            ..H
        },
        Case {
            name: "512-uncorrectable-remaps",
            set: &[(
                "/gpus/value/0/health/value/remapped_rows/uncorrectable",
                "512",
            )],
            expect: Fires(Warning, EccMemory),
            ..H
        },
        Case {
            name: "511-uncorrectable-remaps",
            set: &[(
                "/gpus/value/0/health/value/remapped_rows/uncorrectable",
                "511",
            )],
            expect: Quiet,
            ..H
        },
        Case {
            name: "banks-without-spares",
            set: &[(
                "/gpus/value/0/health/value/remapped_rows/banks_without_spares",
                "2",
            )],
            expect: Fires(Warning, EccMemory),
            ..H
        },
        Case {
            name: "recovery-action-drain-and-reset",
            set: &[("/gpus/value/0/health/value/recovery_action", "4")],
            expect: Fires(Error, HardwareFault),
            ..H
        },
        Case {
            name: "recovery-action-3",
            set: &[("/gpus/value/0/health/value/recovery_action", "3")],
            expect: Fires(Warning, HardwareFault),
            ..H
        },
        Case {
            name: "inforom-corrupt",
            set: &[("/gpus/value/0/health/value/inforom_valid", "false")],
            expect: Fires(Warning, HardwareFault),
            ..H
        },
        Case {
            name: "inforom-valid",
            set: &[("/gpus/value/0/health/value/inforom_valid", "true")],
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
