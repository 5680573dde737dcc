//! `compat.arch-unsupported`'s cases: the recorded H100 and the synthetic 2 × H100 with their
//! first GPU renamed to older GPUs (compute capabilities from the embedded matrix's GPU table),
//! and driver branches past an architecture's last (R580 is the last for Maxwell, Pascal and
//! Volta: https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/).
use super::RULE;
use crate::report::{Category::ArchUnsupported, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const V100: &[(&str, &str)] = &[
    ("/gpus/value/0/name/value", r#""Tesla V100-SXM2-16GB""#),
    ("/gpus/value/0/compute_capability/value", r#""7.0""#),
];
const K80: &[(&str, &str)] = &[
    ("/gpus/value/0/name/value", r#""Tesla K80""#),
    ("/gpus/value/0/compute_capability/value", r#""3.7""#),
];

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
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
        // torch 2.7.1+cu126 has kernels from sm_50 on: none for a Kepler K80.
        Case {
            name: "cu126-on-a-k80",
            set: K80,
            expect: Fires(Error, ArchUnsupported),
            ..CASE
        },
        // A V100 on R580 is still supported, and cu126 has sm_70 kernels.
        Case {
            name: "cu126-on-a-v100-r580",
            set: V100,
            expect: Quiet,
            ..CASE
        },
        // R590 dropped Volta.
        Case {
            name: "v100-on-r590",
            set: V100,
            assume: &["driver=590.44.01"],
            expect: Fires(Error, ArchUnsupported),
            ..CASE
        },
        Case {
            name: "h100-on-r590",
            assume: &["driver=590.44.01"],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
