//! `gpu.memory-held`'s cases (tests/it/rules.rs `the_healthy_base_has_only_the_memory_warning_on_gpu_1`:
//! the synthetic 2 × H100's GPU 1, 66.0 GiB held by PID 40211).
use super::RULE;
use crate::report::{Category::GpuMemoryExhausted, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "gpu-1-held-by-another-process",
            expect: Fires(Warning, GpuMemoryExhausted),
            ..CASE
        },
        Case {
            name: "no-process-listed",
            set: &[("/gpus/value/1/processes/value", "[]")],
            expect: Quiet,
            ..CASE
        },
        // 75 % free is enough: 64140607488 of 85520809984 bytes free (75.0 %) is quiet,
        // one byte less is not.
        Case {
            name: "exactly-three-quarters-free",
            set: &[("/gpus/value/1/memory/value/free_bytes", "64140607488")],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "a-byte-under-three-quarters-free",
            set: &[("/gpus/value/1/memory/value/free_bytes", "64140607487")],
            expect: Fires(Warning, GpuMemoryExhausted),
            ..CASE
        },
        Case {
            name: "process-name-and-size-unknown",
            set: &[("/gpus/value/1/processes/value", r#"[{"pid": 40211}]"#)],
            expect: Fires(Warning, GpuMemoryExhausted),
            ..CASE
        },
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
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
