//! `gpus.expected-count`'s cases (tests/it/rules.rs `expected_gpu_count`).
use super::RULE;
use crate::report::{Category::HardwareFault, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Opts, Quiet, Table, CASE, NO_OPTS};

const fn expect(n: u32) -> Opts {
    Opts {
        expect_gpus: Some(n),
        ..NO_OPTS
    }
}

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "two-of-eight",
            opts: expect(8),
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "two-of-two",
            opts: expect(2),
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "more-than-expected",
            opts: expect(1),
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        Case {
            name: "not-asked",
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "recorded-h100-one-of-one",
            base: H100,
            opts: expect(1),
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "recorded-no-driver-zero-of-one",
            base: NoDriver,
            opts: expect(1),
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
        // A GPU on the bus that NVML does not list (tests/it/health.rs: a third H100 at 3a:00.0).
        Case {
            name: "one-on-the-bus-but-not-listed",
            set: &[(
                "/driver/pci_devices/value/-",
                r#"{"bus_id": "0000:3a:00.0", "device_id": "0x2330", "class": "0x030200", "driver": "nvidia"}"#,
            )],
            opts: expect(3),
            expect: Fires(Error, HardwareFault),
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
