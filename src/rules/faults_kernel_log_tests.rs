//! `faults.kernel-log`'s cases: lines of tests/fixtures/kernel-log/h100-node.dmesg (real lines
//! of shared/reference/faults.md §2b/§2c with the synthetic 2 × H100's bus ids) and the Windows
//! System event log records of tests/fixtures/windows/eventlog, each read by the probe's own
//! parser. Severity and category come from knowledge/kernel-events.yaml.
use super::RULE;
use crate::report::{
    Category::{
        DriverFault, DriverLibraryMismatch, HardwareFault, HostMemoryExhausted, PcieDegraded,
    },
    Severity::{Error, Info, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "api-mismatch",
            log: &["[ 9400.000000] NVRM: API mismatch: the client has the version 580.82.07, but this kernel module has the version 580.95.05.  Please make sure that this kernel module and all NVIDIA driver components have the same version."],
            expect: Fires(Error, DriverLibraryMismatch),
            ..CASE
        },
        Case {
            name: "fallen-off-the-bus-without-its-xid",
            log: &["[ 8123.001105] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus."],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        // With its Xid 79 the fall is faults.xid's to report.
        Case {
            name: "fallen-off-the-bus-with-xid-79",
            log: &[
                "[ 8123.001002] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.",
                "[ 8123.001105] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.",
            ],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "oom-killer",
            log: &["[ 9500.000000] Out of memory: Killed process 4242 (python3) total-vm:123456kB, anon-rss:654321kB"],
            expect: Fires(Info, HostMemoryExhausted),
            ..CASE
        },
        Case {
            name: "pcie-aer-uncorrected",
            log: &["[ 9600.000000] pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)"],
            expect: Fires(Error, PcieDegraded),
            ..CASE
        },
        // One corrected error is far below DCGM's 480.
        Case {
            name: "pcie-aer-one-corrected",
            log: &["[ 9600.000000] pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "xid-only",
            log: &["[ 9001.000000] NVRM: Xid (PCI:0000:18:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address"],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "windows-display-driver-reset",
            base: NoDriver,
            eventlog: &["display-4101.xml"],
            assume: &["os=windows"],
            expect: Fires(Warning, DriverFault),
            ..CASE
        },
        Case { name: "recorded-h100-clean-log", base: H100, expect: Quiet, ..CASE },
        Case { name: "recorded-no-driver-machine", base: NoDriver, expect: Quiet, ..CASE },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
