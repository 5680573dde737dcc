//! `policy.waiver-expired`: a `--policy` waiver past its date while the findings it covered are
//! still there. The policy adds these findings after the rules ran
//! ([`crate::policy::Policy::apply`]), in the area of the findings the waiver covered; this rule
//! is their documentation and their place in `--only` / `--skip`, so it judges nothing itself.

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "policy.waiver-expired",
        category: Category::Configuration,
        // The default; each finding takes the area of the findings its waiver covered.
        area: Area::Environment,
        summary: "A --policy waiver is past its expiry date",
    },
    check,
};

fn check(_ctx: &Context, _doc: &RuleDoc) -> Vec<Finding> {
    Vec::new()
}

#[cfg(test)]
#[path = "policy_waiver_expired_tests.rs"]
pub(super) mod tests;
