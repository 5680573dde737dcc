//! `compat.driver-too-old`: the driver is older than a framework build, a CUDA runtime or
//! toolkit, or a GPU needs (minor-version compatibility applied, with its PTX-JIT limit).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::compat::{
    best_torch, builds, driver_runs, gpu_ccs, gpu_label, needs_ptx_jit, torch_install, DriverFacts,
    Framework, Runs,
};
use crate::fixes::{driver_fix, DriverAction, Terms, Values};
use crate::version::{CudaVersion, DriverVersion};
use crate::vocab::{Area, Category, Finding, Fix, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "compat.driver-too-old",
        category: Category::DriverTooOld,
        area: Area::Driver,
        summary: "The NVIDIA driver is older than a framework build, CUDA runtime or GPU needs",
    },
    check,
};

const COMPAT: &str =
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html";

fn install_driver_fix(terms: &Terms, req: Option<&DriverVersion>) -> Fix {
    match req {
        Some(r) => {
            let branch = r.major.max(580).to_string();
            let mut f = driver_fix(
                terms,
                DriverAction::Install,
                &Values {
                    branch: &branch,
                    version: None,
                },
            );
            f.text = format!(
                "NVIDIA driver {r} or newer is needed (branch R{} or later). {}",
                r.major, f.text
            );
            f
        }
        None => crate::fixes::make_fix("Install a newer NVIDIA driver.", vec![], "sh"),
    }
}

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let m = ctx.matrix;
    let d = DriverFacts::of(ctx.snap, m);
    if !d.known() {
        return Vec::new();
    }
    let terms = Terms::of(ctx.snap);
    let gpus = gpu_ccs(ctx.snap, m);
    let ccs: Vec<String> = gpus.iter().map(|(_, cc)| cc.clone()).collect();
    let mut out = Vec::new();

    for b in builds(ctx.snap, m) {
        // JAX states its own minimum driver.
        if let (Framework::Jax, Some(min), Some(have)) = (
            b.framework,
            b.min_driver.as_deref().and_then(DriverVersion::parse_min),
            d.version,
        ) {
            if have < min {
                out.push(
                    doc.finding(
                        Severity::Error,
                        format!("{} needs NVIDIA driver >= {} (this is {})", b.label, b.min_driver.clone().unwrap_or_default(), have),
                        format!("JAX's CUDA {} wheels need a Linux driver >= {} (JAX installation guide); {} is older.", b.min_runtime.map(|c| c.major).unwrap_or(0), b.min_driver.clone().unwrap_or_default(), d.describe()),
                    )
                    .with_fix(install_driver_fix(&terms, Some(&min)))
                    .evidence(json!({"build": b.label, "driver": have.to_string(), "min_driver": b.min_driver}))
                    .link(b.source.as_deref().unwrap_or(COMPAT)),
                );
                continue;
            }
        }
        let Some(need) = b.cuda.or(b.min_runtime) else {
            continue;
        };
        // The build must JIT its PTX when some GPU has no cubin for it.
        let jit_gpu = gpus.iter().find(|(_, cc)| needs_ptx_jit(&b, cc));
        let runs = driver_runs(m, &d, need, jit_gpu.is_some());
        let Runs::TooOld(req) = runs else { continue };
        let mut detail = format!(
            "{} was built with CUDA {need}; this machine has {}.",
            b.label,
            d.describe()
        );
        if let Some((g, cc)) = jit_gpu {
            detail.push_str(&format!(" {} has no compiled kernels in this build, so the driver must JIT-compile its PTX, which minor-version compatibility does not cover.", gpu_label(g, cc)));
        }
        if let Some(r) = &req {
            detail.push(' ');
            detail.push_str(&r.why);
            detail.push('.');
        }
        let mut fix = install_driver_fix(&terms, req.as_ref().map(|r| &r.driver));
        if b.framework == Framework::Torch {
            if let Some((row, v)) = best_torch(m, &d, &ccs) {
                fix.text = format!("{}; or keep this driver and install PyTorch {} +{} (CUDA {}), which runs on it (last command):", fix.text.trim_end_matches([':', '.']), row.torch, v.tag, v.cuda);
                fix.commands
                    .push(torch_install(row, v, Some(b.env), terms.windows()));
            }
        }
        out.push(
            doc.finding(Severity::Error, format!("The driver is too old for {}", b.label), detail)
                .with_fix(fix)
                .evidence(json!({"build": b.label, "built_with_cuda": need.to_string(), "driver": d.version.map(|v| v.to_string()), "driver_cuda": d.cuda.map(|c| c.to_string()), "requires": req.as_ref().map(|r| r.driver.to_string())}))
                .link(req.as_ref().map(|r| r.source.as_str()).unwrap_or(COMPAT)),
        );
    }

    out.extend(runtime_findings(ctx, doc, &d, &terms));
    out.extend(gpu_findings(doc, m, &d, &terms, &gpus));
    out
}

