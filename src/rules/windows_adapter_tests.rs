//! `windows.adapter`'s cases: the display adapters of tests/it/windows_tdr.rs
//! `nvidia_adapters_with_code_43_or_no_driver_are_errors` (a real RTX 3050 laptop GPU's
//! hardware id in Code 43, cyberus-technology/virtualbox-kvm#34) on the recorded no-driver
//! machine, assumed to be Windows.
use super::RULE;
use crate::report::{
    Category::{Configuration, DriverMissing, HardwareFault},
    Severity::Error,
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const WINDOWS: Case = Case {
    base: NoDriver,
    assume: &["os=windows"],
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "code-43",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "NVIDIA GeForce RTX 3050 Laptop GPU",
                    "hardware_id": "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
                    "service": "nvlddmkm", "problem": 43}]}"#,
            )],
            expect: Fires(Error, HardwareFault),
            ..WINDOWS
        },
        Case {
            name: "code-22-disabled",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "NVIDIA GeForce RTX 3050 Laptop GPU",
                    "hardware_id": "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
                    "service": "nvlddmkm", "problem": 22}]}"#,
            )],
            expect: Fires(Error, Configuration),
            ..WINDOWS
        },
        Case {
            name: "basic-display-adapter",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "Microsoft Basic Display Adapter",
                    "hardware_id": "PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1",
                    "service": "BasicDisplay"}]}"#,
            )],
            expect: Fires(Error, DriverMissing),
            ..WINDOWS
        },
        Case {
            name: "nvidia-driver-bound-no-problem",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "NVIDIA GeForce RTX 3050 Laptop GPU",
                    "hardware_id": "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
                    "service": "nvlddmkm"}]}"#,
            )],
            expect: Quiet,
            ..WINDOWS
        },
        // Intel's adapter in Code 43 is not ours to judge.
        Case {
            name: "intel-adapter-in-code-43",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "Intel(R) Iris(R) Xe Graphics",
                    "hardware_id": "PCI\\VEN_8086&DEV_9A49&SUBSYS_13FC1043&REV_01",
                    "service": "igfx", "problem": 43}]}"#,
            )],
            expect: Quiet,
            ..WINDOWS
        },
        Case {
            name: "code-43-on-linux",
            set: &[(
                "/host/value/windows",
                r#"{"adapters": [{"name": "NVIDIA GeForce RTX 3050 Laptop GPU",
                    "hardware_id": "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
                    "service": "nvlddmkm", "problem": 43}]}"#,
            )],
            assume: &[],
            expect: Quiet,
            ..WINDOWS
        },
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
