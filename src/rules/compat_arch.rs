//! `compat.arch-unsupported`: a GPU that a framework build has no kernels for (neither a cubin
//! of the same major nor PTX it can JIT), that the driver branch no longer supports, or that a
//! CUDA toolkit can no longer build for.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::compat::{
    best_torch, builds, gpu_ccs, gpu_label, torch_install, DriverFacts, Framework,
};
use crate::matrix::{coverage, split_cc, Coverage};
use crate::version::CudaVersion;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "compat.arch-unsupported",
        category: Category::ArchUnsupported,
        area: Area::Gpus,
        summary: "A GPU's architecture is not supported by a framework build, the driver branch or a CUDA toolkit",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let m = ctx.matrix;
    let d = DriverFacts::of(ctx.snap, m);
    let gpus = gpu_ccs(ctx.snap, m);
    let ccs: Vec<String> = gpus.iter().map(|(_, cc)| cc.clone()).collect();
    let mut out = Vec::new();
    for b in builds(ctx.snap, m) {
        let windows = super::windows_fixes::on_windows(ctx.snap);
        for (g, cc) in &gpus {
            let missing = missing_kernels(m, &b, cc);
            let Some(detail) = missing else { continue };
            let arch = m.arch_of_cc(cc).unwrap_or("this");
            let mut f = doc
                .finding(
                    Severity::Error,
                    format!("{} has no kernels for {}", b.label, gpu_label(g, cc)),
                    format!("{detail} CUDA programs fail with 'no kernel image is available for execution on the device' on this {arch} GPU."),
                )
                .evidence(json!({"build": b.label, "compute_capability": cc, "sass": b.sass, "ptx": b.ptx, "min_cc": b.min_cc}))
                .on_gpu(g.index);
            if b.framework == Framework::Torch {
                if let Some((row, v)) = best_torch(m, &d, &ccs) {
                    f = f.fix_owned(
                        format!("Install PyTorch {} +{} (CUDA {}), whose build covers compute {cc} and runs on this driver:", row.torch, v.tag, v.cuda),
                        vec![torch_install(row, v, Some(b.env), windows)],
                    );
                } else {
                    f = f.fix("No PyTorch build in the matrix covers this GPU with this driver; build PyTorch from source with TORCH_CUDA_ARCH_LIST including it.", &[]);
                }
            } else if b.framework == Framework::Jax {
                let mut fix = crate::fixes::python_install(
                    Some(b.env),
                    windows,
                    &crate::fixes::PyInstall::new(&["jax[cuda12]"]).flag("-U"),
                );
                fix.text = format!("CUDA 13 JAX wheels need compute 7.5+, CUDA 12 wheels 5.2+: install the CUDA 12 plugin on older GPUs. {}", fix.text).trim_end().to_string();
                f = f.with_fix(fix);
            } else {
                f = f.fix("Use a TensorFlow release whose build_info lists this architecture, or build TensorFlow from source with it.", &[]);
            }
            if let Some(s) = &b.source {
                f = f.link(s);
            }
            out.push(f);
        }
    }
    out.extend(dropped_by_driver(ctx, doc, &d, &gpus));
    out.extend(dropped_by_toolkits(ctx, doc, &gpus));
    out
}

/// Why build `b` has no kernels for compute capability `cc`, if it has none: no cubin of the
/// same major nor PTX it can JIT, a JAX below its minimum, or a PyTorch built with a CUDA
/// older than the GPU.
fn missing_kernels(
    m: &crate::matrix::Matrix,
    b: &crate::compat::Build,
    cc: &str,
) -> Option<String> {
    if let Some(from) = b.arch_from {
        matches!(coverage(&b.sass, &b.ptx, cc), Coverage::None).then(|| {
            format!(
                "{} has cubins for {} and PTX for {} ({from}); none runs on compute {cc} (a cubin runs only on its own major, PTX only on newer GPUs).",
                b.label,
                list(&b.sass),
                list(&b.ptx),
            )
        })
    } else if let Some(min) = &b.min_cc {
        (split_cc(cc) < split_cc(min)).then(|| {
            format!("{} supports compute capability {min} and newer (JAX installation guide); this GPU is {cc}.", b.label)
        })
    } else if b.framework == Framework::Torch {
        // No architecture list: a build made with a CUDA older than the first one that
        // compiles for the GPU's major has no cubin for it.
        let first = first_cuda_of_major(m, cc);
        b.cuda.zip(first).filter(|(built, first)| built < first).map(|(built, first)| {
            format!("{} was built with CUDA {built}; the first CUDA that compiles for compute {}.x is {first}, so it has no cubin for this GPU.", b.label, cc.split('.').next().unwrap_or(cc))
        })
    } else {
        None
    }
}

