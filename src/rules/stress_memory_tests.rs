//! `stress.memory`'s cases: the recorded H100's `stress --minutes 3` (docs/validation run 3:
//! 347 rounds, 0 errors, 96.2 % of free memory tested; its `--inject-faults 100` found 100 of
//! 100) with one value changed.
use super::RULE;
use crate::report::{
    Category::{Configuration, StressFailure},
    Severity::{Error, Info, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const S: Case = Case {
    base: H100Stress,
    ..CASE
};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "recorded-h100-passed",
            expect: Quiet,
            ..S
        },
        Case {
            name: "two-words-read-back-wrong",
            set: &[
                ("/stress/gpus/0/memory_errors", "2"),
                (
                    "/stress/gpus/0/first_memory_errors",
                    r#"[
                    {"chunk": 3, "chunk_bytes": 1073741824, "offset": 4096, "expected": 1431655765, "actual": 1431655764, "flipped_bits": 1, "pattern": "moving inversions 0x55555555"},
                    {"chunk": 7, "chunk_bytes": 1073741824, "offset": 81920, "expected": 2863311530, "actual": 2863311786, "flipped_bits": 256, "pattern": "moving inversions 0xaaaaaaaa"}]"#,
                ),
            ],
            expect: Fires(Error, StressFailure),
            ..S
        },
        Case {
            name: "injected-flips-all-found",
            set: &[
                ("/stress/gpus/0/injected_flips", "100"),
                ("/stress/gpus/0/injected_found", "100"),
                ("/stress/gpus/0/memory_errors", "100"),
            ],
            expect: Fires(Info, StressFailure),
            ..S
        },
        Case {
            name: "injected-flips-one-missed",
            set: &[
                ("/stress/gpus/0/injected_flips", "100"),
                ("/stress/gpus/0/injected_found", "99"),
                ("/stress/gpus/0/memory_errors", "99"),
            ],
            expect: Fires(Error, StressFailure),
            ..S
        },
        Case {
            name: "no-round-completed",
            set: &[
                ("/stress/seconds", "3.0"),
                ("/stress/gpus/0/memory_rounds", "0"),
            ],
            expect: Fires(Warning, Configuration),
            ..S
        },
        // 95 % of free memory is enough: 80241835032 of 84465090560 bytes is 94.99996 %.
        Case {
            name: "just-under-95-percent-covered",
            set: &[("/stress/gpus/0/tested_bytes", "80241835032")],
            expect: Fires(Info, StressFailure),
            ..S
        },
        Case {
            name: "95-percent-covered",
            set: &[("/stress/gpus/0/tested_bytes", "80241836032")],
            expect: Quiet,
            ..S
        },
        Case {
            name: "compute-only-run",
            set: &[
                ("/stress/tests", r#"["compute"]"#),
                ("/stress/gpus/0/memory_rounds", "0"),
            ],
            expect: Quiet,
            ..S
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
