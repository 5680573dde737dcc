//! The compatibility engine the compat rules and `recommend` share: what the driver supports,
//! which framework builds each environment holds (with the CUDA they were built for, their
//! compiled architectures and the cuDNN they expect), and whether a driver runs code built with a
//! given CUDA (minor-version compatibility, with its PTX-JIT limit). Pure functions of the
//! snapshot and the matrix.

use crate::fixes::PyInstall;
use crate::matrix::{coverage, Coverage, Matrix, Os, Requirement, TorchRow, TorchVariant};
use crate::snapshot::{Gpu, Probed, PythonEnv, Snapshot};
use crate::version::{CudaVersion, DriverVersion, Pep440};

/// What is known of the driver.
#[derive(Debug, Clone, Copy)]
pub struct DriverFacts {
    pub version: Option<DriverVersion>,
    /// The CUDA version it supports: from NVML/libcuda, else from its branch in the matrix.
    pub cuda: Option<CudaVersion>,
    /// Which column of driver minimums applies (WSL uses the Windows driver).
    pub os: Os,
}

impl DriverFacts {
    pub fn of(snap: &Snapshot, m: &Matrix) -> DriverFacts {
        let d = &snap.driver;
        let version = d
            .kernel_version()
            .map(str::to_string)
            .or_else(|| d.nvml.get().and_then(|n| n.driver_version.clone()))
            .or_else(|| d.libcuda.get().and_then(|l| l.file_version.clone()))
            .and_then(|v| DriverVersion::parse(&v));
        let api = d
            .nvml
            .get()
            .and_then(|n| n.cuda_driver_version)
            .or_else(|| d.libcuda.get().and_then(|l| l.cuda_driver_version))
            .and_then(CudaVersion::from_api);
        let cuda = api.or_else(|| version.as_ref().and_then(|v| m.driver_cuda(v)));
        let os = match snap.host.get().map(|h| h.os.as_str()) {
            Some("windows") | Some("wsl") => Os::Windows,
            _ => Os::Linux,
        };
        DriverFacts { version, cuda, os }
    }

    pub fn known(&self) -> bool {
        self.version.is_some() || self.cuda.is_some()
    }

    /// "driver 535.104.05 (CUDA 12.2)" or what is known of it.
    pub fn describe(&self) -> String {
        match (&self.version, &self.cuda) {
            (Some(v), Some(c)) => format!("driver {v} (supports CUDA {c})"),
            (Some(v), None) => format!("driver {v}"),
            (None, Some(c)) => format!("a driver that supports CUDA {c}"),
            (None, None) => "an unknown driver".to_string(),
        }
    }
}

/// Whether a driver runs code built with some CUDA.
#[derive(Debug, Clone, PartialEq)]
pub enum Runs {
    Yes,
    /// No: the requirement it misses (None when the matrix has no minimum for this OS).
    TooOld(Option<Requirement>),
    Unknown,
}

/// Does this driver run code built with CUDA `need`? Backward compatibility (driver CUDA ≥
/// need), else minor-version compatibility for 11.x and later within the same major (driver
/// at or above the major's minimum), except for code that JIT-compiles PTX, which needs a driver
/// from the toolkit's own minor release (reference/compat-facts.md §1c).
pub fn driver_runs(m: &Matrix, d: &DriverFacts, need: CudaVersion, ptx_jit: bool) -> Runs {
    let Some(have) = d.cuda else {
        return Runs::Unknown;
    };
    if have >= need {
        return Runs::Yes;
    }
    if !ptx_jit && need.major >= 11 && have.major == need.major {
        return match (d.version, m.mvc_min(need.major, d.os)) {
            (Some(v), Some((min, _))) if v < min => Runs::TooOld(m.min_driver(need, d.os, false)),
            _ => Runs::Yes,
        };
    }
    Runs::TooOld(m.min_driver(need, d.os, ptx_jit))
}

/// Which framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    Torch,
    Tensorflow,
    Jax,
}

