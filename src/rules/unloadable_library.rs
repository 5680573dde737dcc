//! `libs.unloadable`: a CUDA runtime or cuDNN library that fails, crashes or aborts when it is
//! loaded and asked its version, typically a partial install (cuDNN 9's libcudnn.so.9 calls
//! abort() when libcudnn_graph.so.9 is missing; cuDNN 8 does the same without
//! libcudnn_ops_infer.so.8, seen on NVIDIA's PyPI wheels 9.1.0.70 and 8.9.7.29).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::snapshot::Probed;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "libs.unloadable",
        category: Category::CudnnMismatch,
        area: Area::Cudnn,
        summary: "A libcudart or libcudnn found on this machine fails or aborts when loaded",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    let s = ctx.snap;
    let mut report = |kind: &str,
                      path: &str,
                      error: &str,
                      on_path: bool,
                      category: Category,
                      area| {
        let sev = if on_path {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut f = doc
            .finding(
                sev,
                format!("{kind} at {path} fails when loaded"),
                format!(
                    "Loading it and asking its version failed: {error}.{}",
                    if on_path {
                        " It is on the loader's search path, so programs that load it by name get this broken copy."
                    } else {
                        ""
                    }
                ),
            )
            .fix_owned(
                "Reinstall it completely, or take its directory off LD_LIBRARY_PATH; for a pip wheel:",
                vec![crate::fixes::python_install_command(
                    s.python_envs()
                        .iter()
                        .find(|e| e.site_packages.iter().any(|sp| path.starts_with(sp.as_str()))),
                    super::windows_fixes::on_windows(s),
                    &crate::fixes::PyInstall::new(&["nvidia-cudnn-cu12"])
                        .flag("--force-reinstall")
                        .flag("--no-deps"),
                )],
            )
            .evidence(json!({"path": path, "error": error, "on_search_path": on_path}));
        f.category = category;
        f.area = area;
        out.push(f);
    };
    for c in s.cudnn_list() {
        if let Probed::Failed { error, .. } = &c.version {
            report(
                "cuDNN",
                &c.path,
                error,
                c.on_search_path,
                Category::CudnnMismatch,
                Area::Cudnn,
            );
        }
    }
    for r in s.runtime_list() {
        if let Probed::Failed { error, .. } = &r.api_version {
            report(
                "The CUDA runtime",
                &r.path,
                error,
                r.on_search_path,
                Category::CudaRuntimeMismatch,
                Area::Cuda,
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "unloadable_library_tests.rs"]
pub(super) mod tests;
