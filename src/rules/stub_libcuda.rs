//! `libs.stub-libcuda`: a CUDA toolkit's link-time stub libcuda is on the loader's path ahead of
//! the driver's real one.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "libs.stub-libcuda",
        category: Category::LibraryPathConflict,
        area: Area::Cuda,
        summary: "A toolkit stub libcuda.so is on LD_LIBRARY_PATH ahead of the driver's",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let d = &ctx.snap.driver;
    let stub_answer = d
        .libcuda
        .get()
        .and_then(|l| l.error.as_deref())
        .is_some_and(|e| e.contains("STUB"));
    // The smoke tests load the file the probe resolved; cuInit answering
    // CUDA_ERROR_STUB_LIBRARY (34) there means that file is itself a stub.
    let smoke_stub = ctx
        .snap
        .smoke
        .get()
        .and_then(|s| s.error.as_ref())
        .is_some_and(|e| e.code == Some(34));
    let stub_answer = stub_answer || smoke_stub;
    let files = d.libcuda_files.get().cloned().unwrap_or_default();
    let first_searchable = files
        .iter()
        .find(|f| f.origin == "LD_LIBRARY_PATH" || f.origin == "ld.so.cache");
    let stub_first = first_searchable.is_some_and(|f| f.stub);
    if !stub_answer && !stub_first {
        return Vec::new();
    }
    let stub = files.iter().find(|f| f.stub).map(|f| f.path.clone());
    vec![doc
        .finding(
            Severity::Error,
            "A stub libcuda is loaded instead of the driver's",
            format!(
                "{} is a CUDA toolkit link stub; programs that load it fail with 'CUDA driver is a stub library'.",
                stub.clone().unwrap_or_else(|| "libcuda.so.1".to_string())
            ),
        )
        .fix(
            "Take the stubs directory out of LD_LIBRARY_PATH (and out of your shell profile):",
            &["export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v '/stubs' | paste -sd:)"],
        )
        .evidence(json!({"libcuda_files": files}))]
}

#[cfg(test)]
#[path = "stub_libcuda_tests.rs"]
pub(super) mod tests;
