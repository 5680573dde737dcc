//! `gpudoctor matrix show`: what the matrix in use covers, as three tables (per framework, per
//! CUDA version, per GPU architecture) and as JSON. Pure functions of the matrix.

use serde::Serialize;
use serde_json::json;

use crate::matrix::{coverage, split_cc, Coverage, JaxRow, Matrix, Os, MATRIX_SCHEMA};
use crate::version::CudaVersion;

/// Which tables to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Framework,
    Cuda,
    Arch,
}

/// One CUDA minor version: its driver, branches, and what is built for it.
#[derive(Debug, Clone, Serialize)]
pub struct CudaLine {
    pub cuda: String,
    pub ga_linux: Option<String>,
    pub ga_windows: Option<String>,
    /// Driver branches that report this CUDA version.
    pub branches: Vec<u32>,
    /// cuDNN release ranges with a build for it.
    pub cudnn: Vec<String>,
    /// PyTorch releases with a wheel for it.
    pub torch: Vec<String>,
    pub tensorflow: Vec<String>,
    /// JAX ranges built with it ("0.6.0–0.7.1 cuda12").
    pub jax: Vec<String>,
}

/// One compute capability: its GPUs, toolkits and drivers, and which builds run on it.
#[derive(Debug, Clone, Serialize)]
pub struct ArchLine {
    pub cc: String,
    pub arch: String,
    pub gpus: Vec<String>,
    pub first_cuda: Option<String>,
    /// The GA driver of `first_cuda` (Linux): the oldest driver for such a GPU.
    pub min_driver: Option<String>,
    pub last_cuda_major: Option<u32>,
    pub last_driver_branch: Option<u32>,
    /// PyTorch releases with a cubin that runs on it in some wheel.
    pub torch_sass: Vec<String>,
    /// PyTorch releases that reach it only through PTX.
    pub torch_ptx_only: Vec<String>,
    pub jax: Vec<String>,
    pub cudnn: Vec<String>,
}

/// The CUDA minor versions the toolkit table names, in order.
fn cuda_versions(m: &Matrix) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in &m.toolkits {
        if !v.contains(&t.cuda) {
            v.push(t.cuda.clone());
        }
    }
    v
}

fn cuda_in(c: &str, from: &str, to: &str) -> bool {
    match (
        CudaVersion::parse(c),
        CudaVersion::parse(from),
        CudaVersion::parse(to),
    ) {
        (Some(c), Some(a), Some(b)) => a <= c && c <= b,
        _ => false,
    }
}

fn cc_in(cc: &str, min: &str, max: Option<&str>) -> bool {
    let c = split_cc(cc);
    c >= split_cc(min) && max.is_none_or(|x| c <= split_cc(x))
}

fn cudnn_range(from: &str, to: &str) -> String {
    if from == to {
        from.to_string()
    } else {
        format!("{from}–{to}")
    }
}

/// JAX ranges per CUDA plugin, adjacent ranges joined ("0.4.31–0.7.1 cuda12"); a gap between
/// two ranges (a release the matrix leaves out) stays visible.
fn jax_runs(mut rows: Vec<&JaxRow>) -> Vec<String> {
    let key = |s: &str| crate::version::dotted(s).unwrap_or_default();
    rows.sort_by(|a, b| {
        a.cuda_major
            .cmp(&b.cuda_major)
            .then(crate::version::cmp_dotted(&key(&a.from), &key(&b.from)))
    });
    let mut out: Vec<(u32, String, String)> = Vec::new();
    for r in rows {
        match out.last_mut() {
            Some((major, _, below)) if *major == r.cuda_major && *below == r.from => {
                below.clone_from(&r.below)
            }
            _ => out.push((r.cuda_major, r.from.clone(), r.below.clone())),
        }
    }
    out.into_iter()
        .map(|(major, from, below)| format!("{from}–{below} cuda{major}"))
        .collect()
}

pub fn cuda_lines(m: &Matrix) -> Vec<CudaLine> {
    cuda_versions(m)
        .into_iter()
        .map(|c| {
            let ga = m.toolkits.iter().find(|t| t.ga && t.cuda == c);
            CudaLine {
                ga_linux: ga.and_then(|t| t.linux.clone()),
                ga_windows: ga.and_then(|t| t.windows.clone()),
                branches: m
                    .branches
                    .iter()
                    .filter(|b| b.cuda == c)
                    .map(|b| b.branch)
                    .collect(),
                cudnn: m
                    .cudnn
                    .iter()
                    .filter(|r| r.cuda.iter().any(|x| cuda_in(&c, &x.from, &x.to)))
                    .map(|r| cudnn_range(&r.from, &r.to))
                    .collect(),
                torch: m
                    .pytorch
                    .iter()
                    .filter(|r| r.variants.iter().any(|v| v.cuda == c))
                    .map(|r| r.torch.clone())
                    .collect(),
                tensorflow: m
                    .tensorflow
                    .iter()
                    .filter(|r| r.cuda == c)
                    .map(|r| r.tf.clone())
                    .collect(),
                jax: jax_runs(m.jax.iter().filter(|r| r.built_with == c).collect()),
                cuda: c,
            }
        })
        .collect()
}

