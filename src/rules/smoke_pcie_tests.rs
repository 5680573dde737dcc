//! `smoke.pcie-bandwidth`'s cases: the recorded H100's smoke run (docs/validation run 3:
//! 54.7 / 55.2 GB/s on a gen5 x16 link of 63.0 GB/s), slowed to either side of half the link's
//! rate (tests/it/smoke.rs `slow_pcie_against_the_link`: 31.4 fires, 31.6 does not).
use super::RULE;
use crate::report::{Category::PcieDegraded, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const S: Case = Case {
    base: H100Smoke,
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-healthy-link",
            expect: Quiet,
            ..S
        },
        Case {
            name: "host-to-device-below-half",
            set: &[("/smoke/value/gpus/0/h2d_gbps", "31.4")],
            expect: Fires(Warning, PcieDegraded),
            ..S
        },
        Case {
            name: "device-to-host-just-above-half",
            set: &[("/smoke/value/gpus/0/d2h_gbps", "31.6")],
            expect: Quiet,
            ..S
        },
        // A gen4 x16 link (31.5 GB/s) where the copies ran at 15.0 GB/s.
        Case {
            name: "gen4-link-below-half",
            set: &[
                (
                    "/gpus/value/0/pcie/value",
                    r#"{"gen": 4, "width": 16, "max_gen": 4, "max_width": 16}"#,
                ),
                ("/smoke/value/gpus/0/h2d_gbps", "15.0"),
                ("/smoke/value/gpus/0/d2h_gbps", "15.2"),
            ],
            expect: Fires(Warning, PcieDegraded),
            ..S
        },
        // Gen 1 and 2 links are not judged.
        Case {
            name: "gen2-link-not-judged",
            set: &[
                (
                    "/gpus/value/0/pcie/value",
                    r#"{"gen": 2, "width": 16, "max_gen": 2, "max_width": 16}"#,
                ),
                ("/smoke/value/gpus/0/h2d_gbps", "1.0"),
            ],
            expect: Quiet,
            ..S
        },
        Case {
            name: "smoke-not-run",
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
