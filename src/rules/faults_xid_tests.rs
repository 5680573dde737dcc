//! `faults.xid`'s cases: lines of tests/fixtures/kernel-log/h100-node.dmesg (real Xid lines of
//! shared/reference/faults.md §2b/§2c, with the synthetic 2 × H100's bus ids: 18:00 is GPU 0,
//! 2a:00 is GPU 1) read by the probe's own collector; tests/it/faults.rs checks the same lines
//! through the binary. Severity and category come from knowledge/xid.yaml.
use super::RULE;
use crate::report::{
    Category::{ApplicationError, DriverFault, EccMemory, HardwareFault},
    Severity::{Error, Info},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const LOAD: &str = "[    2.104113] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jul 23 21:16:02 UTC 2025";

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "xid-79-three-times-on-gpu-1",
            log: &[
                LOAD,
                "[ 8123.001002] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.",
                "[ 8123.001105] NVRM: GPU 0000:2a:00.0: GPU has fallen off the bus.",
                "[ 8130.550000] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.",
                "[ 8140.550000] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.",
            ],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "xid-13-application",
            log: &["[ 9001.000000] NVRM: Xid (PCI:0000:18:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address"],
            expect: Fires(Info, ApplicationError),
            ..CASE
        },
        // Caused by a previous Xid: information only, act on the first.
        Case {
            name: "xid-45-caused-by-xid-13",
            log: &["[ 9002.000000] NVRM: Xid (PCI:0000:18:00): 45, pid=1234, name=python, Ch 00000010, caused by previous Xid 13"],
            expect: Fires(Info, ApplicationError),
            ..CASE
        },
        Case {
            name: "xid-63-row-remap",
            log: &["[ 9100.000000] NVRM: Xid (PCI:0000:18:00): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."],
            expect: Fires(Info, EccMemory),
            ..CASE
        },
        // The recovery action (0x4, drain and reset) raises Xid 154 from a warning to an error.
        Case {
            name: "xid-154-drain-and-reset",
            log: &["[ 9200.000000] NVRM: Xid (PCI:0000:18:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)"],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "xid-119-gsp-timeout",
            log: &["[ 9300.000000] NVRM: Xid (PCI:0000:18:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)."],
            expect: Fires(Error, DriverFault),
            ..CASE
        },
        // An Xid on a bus id no listed GPU has: still reported, on "the GPU at ...".
        Case {
            name: "xid-79-on-an-unlisted-gpu",
            base: H100,
            log: &["[ 8123.001002] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus."],
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        // Kernel log lines that are not Xids.
        Case {
            name: "no-xid-in-the-log",
            log: &[LOAD, "[ 9500.000000] Out of memory: Killed process 4242 (python3) total-vm:123456kB, anon-rss:654321kB"],
            expect: Quiet,
            ..CASE
        },
        // The real H100's /dev/kmsg of 358 lines: no event.
        Case { name: "recorded-h100-clean-log", base: H100, expect: Quiet, ..CASE },
        Case { name: "recorded-no-driver-machine", base: NoDriver, expect: Quiet, ..CASE },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
