//! `driver.module-flavor`'s cases (tests/it/rules.rs `the_module_flavor_must_drive_the_gpu`, on
//! the recorded H100 with its GPU renamed).
use super::RULE;
use crate::report::{Category::ArchUnsupported, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const H: Case = Case { base: H100, ..CASE };

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "b200-on-the-proprietary-module",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""proprietary""#),
                ("/gpus/value/0/name/value", r#""NVIDIA B200""#),
                ("/gpus/value/0/compute_capability/value", r#""10.0""#),
            ],
            expect: Fires(Error, ArchUnsupported),
            ..H
        },
        Case {
            name: "v100-on-the-open-module",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""open""#),
                ("/gpus/value/0/name/value", r#""Tesla V100-SXM2-16GB""#),
                ("/gpus/value/0/compute_capability/value", r#""7.0""#),
            ],
            expect: Fires(Error, ArchUnsupported),
            ..H
        },
        Case {
            name: "b200-on-the-open-module",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""open""#),
                ("/gpus/value/0/name/value", r#""NVIDIA B200""#),
                ("/gpus/value/0/compute_capability/value", r#""10.0""#),
            ],
            expect: Quiet,
            ..H
        },
        Case {
            name: "v100-on-the-proprietary-module",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""proprietary""#),
                ("/gpus/value/0/name/value", r#""Tesla V100-SXM2-16GB""#),
                ("/gpus/value/0/compute_capability/value", r#""7.0""#),
            ],
            expect: Quiet,
            ..H
        },
        // Turing (7.5) is the oldest the open module drives: the near miss.
        Case {
            name: "turing-t4-on-the-open-module",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""open""#),
                ("/gpus/value/0/name/value", r#""Tesla T4""#),
                ("/gpus/value/0/compute_capability/value", r#""7.5""#),
            ],
            expect: Quiet,
            ..H
        },
        Case {
            name: "h100-on-the-proprietary-module",
            set: &[("/driver/kernel_module/value/flavor", r#""proprietary""#)],
            expect: Quiet,
            ..H
        },
        Case {
            name: "healthy-recorded-h100",
            expect: Quiet,
            ..H
        },
        Case {
            name: "unknown-flavor",
            set: &[
                ("/driver/kernel_module/value/flavor", r#""unknown""#),
                ("/gpus/value/0/name/value", r#""NVIDIA B200""#),
                ("/gpus/value/0/compute_capability/value", r#""10.0""#),
            ],
            expect: Quiet,
            ..H
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
