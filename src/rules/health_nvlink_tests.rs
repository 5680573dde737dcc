//! `health.nvlink`'s cases: the recorded H100 (in a VM, no NVLink listed) given 18 links as
//! an H100 SXM has (tests/it/health.rs `nvlink_links_down`), one down or erring.
use super::RULE;
use crate::report::{Category::HardwareFault, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const H: Case = Case { base: H100, ..CASE };

macro_rules! link {
    ($n:literal) => {
        concat!(
            r#"{"link": "#,
            $n,
            r#", "active": true, "replay_errors": 0, "recovery_errors": 0, "crc_errors": 0}"#
        )
    };
}
const LINKS: (&str, &str) = (
    "/gpus/value/0/health/value/nvlinks",
    concat!(
        "[",
        link!(0),
        ",",
        link!(1),
        ",",
        link!(2),
        ",",
        link!(3),
        ",",
        link!(4),
        ",",
        link!(5),
        ",",
        link!(6),
        ",",
        link!(7),
        ",",
        link!(8),
        ",",
        link!(9),
        ",",
        link!(10),
        ",",
        link!(11),
        ",",
        link!(12),
        ",",
        link!(13),
        ",",
        link!(14),
        ",",
        link!(15),
        ",",
        link!(16),
        ",",
        link!(17),
        "]"
    ),
);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "healthy-recorded-h100",
            expect: Quiet,
            ..H
        },
        Case {
            name: "eighteen-links-up",
            set: &[LINKS],
            expect: Quiet,
            ..H
        },
        Case {
            name: "link-3-down",
            set: &[
                LINKS,
                ("/gpus/value/0/health/value/nvlinks/3/active", "false"),
            ],
            expect: Fires(Warning, HardwareFault),
            ..H
        },
        // Every link down is NVLink not in use (no fabric), not a link lost.
        Case {
            name: "all-links-inactive",
            set: &[(
                "/gpus/value/0/health/value/nvlinks",
                r#"[{"link": 0, "active": false}, {"link": 1, "active": false}]"#,
            )],
            expect: Quiet,
            ..H
        },
        // 100 CRC errors a second since boot (58.86 s): 5887 fires, 5885 does not.
        Case {
            name: "crc-errors-above-100-a-second",
            set: &[
                LINKS,
                ("/gpus/value/0/health/value/nvlinks/5/crc_errors", "5887"),
            ],
            expect: Fires(Warning, HardwareFault),
            ..H
        },
        Case {
            name: "crc-errors-just-below-100-a-second",
            set: &[
                LINKS,
                ("/gpus/value/0/health/value/nvlinks/5/crc_errors", "5885"),
            ],
            expect: Quiet,
            ..H
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
