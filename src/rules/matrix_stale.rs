//! `matrix.stale`: a version newer than the compatibility matrix knows. gpudoctor cannot judge
//! it, and says so ([?]) instead of passing it silently.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::compat::DriverFacts;
use crate::version::{cmp_dotted, dotted, CudaVersion, Pep440};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "matrix.stale",
        category: Category::MatrixStale,
        area: Area::Frameworks,
        summary: "A driver, CUDA or framework version is newer than the compatibility matrix knows",
    },
    check,
};

fn stale(doc: &RuleDoc, area: Area, what: String, newest: String) -> Finding {
    let mut f = doc
        .finding(
            Severity::Warning,
            format!("{what} is newer than the compatibility matrix knows"),
            format!("The matrix knows up to {newest}, so gpudoctor cannot tell whether {what} works here."),
        )
        .fix(
            "Install the latest gpudoctor release (each release embeds the matrix of its day), or only its matrix: download gpudoctor-matrix.yaml and gpudoctor-matrix.yaml.sha256 from the latest release, then:",
            &[
                "gpudoctor matrix update --from gpudoctor-matrix.yaml --sha256 \"$(cut -d' ' -f1 gpudoctor-matrix.yaml.sha256)\"",
                "gpudoctor matrix show",
            ],
        )
        .evidence(json!({"version": what, "newest_known": newest}));
    f.area = area;
    f
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let m = ctx.matrix;
    let mut out = Vec::new();
    let newer = |v: &str, known: &str| {
        let p = Pep440::parse(v).map(|p| p.release).unwrap_or_default();
        cmp_dotted(
            &p.into_iter().take(2).collect::<Vec<_>>(),
            &dotted(known).unwrap_or_default(),
        ) == std::cmp::Ordering::Greater
    };
    for env in ctx.snap.python_envs() {
        if let (Some(t), Some(row)) = (&env.torch, m.newest_torch()) {
            if newer(&t.version, &row.torch) {
                out.push(stale(
                    doc,
                    Area::Frameworks,
                    format!("torch {}", t.version),
                    format!("torch {}", row.torch),
                ));
            }
        }
        if let (Some(tf), Some(row)) = (&env.tensorflow, m.newest_tensorflow()) {
            if newer(&tf.version, &row.tf) {
                out.push(stale(
                    doc,
                    Area::Frameworks,
                    format!("tensorflow {}", tf.version),
                    format!("tensorflow {}", row.tf),
                ));
            }
        }
        if let (Some(j), Some(below)) = (env.package("jax"), m.jax_known_below()) {
            let v = Pep440::parse(&j.version)
                .map(|p| p.release)
                .unwrap_or_default();
            if cmp_dotted(&v, &dotted(below).unwrap_or_default()) != std::cmp::Ordering::Less {
                out.push(stale(
                    doc,
                    Area::Frameworks,
                    format!("jax {}", j.version),
                    format!("jax releases below {below}"),
                ));
            }
        }
    }
    if let Some(newest) = m.newest_cuda() {
        let mut seen = Vec::new();
        let runtimes = ctx
            .snap
            .runtime_list()
            .iter()
            .filter_map(|r| r.api_version.get().and_then(|v| CudaVersion::from_api(*v)));
        let toolkits = ctx
            .snap
            .cuda
            .toolkits
            .get()
            .into_iter()
            .flatten()
            .filter_map(|t| t.version.as_deref().and_then(CudaVersion::parse));
        for c in runtimes.chain(toolkits) {
            if c > newest && !seen.contains(&c) {
                seen.push(c);
                out.push(stale(
                    doc,
                    Area::Cuda,
                    format!("CUDA {c}"),
                    format!("CUDA {newest}"),
                ));
            }
        }
    }
    let d = DriverFacts::of(ctx.snap, m);
    if let (Some(v), None, Some(b)) = (d.version, d.cuda, m.newest_branch()) {
        if v.major > b {
            out.push(stale(
                doc,
                Area::Driver,
                format!("driver {v}"),
                format!("the R{b} branch"),
            ));
        }
    }
    out
}

#[cfg(test)]
#[path = "matrix_stale_tests.rs"]
pub(super) mod tests;
