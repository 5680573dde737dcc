//! `driver.device-permissions`: /dev/nvidia* exist but this user cannot open them.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "driver.device-permissions",
        category: Category::Configuration,
        area: Area::Driver,
        summary: "The /dev/nvidia* device nodes exist but this user cannot open them",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(nodes) = ctx.snap.driver.device_nodes.get() else {
        return Vec::new();
    };
    let blocked: Vec<&str> = nodes
        .iter()
        .filter(|n| !n.path.contains("nvidia-caps") && (!n.readable || !n.writable))
        .map(|n| n.path.as_str())
        .collect();
    if blocked.is_empty() {
        return Vec::new();
    }
    vec![doc
        .finding(
            Severity::Error,
            "This user cannot open the NVIDIA device nodes",
            format!(
                "No read-write access to {}; CUDA programs run as this user will see no GPU.",
                blocked.join(", ")
            ),
        )
        .fix(
            "Give the user access to the group that owns the nodes, then log in again:",
            &["ls -l /dev/nvidia*", "sudo usermod -aG video \"$USER\""],
        )
        .evidence(json!({"not_accessible": blocked}))]
}

#[cfg(test)]
#[path = "device_permissions_tests.rs"]
pub(super) mod tests;
