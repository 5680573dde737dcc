//! `compat.driver-too-old`'s cases (tests/it/rules.rs `the_driver_against_an_assumed_older_driver`):
//! the synthetic 2 × H100's torch 2.7.1+cu126 and the recorded H100's torch 2.11.0+cu130 against
//! assumed older drivers, through the embedded matrix.
use super::RULE;
use crate::report::{
    Category::DriverTooOld,
    Severity::{Error, Warning},
};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

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
        // cu126 runs on R535 (CUDA 12.2) by minor-version compatibility.
        Case {
            name: "cu126-on-r535",
            assume: &["driver=535.104.05"],
            expect: Quiet,
            ..CASE
        },
        // R470 predates CUDA 12 and the H100 (CUDA 11.8, driver 520): the build and both GPUs.
        Case {
            name: "cu126-and-h100-on-r470",
            assume: &["driver=470.82.01"],
            expect: Fires(Error, DriverTooOld),
            ..CASE
        },
        // CUDA 13 needs R580: torch 2.11.0+cu130 on R575.
        Case {
            name: "cu130-on-r575",
            base: H100,
            assume: &["driver=575.57.08"],
            expect: Fires(Error, DriverTooOld),
            ..CASE
        },
        // The recorded H100's toolkit 13.0 and libcudart 13 on the search path, with torch
        // taken out of the venv: warnings for what the loader finds.
        Case {
            name: "cuda-13-toolkit-on-r575",
            base: H100,
            set: &[("/python/value", "[]")],
            assume: &["driver=575.57.08"],
            expect: Fires(Warning, DriverTooOld),
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