/// Driver branches that dropped an architecture.
fn dropped_by_driver(
    ctx: &Context,
    doc: &RuleDoc,
    d: &DriverFacts,
    gpus: &[(&crate::snapshot::Gpu, String)],
) -> Vec<Finding> {
    let m = ctx.matrix;
    let mut out = Vec::new();
    if let Some(v) = d.version {
        for (g, cc) in gpus {
            let Some(row) = m.cc(cc) else { continue };
            let Some(last) = row.last_driver_branch else {
                continue;
            };
            if v.major > last {
                out.push(
                    doc.finding(
                        Severity::Error,
                        format!("Driver {v} no longer supports {} GPUs", row.arch),
                        format!("{} is a {} GPU; R{last} is the last driver branch that supports the architecture, and driver {v} (R{}) does not drive it.", gpu_label(g, cc), row.arch, v.major),
                    )
                    .with_fix({
                        let branch = last.to_string();
                        let mut fix = crate::fixes::driver_fix(
                            &crate::fixes::Terms::of(ctx.snap),
                            crate::fixes::DriverAction::InstallProprietary,
                            &crate::fixes::Values { branch: &branch, version: None },
                        );
                        fix.text = format!("Install the R{last} legacy driver (the newest {last}.x, proprietary modules). {}", fix.text);
                        fix
                    })
                    .evidence(json!({"compute_capability": cc, "arch": row.arch, "last_driver_branch": last, "driver": v.to_string()}))
                    .on_gpu(g.index)
                    .link(&row.source),
                );
            }
        }
    }
    out
}

/// CUDA toolkits and runtimes on the path that can no longer build for a GPU.
fn dropped_by_toolkits(
    ctx: &Context,
    doc: &RuleDoc,
    gpus: &[(&crate::snapshot::Gpu, String)],
) -> Vec<Finding> {
    let m = ctx.matrix;
    let mut out = Vec::new();
    let mut toolkit_cudas: Vec<(CudaVersion, String)> = Vec::new();
    if let Some(tks) = ctx.snap.cuda.toolkits.get() {
        for t in tks {
            if let Some(c) = t.version.as_deref().and_then(CudaVersion::parse) {
                toolkit_cudas.push((c, format!("the CUDA {c} toolkit at {}", t.root)));
            }
        }
    }
    if let Some(c) = ctx
        .snap
        .cuda
        .assumed_version
        .as_deref()
        .and_then(CudaVersion::parse)
    {
        toolkit_cudas.push((c, format!("CUDA {c} (assumed)")));
    }
    for (c, what) in toolkit_cudas {
        for (g, cc) in gpus {
            let Some(row) = m.cc(cc) else { continue };
            let Some(last) = row.last_cuda_major else {
                continue;
            };
            if c.major > last {
                out.push(
                    doc.finding(
                        Severity::Warning,
                        format!("CUDA {c} cannot build for {} ({})", gpu_label(g, cc), row.arch),
                        format!("CUDA {}.x is the last toolkit that compiles for {} GPUs; code built with {what} has no kernels for this GPU.", last, row.arch),
                    )
                    .fix_owned(format!("Build for this GPU with a CUDA {last}.x toolkit."), vec![])
                    .evidence(json!({"cuda": c.to_string(), "compute_capability": cc, "last_cuda_major": last}))
                    .on_gpu(g.index)
                    .link(&row.source),
                );
            }
        }
    }
    out
}

/// The first CUDA that targets any compute capability of `cc`'s major (a cubin runs on later
/// minors of its major).
fn first_cuda_of_major(m: &crate::matrix::Matrix, cc: &str) -> Option<CudaVersion> {
    let major = split_cc(cc)?.0;
    m.ccs
        .iter()
        .filter(|r| split_cc(&r.cc).is_some_and(|(a, _)| a == major))
        .filter_map(|r| r.first_cuda.as_deref().and_then(CudaVersion::parse))
        .min()
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "nothing".to_string()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
#[path = "compat_arch_tests.rs"]
pub(super) mod tests;