pub fn arch_lines(m: &Matrix) -> Vec<ArchLine> {
    m.ccs
        .iter()
        .map(|r| {
            let mut sass = Vec::new();
            let mut ptx_only = Vec::new();
            for t in &m.pytorch {
                let cov: Vec<Coverage> = t
                    .variants
                    .iter()
                    .map(|v| coverage(&v.sass, &v.ptx, &r.cc))
                    .collect();
                if cov.iter().any(|c| matches!(c, Coverage::Sass(_))) {
                    sass.push(t.torch.clone());
                } else if cov.iter().any(|c| matches!(c, Coverage::Ptx(_))) {
                    ptx_only.push(t.torch.clone());
                }
            }
            let min_driver = r
                .first_cuda
                .as_deref()
                .and_then(CudaVersion::parse)
                .and_then(|c| m.ga_driver(c, Os::Linux))
                .map(|(d, _)| d.to_string());
            ArchLine {
                cc: r.cc.clone(),
                arch: r.arch.clone(),
                gpus: m
                    .gpus
                    .iter()
                    .filter(|g| g.cc == r.cc)
                    .flat_map(|g| g.names.iter().cloned())
                    .collect(),
                first_cuda: r.first_cuda.clone(),
                min_driver,
                last_cuda_major: r.last_cuda_major,
                last_driver_branch: r.last_driver_branch,
                torch_sass: sass,
                torch_ptx_only: ptx_only,
                jax: jax_runs(
                    m.jax
                        .iter()
                        .filter(|j| {
                            j.min_cc
                                .as_deref()
                                .is_some_and(|min| cc_in(&r.cc, min, None))
                        })
                        .collect(),
                ),
                cudnn: m
                    .cudnn
                    .iter()
                    .filter(|c| cc_in(&r.cc, &c.min_cc, c.max_cc.as_deref()))
                    .map(|c| cudnn_range(&c.from, &c.to))
                    .collect(),
            }
        })
        .collect()
}

/// `matrix show --json`: the row counts, every framework and cuDNN row, and the two cross tables.
pub fn to_json(m: &Matrix) -> serde_json::Value {
    json!({
        "schema": MATRIX_SCHEMA,
        "data_version": m.data_version,
        "source": m.source,
        "rows": m.counts().iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "frameworks": {
            "torch": m.pytorch,
            "tensorflow": m.tensorflow,
            "jax": m.jax,
        },
        "cudnn": m.cudnn,
        "cuda": cuda_lines(m),
        "architectures": arch_lines(m),
    })
}

/// Consecutive items of `all` (in its order) that are in `some`, as "a–b" runs: "1.13–2.5, 2.8".
pub fn runs(all: &[String], some: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut start: Option<&String> = None;
    let mut last: Option<&String> = None;
    for x in all {
        if some.contains(x) {
            if start.is_none() {
                start = Some(x);
            }
            last = Some(x);
        } else if let (Some(a), Some(b)) = (start.take(), last.take()) {
            out.push(run(a, b));
        }
    }
    if let (Some(a), Some(b)) = (start, last) {
        out.push(run(a, b));
    }
    if out.is_empty() {
        "-".to_string()
    } else {
        out.join(", ")
    }
}

fn run(a: &str, b: &str) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}–{b}")
    }
}

fn or_dash(s: Option<String>) -> String {
    s.filter(|s| !s.is_empty()).unwrap_or_else(|| "-".into())
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(" ")
    }
}

