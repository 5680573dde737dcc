//! `compat.cuda-runtime`: a framework build whose CUDA runtime is not installed where it can load
//! it, or is older than it accepts.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::compat::{builds, inspectable, libraries_fix, reachable_runtimes, Build, Framework};
use crate::version::CudaVersion;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "compat.cuda-runtime",
        category: Category::CudaRuntimeMismatch,
        area: Area::Cuda,
        summary: "A framework's CUDA runtime is missing from its environment and the library path, or too old",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let m = ctx.matrix;
    let windows = ctx.snap.host.get().is_some_and(|h| h.os == "windows");
    let mut out = Vec::new();
    for b in builds(ctx.snap, m) {
        if let Some(f) = tf_missing_libs(ctx, doc, &b) {
            out.push(f);
            continue;
        }
        if !inspectable(b.env) || windows {
            continue;
        }
        let Some(need) = b.min_runtime else { continue };
        let have = reachable_runtimes(ctx.snap, b.env);
        let same: Vec<_> = have.iter().filter(|(v, _)| v.major == need.major).collect();
        let fix = libraries_fix(&b, m, super::windows_fixes::on_windows(ctx.snap));
        let (sev, title, detail) = if same.is_empty() {
            (
                Severity::Error,
                format!("{} has no CUDA {} runtime to load", b.label, need.major),
                format!(
                    "{} needs libcudart.so.{} (CUDA {need}), but neither {} nor the library path has one{}.",
                    b.label,
                    need.major,
                    b.env.prefix,
                    if have.is_empty() {
                        String::new()
                    } else {
                        format!(" (found only {})", have.iter().map(|(v, p)| format!("CUDA {v} at {p}")).collect::<Vec<_>>().join(", "))
                    }
                ),
            )
        } else if same.iter().all(|(v, _)| *v < need) {
            let sev = if b.framework == Framework::Jax {
                Severity::Error
            } else {
                Severity::Warning
            };
            (
                sev,
                format!(
                    "{} needs CUDA >= {need}; the runtime it finds is older",
                    b.label
                ),
                format!(
                    "{} accepts CUDA {need} or newer; it can load only {}.",
                    b.label,
                    same.iter()
                        .map(|(v, p)| format!("CUDA {v} ({p})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        } else {
            continue;
        };
        let mut f = doc
            .finding(sev, title, detail)
            .fix_owned("Install the CUDA libraries this build uses:", vec![fix])
            .evidence(json!({"build": b.label, "needs": need.to_string(), "available": have.iter().map(|(v, p)| json!({"cuda": v.to_string(), "path": p})).collect::<Vec<_>>()}));
        if let Some(s) = &b.source {
            f = f.link(s);
        }
        out.push(f);
    }
    out
}

/// TensorFlow releases that open CUDA libraries by exact soname (before pip-delivered CUDA): the
/// first library no CUDA runtime it can load ships, named as the loader asks for it.
fn tf_missing_libs(ctx: &Context, doc: &RuleDoc, b: &Build) -> Option<Finding> {
    if b.framework != Framework::Tensorflow {
        return None;
    }
    let m = ctx.matrix;
    let row = m.tensorflow(&b.version)?;
    if row.libs.is_empty() {
        return None;
    }
    let windows = ctx.snap.host.get().is_some_and(|h| h.os == "windows");
    let have = reachable_runtimes(ctx.snap, b.env);
    if have.is_empty() && !inspectable(b.env) {
        return None;
    }
    let lib = row.libs.iter().find(|l| {
        let (lo, hi) = (CudaVersion::parse(&l.from), CudaVersion::parse(&l.to));
        !have
            .iter()
            .any(|(v, _)| lo.is_some_and(|lo| *v >= lo) && hi.is_some_and(|hi| *v <= hi))
    })?;
    let name = match (&lib.dll, windows) {
        (Some(d), true) => d.clone(),
        _ => lib.lib.clone(),
    };
    let found = if have.is_empty() {
        "no CUDA runtime at all".to_string()
    } else {
        have.iter()
            .map(|(v, p)| format!("CUDA {v} ({p})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ships = if lib.from == lib.to {
        format!("only CUDA {} ships", lib.from)
    } else {
        format!("only CUDA {}–{} ship", lib.from, lib.to)
    };
    let mut f = doc
        .finding(
            Severity::Error,
            format!("{} cannot load {name}", b.label),
            format!(
                "{} opens {name} by that exact name, which {ships}; it can load {found}. It logs \"Could not load dynamic library '{name}'\" and runs on the CPU only (TensorFlow {} was built with CUDA {} and cuDNN {}).",
                b.label, row.tf, row.cuda, row.cudnn
            ),
        )
        .fix_owned(
            "Install the CUDA this release was built with, or a TensorFlow release built for the CUDA you have:",
            vec![libraries_fix(b, m, super::windows_fixes::on_windows(ctx.snap))],
        )
        .evidence(json!({"build": b.label, "library": name, "cuda_range": [lib.from, lib.to], "available": have.iter().map(|(v, p)| json!({"cuda": v.to_string(), "path": p})).collect::<Vec<_>>()}));
    f = f.link(&row.source);
    Some(f)
}

#[cfg(test)]
#[path = "compat_runtime_tests.rs"]
pub(super) mod tests;
