//! `faults.fabric-manager`'s cases (tests/it/health.rs `fabric_manager_on_nvswitch_systems`: the
//! synthetic 2 × H100 given NVSwitches, PCI class 0x0680, device 0x22a3 as on an HGX H100).
use super::RULE;
use crate::report::{Category::FabricManager, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const SWITCH: (&str, &str) = (
    "/driver/pci_devices/value/-",
    r#"{"bus_id": "0000:05:00.0", "device_id": "0x22a3", "class": "0x068000", "driver": "nvidia-nvswitch"}"#,
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "nvswitch-fabric-manager-stopped",
            set: &[SWITCH],
            expect: Fires(Error, FabricManager),
            ..CASE
        },
        Case {
            name: "nvswitch-fabric-manager-of-another-version",
            set: &[
                SWITCH,
                (
                    "/driver/daemons/value/1",
                    r#"{"name": "nv-fabricmanager", "running": true, "pid": 2001, "version": "580.82.07"}"#,
                ),
            ],
            expect: Fires(Error, FabricManager),
            ..CASE
        },
        Case {
            name: "nvswitch-fabric-manager-of-the-driver-version",
            set: &[
                SWITCH,
                (
                    "/driver/daemons/value/1",
                    r#"{"name": "nv-fabricmanager", "running": true, "pid": 2001, "version": "580.95.05"}"#,
                ),
            ],
            expect: Quiet,
            ..CASE
        },
        // No NVSwitch: the stopped Fabric Manager of the recorded H100 is not needed.
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
