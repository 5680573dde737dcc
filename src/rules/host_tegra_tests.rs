//! `host.tegra`'s cases (tests/it/rules.rs `a_jetson_is_said_to_be_one_instead_of_driverless`: the
//! markers a Jetson AGX Orin shows, on the recorded no-driver machine).
use super::RULE;
use crate::report::{
    Category::{Configuration, DriverMissing},
    Severity::{Error, Info},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const ORIN: (&str, &str) = (
    "/host/value/tegra",
    r#"{"l4t": "R35.4.1", "soc": "tegra234", "model": "NVIDIA Jetson AGX Orin Developer Kit",
        "markers": ["/etc/nv_tegra_release", "/proc/device-tree/compatible: nvidia,tegra234"]}"#,
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "orin-without-libcuda",
            base: NoDriver,
            set: &[ORIN],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "orin-with-jetson-linux-libcuda",
            base: NoDriver,
            set: &[
                ORIN,
                (
                    "/driver/libcuda",
                    r#"{"status": "found", "value": {"path": "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", "cuda_driver_version": 11040}}"#,
                ),
                ("/host/value/container", "null"),
            ],
            expect: Fires(Info, Configuration),
            ..CASE
        },
        Case {
            name: "recorded-no-driver-machine",
            base: NoDriver,
            expect: Quiet,
            ..CASE
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