/// A GPU build of a framework found in (or assumed for) an environment.
#[derive(Debug, Clone)]
pub struct Build<'a> {
    pub framework: Framework,
    pub env: &'a PythonEnv,
    /// "torch 2.7.1+cu126", "tensorflow 2.16.1", "jax 0.4.30 (CUDA 12 plugin)".
    pub label: String,
    pub version: String,
    /// The CUDA it was built with.
    pub cuda: Option<CudaVersion>,
    /// The oldest CUDA runtime it accepts (JAX); else `cuda`.
    pub min_runtime: Option<CudaVersion>,
    /// Compiled architectures and PTX, when known.
    pub sass: Vec<String>,
    pub ptx: Vec<String>,
    /// Where the arch list came from ("the wheel's build list", "torch.cuda.get_arch_list()").
    pub arch_from: Option<&'static str>,
    pub min_cc: Option<String>,
    /// The cuDNN it expects: torch's pinned "9.5.1.17", TensorFlow's "8.9", JAX's minimum.
    pub cudnn: Option<String>,
    /// JAX: cuDNN must be below this.
    pub cudnn_below: Option<String>,
    /// A driver minimum the project itself states (JAX).
    pub min_driver: Option<String>,
    pub source: Option<String>,
    /// The matrix row and variant of a torch build.
    pub torch_row: Option<&'a TorchRow>,
    pub torch_variant: Option<&'a TorchVariant>,
}

/// The GPU framework builds of every environment (CPU-only and ROCm builds are not listed).
pub fn builds<'a>(snap: &'a Snapshot, m: &'a Matrix) -> Vec<Build<'a>> {
    let mut out = Vec::new();
    for env in snap.python_envs() {
        if let Some(t) = env
            .torch
            .as_ref()
            .filter(|t| !t.is_cpu_only() && t.hip.is_none())
        {
            out.push(torch_build(m, env, t));
        }
        if let Some(tf) = env.tensorflow.as_ref() {
            out.extend(tensorflow_build(snap, m, env, tf));
        }
        if let Some(jax) = env.package("jax") {
            out.extend(jax_build(snap, m, env, jax));
        }
    }
    out
}

/// A CUDA build of PyTorch: its CUDA, compiled architectures (what the GPU said under --deep,
/// else the wheel's list in the matrix) and cuDNN.
fn torch_build<'a>(
    m: &'a Matrix,
    env: &'a PythonEnv,
    t: &crate::snapshot::TorchBuild,
) -> Build<'a> {
    let row = m.torch(&t.version);
    let pep = Pep440::parse(&t.version);
    let tag = pep
        .as_ref()
        .and_then(|p| p.local_cuda())
        .map(|c| format!("cu{}{}", c.major, c.minor))
        .or_else(|| row.map(|r| r.pypi_default.clone()));
    let variant = row.zip(tag.as_deref()).and_then(|(r, tag)| r.variant(tag));
    let pypi = from_pypi(env, t, row);
    let cuda = t
        .cuda
        .as_deref()
        .and_then(CudaVersion::parse)
        .or_else(|| variant.and_then(|v| CudaVersion::parse(&v.cuda)));
    let (mut sass, mut ptx, mut arch_from) = (Vec::new(), Vec::new(), None);
    if let Some(list) = deep_arch_list(env) {
        for a in list {
            if let Some((maj, min)) = crate::matrix::split_cc(&a) {
                let cc = format!("{maj}.{min}");
                if a.starts_with("compute_") {
                    ptx.push(cc);
                } else {
                    sass.push(cc);
                }
            }
        }
        arch_from = Some("torch.cuda.get_arch_list() in this environment");
    } else if let Some(v) = variant {
        (sass, ptx, _) = v.wheel(pypi);
        if !sass.is_empty() || !ptx.is_empty() {
            arch_from = Some(if pypi {
                "the PyPI wheel's compiled architecture list"
            } else {
                "the wheel's compiled architecture list"
            });
        }
    }
    Build {
        framework: Framework::Torch,
        env,
        label: format!("torch {}", t.version),
        version: t.version.clone(),
        cuda,
        min_runtime: cuda,
        sass,
        ptx,
        arch_from,
        min_cc: None,
        cudnn: variant.and_then(|v| v.wheel(pypi).2),
        cudnn_below: None,
        min_driver: None,
        source: row.map(|r| r.source.clone()),
        torch_row: row,
        torch_variant: variant,
    }
}