/// CUDA runtimes the loader finds by name, an assumed CUDA, and toolkits, that the driver is
/// too old for.
fn runtime_findings(ctx: &Context, doc: &RuleDoc, d: &DriverFacts, terms: &Terms) -> Vec<Finding> {
    let m = ctx.matrix;
    let mut out = Vec::new();
    let mut seen: Vec<CudaVersion> = Vec::new();
    let assumed = ctx
        .snap
        .cuda
        .assumed_version
        .as_deref()
        .and_then(CudaVersion::parse);
    let mut wanted: Vec<(CudaVersion, String, bool)> = Vec::new();
    if let Some(c) = assumed {
        wanted.push((c, format!("CUDA {c} (assumed)"), true));
    }
    for r in ctx
        .snap
        .runtime_list()
        .iter()
        .filter(|r| r.on_search_path && r.path != "(assumed)")
    {
        if let Some(c) = r.api_version.get().and_then(|v| CudaVersion::from_api(*v)) {
            wanted.push((c, format!("the CUDA {c} runtime {}", r.path), false));
        }
    }
    if let Some(tks) = ctx.snap.cuda.toolkits.get() {
        for t in tks {
            if let Some(c) = t.version.as_deref().and_then(CudaVersion::parse) {
                wanted.push((c, format!("the CUDA {c} toolkit at {}", t.root), false));
            }
        }
    }
    for (c, what, is_error) in wanted {
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        if let Runs::TooOld(req) = driver_runs(m, d, c, false) {
            let fix = install_driver_fix(terms, req.as_ref().map(|r| &r.driver));
            out.push(
                doc.finding(
                    if is_error { Severity::Error } else { Severity::Warning },
                    format!("The driver is too old for CUDA {c}"),
                    format!("Programs built with {what} need a newer driver than {}.{}", d.describe(), req.as_ref().map(|r| format!(" {}.", r.why)).unwrap_or_default()),
                )
                .with_fix(fix)
                .evidence(json!({"cuda": c.to_string(), "driver": d.version.map(|v| v.to_string()), "driver_cuda": d.cuda.map(|c| c.to_string())}))
                .link(req.as_ref().map(|r| r.source.as_str()).unwrap_or(COMPAT)),
            );
        }
    }
    out
}

/// Each GPU needs at least the GA driver of the first CUDA that targets it (derived bound,
/// reference/compat-facts.md §3).
fn gpu_findings(
    doc: &RuleDoc,
    m: &crate::matrix::Matrix,
    d: &DriverFacts,
    terms: &Terms,
    gpus: &[(&crate::snapshot::Gpu, String)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(have) = d.version {
        for (g, cc) in gpus {
            let Some(row) = m.cc(cc) else { continue };
            let Some(first) = row.first_cuda.as_deref().and_then(CudaVersion::parse) else {
                continue;
            };
            let Some((min, trow)) = m.ga_driver(first, d.os) else {
                continue;
            };
            if have < min {
                let fix = install_driver_fix(terms, Some(&min));
                out.push(
                    doc.finding(
                        Severity::Error,
                        format!("Driver {have} is too old for {}", gpu_label(g, cc)),
                        format!("{} GPUs (compute {cc}) are supported from CUDA {first}, whose first driver is {min}; driver {have} predates them and cannot drive this GPU.", row.arch),
                    )
                    .with_fix(fix)
                    .evidence(json!({"compute_capability": cc, "first_cuda": first.to_string(), "min_driver": min.to_string(), "driver": have.to_string()}))
                    .on_gpu(g.index)
                    .link(&trow.source),
                );
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "compat_driver_tests.rs"]
pub(super) mod tests;
