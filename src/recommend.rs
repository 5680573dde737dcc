//! `gpudoctor recommend`: for the probed or assumed driver and GPUs, the newest build of each
//! framework that works, with the exact install command, and the driver the newest builds need.

use serde::Serialize;

use crate::compat::{best_torch, driver_runs, gpu_ccs, torch_install, DriverFacts, Runs};
use crate::matrix::{split_cc, Matrix};
use crate::snapshot::Snapshot;
use crate::version::CudaVersion;

#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    pub framework: String,
    /// The build that works here, or None.
    pub build: Option<String>,
    pub command: Option<String>,
    /// Why, or why nothing works.
    pub note: String,
    /// The minimum driver of the newest build of this framework, and that build.
    pub newest: Option<String>,
    pub newest_min_driver: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recommendations {
    pub schema: &'static str,
    pub driver: Option<String>,
    pub driver_cuda: Option<String>,
    pub gpus: Vec<String>,
    pub recommendations: Vec<Recommendation>,
}

pub fn recommend(snap: &Snapshot, m: &Matrix, only: Option<&str>) -> Recommendations {
    let d = DriverFacts::of(snap, m);
    let ccs: Vec<String> = gpu_ccs(snap, m).into_iter().map(|(_, cc)| cc).collect();
    let mut recs = Vec::new();
    let want = |f: &str| only.is_none_or(|o| o == f);
    let min_of = |cuda: CudaVersion| {
        m.min_driver(cuda, d.os, false)
            .map(|r| r.driver.to_string())
    };

    if want("torch") {
        let newest = m.newest_torch().and_then(|r| {
            let v = r
                .variants
                .iter()
                .max_by_key(|v| CudaVersion::parse(&v.cuda))?;
            Some((r, v))
        });
        let (build, command, note) = match best_torch(m, &d, &ccs) {
            Some((row, v)) => (
                Some(format!("torch {} +{} (CUDA {})", row.torch, v.tag, v.cuda)),
                Some(torch_install(row, v, "python")),
                format!(
                    "the newest PyTorch whose CUDA {} runs on {} and whose kernels cover {}",
                    v.cuda,
                    d.describe(),
                    gpus_phrase(&ccs)
                ),
            ),
            None => (None, None, no_fit(&d, &ccs, "PyTorch")),
        };
        recs.push(Recommendation {
            framework: "torch".into(),
            build,
            command,
            note,
            newest: newest.map(|(r, v)| format!("torch {} +{}", r.torch, v.tag)),
            newest_min_driver: newest
                .and_then(|(_, v)| CudaVersion::parse(&v.cuda))
                .and_then(min_of),
        });
    }
    if want("tensorflow") {
        let windows = snap.host.get().is_some_and(|h| h.os == "windows");
        let pick = m.tensorflow.iter().rev().find(|r| {
            let Some(cuda) = CudaVersion::parse(&r.cuda) else {
                return false;
            };
            (!windows || r.windows_gpu) && driver_runs(m, &d, cuda, false) == Runs::Yes
        });
        let newest = m.newest_tensorflow();
        let (build, command, note) = match pick {
            Some(r) => {
                let cmd = if r.pip_cuda && !windows {
                    format!("python -m pip install 'tensorflow[and-cuda]=={}.*'", r.tf)
                } else {
                    format!("python -m pip install 'tensorflow=={}.*'   # with CUDA {} and cuDNN {} installed", r.tf, r.cuda, r.cudnn)
                };
                (
                    Some(format!(
                        "tensorflow {} (CUDA {}, cuDNN {})",
                        r.tf, r.cuda, r.cudnn
                    )),
                    Some(cmd),
                    if windows {
                        "native Windows GPU support ended with TensorFlow 2.10; newer releases need WSL2".to_string()
                    } else {
                        format!(
                            "the newest TensorFlow whose CUDA {} runs on {}",
                            r.cuda,
                            d.describe()
                        )
                    },
                )
            }
            None => (None, None, no_fit(&d, &ccs, "TensorFlow")),
        };
        recs.push(Recommendation {
            framework: "tensorflow".into(),
            build,
            command,
            note,
            newest: newest.map(|r| format!("tensorflow {}", r.tf)),
            newest_min_driver: newest
                .and_then(|r| CudaVersion::parse(&r.cuda))
                .and_then(min_of),
        });
    }
    if want("jax") {
        let windows = snap.host.get().is_some_and(|h| h.os == "windows");
        let newest_below = m.jax_known_below().map(str::to_string);
        let mut rows: Vec<_> = m
            .jax
            .iter()
            .filter(|r| Some(&r.below) == newest_below.as_ref())
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.cuda_major));
        let pick = rows.iter().find(|r| {
            let min_ok = match (
                d.version,
                crate::version::DriverVersion::parse_min(&r.min_driver),
            ) {
                (Some(have), Some(min)) => have >= min,
                _ => CudaVersion::parse(&r.min_cuda)
                    .is_some_and(|c| driver_runs(m, &d, c, false) == Runs::Yes),
            };
            let cc_ok = r
                .min_cc
                .as_deref()
                .is_none_or(|min| ccs.iter().all(|cc| split_cc(cc) >= split_cc(min)));
            min_ok && cc_ok && !windows
        });
        let newest = rows.first();
        recs.push(Recommendation {
            framework: "jax".into(),
            build: pick.map(|r| format!("jax[cuda{}] (JAX below {})", r.cuda_major, r.below)),
            command: pick.map(|r| format!("python -m pip install -U 'jax[cuda{}]'", r.cuda_major)),
            note: match pick {
                Some(r) => format!(
                    "CUDA {} wheels need driver >= {} and compute capability {}+",
                    r.cuda_major,
                    r.min_driver,
                    r.min_cc.clone().unwrap_or_else(|| "?".into())
                ),
                None if windows => "JAX has no Windows GPU wheels; use WSL2".to_string(),
                None => no_fit(&d, &ccs, "JAX"),
            },
            newest: newest.map(|r| format!("jax[cuda{}]", r.cuda_major)),
            newest_min_driver: newest.map(|r| r.min_driver.clone()),
        });
    }
    Recommendations {
        schema: "gpudoctor.recommend/1",
        driver: d.version.map(|v| v.to_string()),
        driver_cuda: d.cuda.map(|c| c.to_string()),
        gpus: ccs,
        recommendations: recs,
    }
}

