//! `health.gpu-lost`'s cases (tests/it/health.rs: GPU 1 fallen off the bus; a third H100 on the
//! bus that NVML does not list).
use super::RULE;
use crate::report::{Category::HardwareFault, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "gpu-1-lost",
            set: &[(
                "/gpus/value/1/name",
                r#"{"status": "failed", "error": "the GPU has fallen off the bus", "code": "gpu_lost"}"#,
            )],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "gpu-0-needs-a-reset",
            set: &[(
                "/gpus/value/0/memory",
                r#"{"status": "failed", "error": "GPU requires reset", "code": "reset_required"}"#,
            )],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "on-the-bus-not-listed",
            set: &[(
                "/driver/pci_devices/value/-",
                r#"{"bus_id": "0000:3a:00.0", "device_id": "0x2330", "class": "0x030200", "driver": "nvidia"}"#,
            )],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        // Bound to another driver (vfio-pci, passed to a VM): not the nvidia driver's to use.
        Case {
            name: "on-the-bus-bound-to-vfio",
            set: &[(
                "/driver/pci_devices/value/-",
                r#"{"bus_id": "0000:3a:00.0", "device_id": "0x2330", "class": "0x030200", "driver": "vfio-pci"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
        // Another value failed for another reason: not a lost GPU.
        Case {
            name: "temperature-not-supported",
            set: &[(
                "/gpus/value/1/temperature_c",
                r#"{"status": "failed", "error": "Not Supported", "code": "not_supported"}"#,
            )],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "healthy-synthetic-2xh100",
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
