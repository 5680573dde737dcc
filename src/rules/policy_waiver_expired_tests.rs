//! `policy.waiver-expired`'s cases: its findings come from the policy (`Policy::apply`), not
//! from its `check`, so these cases run with a policy file (tests/it/policy.rs: a waiver of
//! driver.missing that expired on 2020-01-31, on the recorded no-driver machine).
use super::RULE;
use crate::report::{Category::Configuration, Severity::Warning};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "expired-waiver-of-driver-missing",
            base: NoDriver,
            policy: Some("schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: old ticket\n    expires: 2020-01-31\n"),
            expect: Fires(Warning, Configuration),
            ..CASE
        },
        // Valid to the day it is judged on.
        Case {
            name: "waiver-valid-today",
            base: NoDriver,
            policy: Some("schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: new ticket\n    expires: 2026-11-25\n"),
            expect: Quiet,
            ..CASE
        },
        // An expired waiver of a rule that found nothing has nothing to count again.
        Case {
            name: "expired-waiver-of-a-quiet-rule",
            base: H100,
            policy: Some("schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: old ticket\n    expires: 2020-01-31\n"),
            expect: Quiet,
            ..CASE
        },
        Case { name: "no-policy", base: NoDriver, expect: Quiet, ..CASE },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
