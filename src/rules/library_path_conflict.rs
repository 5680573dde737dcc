//! `libs.path-conflict`: CUDA runtimes or cuDNNs of different major versions on the loader's
//! search path at once.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "libs.path-conflict",
        category: Category::LibraryPathConflict,
        area: Area::Cuda,
        summary: "CUDA runtimes or cuDNN libraries of different majors on the loader's search path",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    let runtimes: Vec<_> = ctx
        .snap
        .runtime_list()
        .iter()
        .filter(|r| r.on_search_path)
        .collect();
    let mut majors: Vec<u32> = runtimes.iter().filter_map(|r| r.major()).collect();
    majors.sort_unstable();
    majors.dedup();
    if majors.len() > 1 {
        let list: Vec<String> = runtimes
            .iter()
            .map(|r| {
                format!(
                    "{} (CUDA {}, from {})",
                    r.path,
                    r.version_string().unwrap_or_else(|| "?".into()),
                    r.origins.join(", ")
                )
            })
            .collect();
        out.push(
            doc.finding(
                Severity::Warning,
                format!(
                    "CUDA runtimes of {} majors are on the library search path",
                    majors
                        .iter()
                        .map(|m| m.to_string())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                format!("The loader can find: {}.", list.join("; ")),
            )
            .fix(
                "Keep only the toolkit you build with on LD_LIBRARY_PATH, e.g.:",
                &[
                    "export LD_LIBRARY_PATH=/usr/local/cuda/lib64",
                    "echo $LD_LIBRARY_PATH | tr ':' '\\n'",
                ],
            )
            .evidence(json!({"majors": majors, "runtimes": runtimes})),
        );
    }
    let cudnn: Vec<_> = ctx
        .snap
        .cudnn_list()
        .iter()
        .filter(|c| c.on_search_path)
        .collect();
    let mut cmaj: Vec<u32> = cudnn.iter().filter_map(|c| c.major()).collect();
    cmaj.sort_unstable();
    cmaj.dedup();
    if cmaj.len() > 1 {
        let list: Vec<String> = cudnn
            .iter()
            .map(|c| {
                format!(
                    "{} (cuDNN {})",
                    c.path,
                    c.version_string().unwrap_or_else(|| "?".into())
                )
            })
            .collect();
        out.push(
            doc.finding(
                Severity::Warning,
                "cuDNN libraries of different majors are on the library search path",
                format!("The loader can find: {}.", list.join("; ")),
            )
            .fix(
                "Remove all but one cuDNN major from LD_LIBRARY_PATH / the ld.so configuration.",
                &[],
            )
            .evidence(json!({"majors": cmaj, "libraries": cudnn})),
        );
    }
    out
}

#[cfg(test)]
#[path = "library_path_conflict_tests.rs"]
pub(super) mod tests;
