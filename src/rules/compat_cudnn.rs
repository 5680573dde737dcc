//! `compat.cudnn`: the cuDNN a framework can load against the one it was built for, and cuDNN
//! against the CUDA runtime beside it.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::compat::{builds, inspectable, libraries_fix, reachable_cudnn, Framework};
use crate::snapshot::Probed;
use crate::version::{cmp_dotted, decode_cudnn, dotted, CudaVersion};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "compat.cudnn",
        category: Category::CudnnMismatch,
        area: Area::Cudnn,
        summary: "The cuDNN a framework can load is not the one it was built for, or does not match the CUDA runtime",
    },
    check,
};

fn major_minor(v: &str) -> Vec<u64> {
    dotted(v).unwrap_or_default().into_iter().take(2).collect()
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out: Vec<Finding> = builds(ctx.snap, ctx.matrix)
        .iter()
        .filter_map(|b| build_finding(ctx, doc, b))
        .collect();
    out.extend(search_path_findings(ctx, doc));
    out
}

/// A framework build whose cuDNN is missing or older than the one it was built with.
fn build_finding(ctx: &Context, doc: &RuleDoc, b: &crate::compat::Build) -> Option<Finding> {
    let m = ctx.matrix;
    let want = b.cudnn.clone()?;
    // What the framework itself loaded, when --deep asked it.
    let loaded = match (&b.env.deep, b.framework) {
        (Some(Probed::Found { value }), Framework::Torch) => value
            .pointer("/torch/cudnn")
            .and_then(|v| v.as_u64())
            .and_then(decode_cudnn),
        _ => None,
    };
    let mut have = reachable_cudnn(ctx.snap, b.env);
    if let Some(l) = &loaded {
        have.insert(
            0,
            crate::compat::Reachable {
                version: l.clone(),
                place: "torch.backends.cudnn.version()".into(),
            },
        );
    }
    if have.is_empty() && !inspectable(b.env) {
        return None;
    }
    let fix = libraries_fix(b, m, super::windows_fixes::on_windows(ctx.snap));
    let (sev, problem) = cudnn_problem(b, &want, &have)?;
    let found = if have.is_empty() {
        "no cuDNN at all".to_string()
    } else {
        have.iter()
            .map(|h| format!("cuDNN {} ({})", h.version, h.place))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut f = doc
        .finding(sev, problem, format!("In {}, it can load {found}.", b.env.label()))
        .fix_owned("Install the cuDNN this build expects, e.g. by reinstalling it with its CUDA libraries:", vec![fix])
        .evidence(json!({"build": b.label, "expects": want, "available": have.iter().map(|h| json!({"version": h.version, "place": h.place})).collect::<Vec<_>>()}));
    if let Some(s) = &b.source {
        f = f.link(s);
    }
    Some(f)
}

/// What is wrong with the cuDNN build `b` can load (`have`) against the one it wants: JAX needs
/// one in its range; PyTorch and TensorFlow one of the same major, not older. None when fine.
fn cudnn_problem(
    b: &crate::compat::Build,
    want: &str,
    have: &[crate::compat::Reachable],
) -> Option<(Severity, String)> {
    let want_mm = major_minor(want);
    if b.framework == Framework::Jax {
        let below = b.cudnn_below.clone();
        let ok = have.iter().any(|h| {
            let v = major_minor(&h.version);
            cmp_dotted(&v, &want_mm) != std::cmp::Ordering::Less
                && below
                    .as_deref()
                    .is_none_or(|bl| cmp_dotted(&v, &major_minor(bl)) == std::cmp::Ordering::Less)
        });
        if ok {
            return None;
        }
        return Some((
            Severity::Error,
            format!(
                "{} needs cuDNN >= {want}{}",
                b.label,
                below.map(|x| format!(" and < {x}")).unwrap_or_default()
            ),
        ));
    }
    let same_major: Vec<_> = have
        .iter()
        .filter(|h| major_minor(&h.version).first() == want_mm.first())
        .collect();
    if same_major.is_empty() {
        Some((
            Severity::Error,
            format!(
                "{} needs cuDNN {} ({want})",
                b.label,
                want_mm.first().copied().unwrap_or(0)
            ),
        ))
    } else if same_major
        .iter()
        .all(|h| cmp_dotted(&major_minor(&h.version), &want_mm) == std::cmp::Ordering::Less)
    {
        // TensorFlow refuses an older minor; PyTorch warns or fails depending on release.
        let sev = if b.framework == Framework::Tensorflow {
            Severity::Error
        } else {
            Severity::Warning
        };
        Some((
            sev,
            format!(
                "{} was built with cuDNN {want}; only an older {} is available",
                b.label,
                same_major
                    .iter()
                    .map(|h| h.version.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    } else {
        None
    }
}

/// cuDNN on the search path vs the CUDA runtimes beside it.
fn search_path_findings(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let m = ctx.matrix;
    let mut out = Vec::new();
    let runtimes: Vec<CudaVersion> = ctx
        .snap
        .runtime_list()
        .iter()
        .filter(|r| r.on_search_path)
        .filter_map(|r| r.api_version.get().and_then(|v| CudaVersion::from_api(*v)))
        .collect();
    for c in ctx.snap.cudnn_list().iter().filter(|c| c.on_search_path) {
        let Some(v) = c.version_string() else {
            continue;
        };
        let Some(row) = m.cudnn(&v) else { continue };
        for rt in &runtimes {
            let fits = row.cuda.iter().any(|r| {
                let lo = CudaVersion::parse(&r.from);
                let hi = CudaVersion::parse(&r.to);
                lo.is_some_and(|lo| *rt >= lo) && hi.is_some_and(|hi| *rt <= hi)
            });
            if !fits {
                let builds: Vec<String> = row
                    .cuda
                    .iter()
                    .map(|r| format!("{}–{}", r.from, r.to))
                    .collect();
                out.push(
                    doc.finding(
                        Severity::Warning,
                        format!("cuDNN {v} has no build for CUDA {rt}"),
                        format!("{} (cuDNN {v}) is built for CUDA {}; the CUDA {rt} runtime on the same library path is not among them.", c.path, builds.join(", ")),
                    )
                    .fix("Put a cuDNN built for this CUDA on the library path (NVIDIA's cuDNN support matrix lists them).", &[])
                    .evidence(json!({"cudnn": v, "cuda": rt.to_string(), "cudnn_cuda_builds": builds}))
                    .link(&row.source),
                );
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "compat_cudnn_tests.rs"]
pub(super) mod tests;
