//! `env.debug-injection`: CUDA debugger, injection and profiler variables set.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::knowledge::env::DEBUG_INJECTION;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "env.debug-injection",
        category: Category::Configuration,
        area: Area::Environment,
        summary: "CUDA debugger, injection or profiler variables are set",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let set: Vec<&str> = DEBUG_INJECTION
        .iter()
        .copied()
        .filter(|k| ctx.snap.env.contains_key(*k))
        .collect();
    if set.is_empty() {
        return Vec::new();
    }
    vec![doc
        .finding(
            Severity::Warning,
            format!("CUDA debugging/injection variables are set: {}", set.join(", ")),
            "These variables make every CUDA process load a tool or change its error behaviour. DCGM's deployment diagnostics warn about them on production nodes.".to_string(),
        )
        .fix_owned("Unset them:", vec![format!("unset {}", set.join(" "))])
        .evidence(json!(set.iter().map(|k| (k.to_string(), ctx.snap.env.get(*k).cloned().unwrap_or_default())).collect::<std::collections::BTreeMap<_, _>>()))]
}

#[cfg(test)]
#[path = "debug_injection_tests.rs"]
pub(super) mod tests;