/// Left-aligned columns separated by two spaces, each as wide as its widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(x) = w.get_mut(i) {
                *x = (*x).max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            s.push_str(c);
            if i + 1 < cells.len() {
                let pad = w.get(i).copied().unwrap_or(0) - c.chars().count() + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

fn frameworks(m: &Matrix) -> String {
    let variants: usize = m.pytorch.iter().map(|r| r.variants.len()).sum();
    let mut s = format!(
        "PyTorch: {} releases, {variants} CUDA wheels (* = the wheel PyPI serves)\n",
        m.pytorch.len()
    );
    let mut rows = Vec::new();
    for r in m.pytorch.iter().rev() {
        for (i, v) in r.variants.iter().enumerate() {
            let first = i == 0;
            rows.push(vec![
                if first {
                    r.torch.clone()
                } else {
                    String::new()
                },
                if first {
                    format!("{}–{}", r.python.min, r.python.max)
                } else {
                    String::new()
                },
                format!(
                    "{}{}",
                    v.tag,
                    if v.tag == r.pypi_default { "*" } else { "" }
                ),
                or_dash(v.cudnn.clone()),
                list(&v.sass),
                list(&v.ptx),
            ]);
        }
    }
    s.push_str(&table(
        &["torch", "python", "wheel", "cuDNN", "cubins", "PTX"],
        &rows,
    ));
    s.push_str(&format!("\nTensorFlow: {} releases\n", m.tensorflow.len()));
    let rows: Vec<Vec<String>> = m
        .tensorflow
        .iter()
        .rev()
        .map(|r| {
            vec![
                r.tf.clone(),
                format!("{}–{}", r.python.min, r.python.max),
                r.cuda.clone(),
                r.cudnn.clone(),
                if r.windows_gpu { "yes" } else { "no (WSL2)" }.into(),
                if r.pip_cuda { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    s.push_str(&table(
        &[
            "tensorflow",
            "python",
            "CUDA",
            "cuDNN",
            "Windows GPU",
            "CUDA wheels",
        ],
        &rows,
    ));
    s.push_str(&format!("\nJAX: {} ranges\n", m.jax.len()));
    let mut jax: Vec<_> = m.jax.iter().collect();
    jax.reverse();
    let rows: Vec<Vec<String>> = jax
        .iter()
        .map(|r| {
            vec![
                format!("{} to below {}", r.from, r.below),
                format!("cuda{}", r.cuda_major),
                r.built_with.clone(),
                format!("{}+", r.min_cuda),
                match &r.cudnn_below {
                    Some(b) => format!("{}+ below {b}", r.min_cudnn),
                    None => format!("{}+", r.min_cudnn),
                },
                r.min_driver.clone(),
                or_dash(r.min_cc.clone()),
            ]
        })
        .collect();
    s.push_str(&table(
        &[
            "jax",
            "plugin",
            "built with",
            "CUDA",
            "cuDNN",
            "driver",
            "compute",
        ],
        &rows,
    ));
    s
}

fn per_cuda(m: &Matrix) -> String {
    let torch: Vec<String> = m.pytorch.iter().map(|r| r.torch.clone()).collect();
    let tf: Vec<String> = m.tensorflow.iter().map(|r| r.tf.clone()).collect();
    let rows: Vec<Vec<String>> = cuda_lines(m)
        .into_iter()
        .rev()
        .map(|l| {
            vec![
                l.cuda,
                format!("{} / {}", or_dash(l.ga_linux), or_dash(l.ga_windows)),
                if l.branches.is_empty() {
                    "-".into()
                } else {
                    l.branches
                        .iter()
                        .map(|b| format!("R{b}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
                runs(&torch, &l.torch),
                runs(&tf, &l.tensorflow),
                if l.jax.is_empty() {
                    "-".into()
                } else {
                    l.jax.join(", ")
                },
                if l.cudnn.is_empty() {
                    "-".into()
                } else {
                    l.cudnn.join(", ")
                },
            ]
        })
        .collect();
    format!(
        "Per CUDA version (GA driver Linux / Windows; what is built for it)\n{}",
        table(
            &[
                "CUDA",
                "GA driver",
                "branch",
                "PyTorch",
                "TensorFlow",
                "JAX",
                "cuDNN"
            ],
            &rows
        )
    )
}

fn per_arch(m: &Matrix) -> String {
    let torch: Vec<String> = m.pytorch.iter().map(|r| r.torch.clone()).collect();
    let rows: Vec<Vec<String>> = arch_lines(m)
        .into_iter()
        .rev()
        .map(|l| {
            let gpus = match l.gpus.len() {
                0 => "-".to_string(),
                n if n <= 3 => l.gpus.join(", "),
                n => format!("{} +{}", l.gpus[..3].join(", "), n - 3),
            };
            vec![
                l.cc,
                l.arch,
                gpus,
                match (&l.first_cuda, &l.min_driver) {
                    (Some(c), Some(d)) => format!("{c} ({d})"),
                    (Some(c), None) => c.clone(),
                    _ => "-".into(),
                },
                l.last_cuda_major
                    .map(|x| format!("{x}.x"))
                    .unwrap_or_else(|| "-".into()),
                l.last_driver_branch
                    .map(|x| format!("R{x}"))
                    .unwrap_or_else(|| "-".into()),
                runs(&torch, &l.torch_sass),
                runs(&torch, &l.torch_ptx_only),
            ]
        })
        .collect();
    format!(
        "Per GPU architecture (first CUDA with its GA driver; PyTorch releases whose wheels run on it)\n{}",
        table(
            &[
                "compute",
                "arch",
                "GPUs",
                "first CUDA",
                "last CUDA",
                "last driver",
                "PyTorch cubins",
                "PyTorch PTX only"
            ],
            &rows
        )
    )
}

/// The human tables, all of them or one view.
pub fn render(m: &Matrix, view: Option<View>) -> String {
    let mut s = format!(
        "gpudoctor compatibility matrix ({MATRIX_SCHEMA}), data version {}, from {}\n",
        m.data_version, m.source
    );
    s.push_str(&format!(
        "rows: {}\n",
        m.counts()
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let want = |v: View| view.is_none_or(|x| x == v);
    if want(View::Framework) {
        s.push('\n');
        s.push_str(&frameworks(m));
    }
    if want(View::Cuda) {
        s.push('\n');
        s.push_str(&per_cuda(m));
    }
    if want(View::Arch) {
        s.push('\n');
        s.push_str(&per_arch(m));
    }
    s
}

#[cfg(test)]
#[path = "matrix_show_tests.rs"]
mod tests;
