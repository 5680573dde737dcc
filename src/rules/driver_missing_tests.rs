//! `driver.missing`'s cases (facts from tests/it/rules.rs `driver_missing_reasons` and
//! `the_recorded_no_driver_machine`).
use super::RULE;
use crate::report::{Category::DriverMissing, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

/// No NVIDIA module, NVML says the driver is not loaded, no libcuda, no GPU list: the pci bus
/// (synthetic 2 × H100) still shows the GPUs.
const UNLOADED: &[(&str, &str)] = &[
    (
        "/driver/kernel_module",
        r#"{"status": "absent", "why": "not loaded", "code": "not_loaded"}"#,
    ),
    (
        "/driver/sys_module_version",
        r#"{"status": "absent", "why": "not loaded", "code": "not_loaded"}"#,
    ),
    (
        "/driver/nvml",
        r#"{"status": "failed", "error": "driver not loaded", "code": "driver_not_loaded"}"#,
    ),
    (
        "/driver/libcuda",
        r#"{"status": "absent", "why": "not found", "code": "not_found"}"#,
    ),
    ("/gpus", r#"{"status": "absent", "why": "no NVML"}"#),
];

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-no-driver-machine",
            base: NoDriver,
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
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
        Case {
            name: "nouveau-bound",
            set: &[
                UNLOADED[0],
                UNLOADED[1],
                UNLOADED[2],
                UNLOADED[3],
                UNLOADED[4],
                ("/driver/pci_devices/value/0/driver", r#""nouveau""#),
                ("/driver/nouveau_loaded/value", "true"),
            ],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "gpus-on-bus-no-module",
            set: &[
                UNLOADED[0],
                UNLOADED[1],
                UNLOADED[2],
                UNLOADED[3],
                UNLOADED[4],
                ("/driver/pci_devices/value/0/driver", "null"),
                ("/driver/pci_devices/value/1/driver", "null"),
            ],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "no-nvidia-uvm",
            set: &[(
                "/driver/device_nodes/value",
                r#"[{"path": "/dev/nvidia0", "readable": true, "writable": true},
                    {"path": "/dev/nvidia1", "readable": true, "writable": true},
                    {"path": "/dev/nvidiactl", "readable": true, "writable": true}]"#,
            )],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "no-device-nodes-on-a-bare-host",
            set: &[("/driver/device_nodes/value", "[]")],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        // In a container no nodes is container.no-gpu's to report.
        Case {
            name: "no-device-nodes-in-a-container",
            set: &[
                ("/driver/device_nodes/value", "[]"),
                ("/host/value/container", r#""docker""#),
            ],
            expect: Quiet,
            ..CASE
        },
        // driver.library-mismatch reports a version mismatch.
        Case {
            name: "library-mismatch-left-to-its-rule",
            set: &[
                UNLOADED[0],
                UNLOADED[1],
                UNLOADED[3],
                UNLOADED[4],
                (
                    "/driver/nvml",
                    r#"{"status": "failed", "error": "Driver/library version mismatch", "code": "lib_rm_version_mismatch"}"#,
                ),
            ],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "nothing-probed",
            base: Empty,
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "assumed-driver",
            base: Empty,
            assume: &["driver=580.95.05"],
            expect: Quiet,
            ..CASE
        },
        // Windows: neither nvml.dll nor nvcuda.dll loads (tests/it/windows_libs.rs runs the same
        // through the binary under Wine); the reasons in the probe's forms (probe::nvml,
        // probe::mod) with libloading's Windows error.
        Case {
            name: "windows-no-driver",
            base: NoDriver,
            set: &[
                (
                    "/driver/nvml",
                    r#"{"status": "absent", "code": "nvml_library_missing",
                    "why": "the NVML library nvml.dll could not be loaded (LoadLibraryExW failed); it is installed with the NVIDIA driver"}"#,
                ),
                (
                    "/driver/libcuda",
                    r#"{"status": "absent", "code": "not_found",
                    "why": "nvcuda.dll could not be loaded: LoadLibraryExW failed"}"#,
                ),
            ],
            assume: &["os=windows"],
            expect: Fires(Error, DriverMissing),
            ..CASE
        },
        Case {
            name: "windows-nvml-loads",
            assume: &["os=windows"],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
