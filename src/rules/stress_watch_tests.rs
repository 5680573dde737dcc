//! `stress.watch`'s cases: the recorded H100's stress runs (docs/validation run 3: 179 samples,
//! no event; run 5: an Xid 31 from another process at 8 s while gpudoctor's own kernels kept
//! verifying) with one watched value changed (DCGM's 160 PCIe replays a run).
use super::RULE;
use crate::report::{
    Category::{ApplicationError, EccMemory, HardwareFault, PcieDegraded, ThermalPower},
    Severity::{Error, Info, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const S: Case = Case {
    base: H100Stress,
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-passed",
            expect: Quiet,
            ..S
        },
        Case {
            name: "recorded-xid-31-from-another-process",
            base: H100StressXid,
            expect: Fires(Warning, ApplicationError),
            ..CASE
        },
        // The same Xid while our own kernels computed wrong: it hit them, the GPU is at fault.
        Case {
            name: "xid-31-with-wrong-results",
            base: H100StressXid,
            set: &[("/stress/gpus/0/compute_errors", "5")],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "xid-79-during-the-test",
            set: &[("/stress/gpus/0/watch/xids", "[79]")],
            expect: Fires(Error, HardwareFault),
            ..S
        },
        Case {
            name: "hw-thermal-slowdown",
            set: &[(
                "/stress/gpus/0/watch/clock_events",
                r#"{"hw_thermal_slowdown": 12}"#,
            )],
            expect: Fires(Error, ThermalPower),
            ..S
        },
        Case {
            name: "sw-thermal-slowdown",
            set: &[(
                "/stress/gpus/0/watch/clock_events",
                r#"{"sw_thermal_slowdown": 3}"#,
            )],
            expect: Fires(Warning, ThermalPower),
            ..S
        },
        // Power capping is how a GPU under full load is meant to run.
        Case {
            name: "sw-power-cap",
            set: &[(
                "/stress/gpus/0/watch/clock_events",
                r#"{"sw_power_cap": 170}"#,
            )],
            expect: Quiet,
            ..S
        },
        Case {
            name: "uncorrectable-ecc-during-the-test",
            set: &[("/stress/gpus/0/watch/ecc_uncorrected_delta", "1")],
            expect: Fires(Error, EccMemory),
            ..S
        },
        Case {
            name: "row-remap-pending-during-the-test",
            set: &[("/stress/gpus/0/watch/remap_pending", "true")],
            expect: Fires(Error, EccMemory),
            ..S
        },
        Case {
            name: "corrected-ecc-during-the-test",
            set: &[("/stress/gpus/0/watch/ecc_corrected_delta", "4")],
            expect: Fires(Info, EccMemory),
            ..S
        },
        Case {
            name: "161-pcie-replays",
            set: &[("/stress/gpus/0/watch/pcie_replay_delta", "161")],
            expect: Fires(Warning, PcieDegraded),
            ..S
        },
        Case {
            name: "160-pcie-replays",
            set: &[("/stress/gpus/0/watch/pcie_replay_delta", "160")],
            expect: Quiet,
            ..S
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