/// A CUDA build of TensorFlow (not the CPU-only or ROCm ones): its CUDA, compiled architectures
/// (build_info, else the PyPI wheel's) and cuDNN.
fn tensorflow_build<'a>(
    snap: &Snapshot,
    m: &'a Matrix,
    env: &'a PythonEnv,
    tf: &crate::snapshot::TensorflowBuild,
) -> Option<Build<'a>> {
    let row = m.tensorflow(&tf.version);
    let cpu = tf.is_cpu_only()
        || tf.package.ends_with("-cpu")
        || row.is_some_and(|r| tf_cpu_only(snap, tf, r));
    if cpu || tf.is_rocm_build == Some(true) {
        return None;
    }
    let cuda = tf
        .cuda_version
        .as_deref()
        .and_then(CudaVersion::parse)
        .or_else(|| row.and_then(|r| CudaVersion::parse(&r.cuda)));
    let (mut sass, mut ptx) = (Vec::new(), Vec::new());
    for a in &tf.cuda_compute_capabilities {
        if let Some((maj, min)) = crate::matrix::split_cc(a) {
            let cc = format!("{maj}.{min}");
            if a.starts_with("compute_") {
                ptx.push(cc);
            } else {
                sass.push(cc);
            }
        }
    }
    let mut arch_from = (!sass.is_empty() || !ptx.is_empty())
        .then_some("TensorFlow's build_info (cuda_compute_capabilities)");
    if let Some(r) = row.filter(|r| arch_from.is_none() && !r.sass.is_empty()) {
        sass = r.sass.clone();
        ptx = r.ptx.clone();
        arch_from = Some("the build_info of TensorFlow's PyPI wheel");
    }
    Some(Build {
        framework: Framework::Tensorflow,
        env,
        label: format!("{} {}", tf.package, tf.version),
        version: tf.version.clone(),
        cuda,
        min_runtime: cuda,
        sass,
        ptx,
        arch_from,
        min_cc: None,
        cudnn: row
            .map(|r| r.cudnn.clone())
            .or_else(|| tf.cudnn_version.clone()),
        cudnn_below: None,
        min_driver: None,
        source: row.map(|r| r.source.clone()),
        torch_row: None,
        torch_variant: None,
    })
}

/// A JAX with a CUDA plugin (none on native Windows, where it runs on the CPU).
fn jax_build<'a>(
    snap: &Snapshot,
    m: &'a Matrix,
    env: &'a PythonEnv,
    jax: &crate::snapshot::Package,
) -> Option<Build<'a>> {
    let major = jax_cuda_major(env)
        // On native Windows the CUDA build runs on the CPU: `framework.cpu-only-build`
        // says so, and no CUDA rule judges it.
        .filter(|&major| !jax_windows_cpu_only(snap, m, &jax.version, major))?;
    let row = m.jax(&jax.version, major);
    Some(Build {
        framework: Framework::Jax,
        env,
        label: format!("jax {} (CUDA {major} plugin)", jax.version),
        version: jax.version.clone(),
        cuda: row.and_then(|r| CudaVersion::parse(&r.built_with)),
        min_runtime: row
            .and_then(|r| CudaVersion::parse(&r.min_cuda))
            .or(Some(CudaVersion { major, minor: 0 })),
        sass: Vec::new(),
        ptx: Vec::new(),
        arch_from: None,
        min_cc: row.and_then(|r| r.min_cc.clone()),
        cudnn: row.map(|r| r.min_cudnn.clone()),
        cudnn_below: row.and_then(|r| r.cudnn_below.clone()),
        min_driver: row.map(|r| r.min_driver.clone()),
        source: row.map(|r| r.source.clone()),
        torch_row: None,
        torch_variant: None,
    })
}

/// Whether a torch install is PyPI's wheel rather than the PyTorch index's: PyPI's dist-info
/// drops the local tag that `torch/version.py` keeps ("2.7.1" beside "2.7.1+cu126"); a version
/// named without a tag, or (assumed) with the tag of PyPI's default variant, is what
/// `pip install torch==X` installs.
fn from_pypi(env: &PythonEnv, t: &crate::snapshot::TorchBuild, row: Option<&TorchRow>) -> bool {
    let Some((_, tag)) = t.version.split_once('+') else {
        return true;
    };
    if tag.contains("pypi") {
        return true;
    }
    if env.kind == "assumed" {
        let tag = tag.split('.').next().unwrap_or(tag);
        return row.is_some_and(|r| r.pypi_default == tag);
    }
    env.package("torch")
        .is_some_and(|p| !p.version.contains('+'))
}