fn gpus_phrase(ccs: &[String]) -> String {
    if ccs.is_empty() {
        "any GPU (none known)".to_string()
    } else {
        format!("compute {}", ccs.join(", "))
    }
}

fn no_fit(d: &DriverFacts, ccs: &[String], fw: &str) -> String {
    if !d.known() {
        format!("no driver is known: give one with --assume driver=VERSION to see which {fw} build works")
    } else {
        format!(
            "no {fw} build in the matrix runs on {} with {}",
            d.describe(),
            gpus_phrase(ccs)
        )
    }
}

/// Human output.
pub fn render(r: &Recommendations) -> String {
    let mut s = format!(
        "For {} and {}:\n\n",
        match (&r.driver, &r.driver_cuda) {
            (Some(v), Some(c)) => format!("driver {v} (CUDA {c})"),
            (Some(v), None) => format!("driver {v}"),
            (None, Some(c)) => format!("a driver with CUDA {c}"),
            (None, None) => "an unknown driver".to_string(),
        },
        gpus_phrase(&r.gpus)
    );
    for x in &r.recommendations {
        match (&x.build, &x.command) {
            (Some(b), Some(c)) => s.push_str(&format!(
                "[✓] {}: {b}\n    {}\n    $ {c}\n",
                x.framework, x.note
            )),
            _ => s.push_str(&format!("[✗] {}: {}\n", x.framework, x.note)),
        }
        if let (Some(n), Some(d)) = (&x.newest, &x.newest_min_driver) {
            s.push_str(&format!("    The newest, {n}, needs driver >= {d}.\n"));
        }
    }
    s
}
