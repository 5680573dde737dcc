//! `env.cuda-visible-devices`: CUDA_VISIBLE_DEVICES hiding every GPU or naming absent ones.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "env.cuda-visible-devices",
        category: Category::Configuration,
        area: Area::Environment,
        summary: "CUDA_VISIBLE_DEVICES hides every GPU or names GPUs that do not exist",
    },
    check,
};

/// The outcome of applying CUDA_VISIBLE_DEVICES to the GPUs known.
#[derive(Debug, PartialEq)]
pub struct Visibility {
    pub visible: Vec<String>,
    /// The first invalid entry and those it hides.
    pub hidden_from: Option<usize>,
}

/// CUDA's parsing of the variable (reference/faults.md §6, CUDA-ENV): `count` and `uuids` are
/// the GPUs the driver lists, when known.
pub fn apply(value: &str, count: Option<usize>, uuids: &[String]) -> Visibility {
    let entries: Vec<&str> = if value.trim().is_empty() {
        Vec::new()
    } else {
        value.split(',').map(str::trim).collect()
    };
    let mut visible: Vec<String> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let ok = if let Ok(n) = e.parse::<i64>() {
            n >= 0 && count.is_none_or(|c| (n as usize) < c)
        } else if let Some(u) = e.strip_prefix("GPU-") {
            uuids.is_empty()
                || uuids
                    .iter()
                    .any(|x| x.strip_prefix("GPU-").is_some_and(|x| x.starts_with(u)))
        } else {
            e.starts_with("MIG-")
        };
        if !ok {
            return Visibility {
                visible,
                hidden_from: Some(i),
            };
        }
        if !visible.iter().any(|v| v == e) {
            visible.push(e.to_string());
        }
    }
    Visibility {
        visible,
        hidden_from: None,
    }
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let Some(value) = ctx.snap.env.get("CUDA_VISIBLE_DEVICES") else {
        return Vec::new();
    };
    let gpus = ctx.snap.gpu_list();
    let count = (!gpus.is_empty()).then_some(gpus.len());
    let uuids: Vec<String> = gpus.iter().filter_map(|g| g.uuid.get().cloned()).collect();
    let v = apply(value, count, &uuids);
    let entries: Vec<&str> = value.split(',').map(str::trim).collect();
    if v.visible.is_empty() {
        if !ctx.gpus_exist() {
            return Vec::new();
        }
        return vec![doc
            .finding(
                Severity::Error,
                "CUDA_VISIBLE_DEVICES hides every GPU",
                format!(
                    "CUDA_VISIBLE_DEVICES={value:?} leaves no GPU visible to CUDA programs started from this environment{}; they will report 'no CUDA-capable device is detected'.",
                    count.map(|c| format!(" (the driver lists {c})")).unwrap_or_default()
                ),
            )
            .fix("Unset it, or name GPUs that exist:", &["unset CUDA_VISIBLE_DEVICES", "nvidia-smi -L"])
            .evidence(json!({"CUDA_VISIBLE_DEVICES": value, "gpus": count}))];
    }
    if let Some(from) = v.hidden_from {
        let hidden: Vec<&str> = entries.iter().skip(from).copied().collect();
        return vec![doc
            .finding(
                Severity::Warning,
                "CUDA_VISIBLE_DEVICES names GPUs that do not exist",
                format!(
                    "CUDA_VISIBLE_DEVICES={value:?}: {:?} is not a GPU here{}, so CUDA ignores it and every entry after it ({}); only {} stay visible.",
                    entries.get(from).copied().unwrap_or(""),
                    count.map(|c| format!(" (the driver lists {c})")).unwrap_or_default(),
                    hidden.join(", "),
                    v.visible.join(", ")
                ),
            )
            .fix("List only GPUs that exist:", &["nvidia-smi -L", "export CUDA_VISIBLE_DEVICES=0"])
            .evidence(json!({"CUDA_VISIBLE_DEVICES": value, "visible": v.visible, "ignored": hidden}))];
    }
    Vec::new()
}

#[cfg(test)]
#[path = "cuda_visible_devices_tests.rs"]
pub(super) mod tests;