/// The CUDA major of an environment's JAX build: its jax-cudaNN-plugin, or a monolithic
/// `jaxlib+cudaNN...`; None for a CPU-only JAX.
pub fn jax_cuda_major(env: &PythonEnv) -> Option<u32> {
    env.packages
        .iter()
        .find_map(|p| {
            p.name
                .strip_prefix("jax-cuda")
                .and_then(|r| r.strip_suffix("-plugin"))
                .and_then(|n| n.parse::<u32>().ok())
        })
        .or_else(|| {
            env.package("jaxlib").and_then(|j| {
                let local = j.version.split('+').nth(1)?;
                local.strip_prefix("cuda")?.get(..2)?.parse().ok()
            })
        })
}

/// A JAX CUDA build on native Windows, which the matrix says has no GPU support there (no JAX
/// release has; a version the matrix lacks goes by the rows of its CUDA major).
pub fn jax_windows_cpu_only(snap: &Snapshot, m: &Matrix, version: &str, major: u32) -> bool {
    let windows = snap.host.get().is_some_and(|h| h.os == "windows");
    windows
        && match m.jax(version, major) {
            Some(r) => !r.windows_gpu,
            None => !m.jax.iter().any(|r| r.cuda_major == major && r.windows_gpu),
        }
}

/// A TensorFlow install that cannot use the GPU whatever its build_info says was not read:
/// native Windows after 2.10, and the `tensorflow` package of releases whose GPU build is a
/// separate package (`tensorflow-gpu` before 2.1) when build_info is not known.
pub fn tf_cpu_only(
    snap: &Snapshot,
    tf: &crate::snapshot::TensorflowBuild,
    row: &crate::matrix::TfRow,
) -> bool {
    let windows = snap.host.get().is_some_and(|h| h.os == "windows");
    (windows && !row.windows_gpu)
        || (tf.is_cuda_build.is_none() && tf.package == "tensorflow" && row.gpu_package.is_some())
}

/// `torch.cuda.get_arch_list()` (or the arch flags) from the `--deep` probe, when it ran.
fn deep_arch_list(env: &PythonEnv) -> Option<Vec<String>> {
    let Some(Probed::Found { value }) = &env.deep else {
        return None;
    };
    let list: Vec<String> = value
        .pointer("/torch/arch_list")?
        .as_array()?
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    (!list.is_empty()).then_some(list)
}

/// The GPUs with a known compute capability: from NVML, or the GPU table for the model.
pub fn gpu_ccs<'a>(snap: &'a Snapshot, m: &Matrix) -> Vec<(&'a Gpu, String)> {
    snap.gpu_list()
        .iter()
        .filter_map(|g| {
            let cc = g
                .compute_capability
                .get()
                .cloned()
                .or_else(|| g.name.get().and_then(|n| m.gpu(n)).map(|r| r.cc.clone()))?;
            Some((g, cc))
        })
        .collect()
}

/// True when a build reaches this GPU only through PTX (so the driver must JIT it).
pub fn needs_ptx_jit(b: &Build, cc: &str) -> bool {
    b.arch_from.is_some() && matches!(coverage(&b.sass, &b.ptx, cc), Coverage::Ptx(_))
}

/// A GPU's name for findings: "GPU 0 (NVIDIA GeForce GTX 1080, compute 6.1)".
pub fn gpu_label(g: &Gpu, cc: &str) -> String {
    match g.name.get() {
        Some(n) => format!("GPU {} ({n}, compute {cc})", g.index),
        None => format!("GPU {} (compute {cc})", g.index),
    }
}

/// A PyTorch build that works: the newest release and CUDA variant whose CUDA this driver runs
/// and whose architectures cover every GPU. None when nothing in the matrix fits.
pub fn best_torch<'a>(
    m: &'a Matrix,
    d: &DriverFacts,
    ccs: &[String],
) -> Option<(&'a TorchRow, &'a TorchVariant)> {
    for row in m.pytorch.iter().rev() {
        let mut variants: Vec<&TorchVariant> = row.variants.iter().collect();
        variants.sort_by_key(|v| std::cmp::Reverse(CudaVersion::parse(&v.cuda)));
        for v in variants {
            let Some(cuda) = CudaVersion::parse(&v.cuda) else {
                continue;
            };
            let covered = ccs
                .iter()
                .all(|cc| !matches!(coverage(&v.sass, &v.ptx, cc), Coverage::None));
            if !covered {
                continue;
            }
            let jit = ccs
                .iter()
                .any(|cc| matches!(coverage(&v.sass, &v.ptx, cc), Coverage::Ptx(_)));
            if driver_runs(m, d, cuda, jit) == Runs::Yes {
                return Some((row, v));
            }
        }
    }
    None
}

/// The command that installs a PyTorch variant into an environment (its tool: pip, uv, conda…;
/// `crate::fixes`), or into `python` when none is named.
pub fn torch_install(
    row: &TorchRow,
    v: &TorchVariant,
    env: Option<&PythonEnv>,
    windows: bool,
) -> String {
    let req = format!("torch=={}.*", row.torch);
    crate::fixes::python_install_command(
        env,
        windows,
        &PyInstall::new(&[req.as_str()])
            .index(format!("https://download.pytorch.org/whl/{}", v.tag)),
    )
}

/// A library a build could load: its version and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Reachable {
    pub version: String,
    pub place: String,
}

fn in_env(path: &str, env: &PythonEnv) -> bool {
    env.site_packages
        .iter()
        .any(|sp| path.starts_with(sp.as_str()))
}

/// True when the environment is a real one whose site-packages were read (not `--assume`d and
/// not conda, whose CUDA libraries live in the prefix's lib/).
pub fn inspectable(env: &PythonEnv) -> bool {
    !env.site_packages.is_empty() && env.kind != "assumed" && env.kind != "conda"
}

/// The cuDNN versions a build in `env` can load: the env's nvidia-cudnn-cuXX wheel, libcudnn
/// files inside the env, and those the loader finds by name.
pub fn reachable_cudnn(snap: &Snapshot, env: &PythonEnv) -> Vec<Reachable> {
    let mut out: Vec<Reachable> = env
        .packages
        .iter()
        .filter(|p| p.name.starts_with("nvidia-cudnn"))
        .map(|p| Reachable {
            version: p.version.clone(),
            place: format!("the {} wheel in {}", p.name, env.prefix),
        })
        .collect();
    for c in snap.cudnn_list() {
        if c.on_search_path || in_env(&c.path, env) {
            if let Some(v) = c.version_string() {
                if !out
                    .iter()
                    .any(|r| r.version.split('.').take(2).eq(v.split('.').take(2)))
                {
                    out.push(Reachable {
                        version: v,
                        place: c.path.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The CUDA runtimes a build in `env` can load: inside the env (pip wheels, torch's bundled
/// copy) and on the loader's search path.
pub fn reachable_runtimes(snap: &Snapshot, env: &PythonEnv) -> Vec<(CudaVersion, String)> {
    snap.runtime_list()
        .iter()
        .filter(|r| r.on_search_path || in_env(&r.path, env))
        .filter_map(|r| {
            let v = r
                .api_version
                .get()
                .and_then(|v| CudaVersion::from_api(*v))
                .or_else(|| r.full_version.as_deref().and_then(CudaVersion::parse))?;
            Some((v, r.path.clone()))
        })
        .collect()
}

/// The install command that brings a build's CUDA libraries, in the environment's own tool.
pub fn libraries_fix(b: &Build, m: &Matrix, windows: bool) -> String {
    let env = Some(b.env);
    let install = |req: &PyInstall| crate::fixes::python_install_command(env, windows, req);
    match b.framework {
        Framework::Torch => match (b.torch_row, b.torch_variant) {
            (Some(r), Some(v)) => {
                let req = format!("torch=={}", b.version.split('+').next().unwrap_or(&r.torch));
                install(
                    &PyInstall::new(&[req.as_str()])
                        .flag("--force-reinstall")
                        .index(format!("https://download.pytorch.org/whl/{}", v.tag)),
                )
            }
            _ => install(&PyInstall::new(&["torch"]).flag("--force-reinstall")),
        },
        Framework::Tensorflow => match m.tensorflow(&b.version) {
            Some(r) if !r.pip_cuda => format!(
                "# install CUDA {} and cuDNN {} (TensorFlow {} predates tensorflow[and-cuda])",
                r.cuda, r.cudnn, r.tf
            ),
            _ => {
                let req = format!("tensorflow[and-cuda]=={}", b.version);
                install(&PyInstall::new(&[req.as_str()]))
            }
        },
        Framework::Jax => {
            let req = format!(
                "jax[cuda{}]=={}",
                b.min_runtime.map(|c| c.major).unwrap_or(12),
                b.version
            );
            install(&PyInstall::new(&[req.as_str()]).flag("-U"))
        }
    }
}

#[cfg(test)]
#[path = "compat_tests.rs"]
mod tests;
