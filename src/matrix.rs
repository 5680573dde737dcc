//! The compatibility matrix: versioned YAML in `compat-matrix/`, embedded at build time, every
//! row with its `source:`. `--matrix FILE` (a file or a directory of them) or `GPUDOCTOR_MATRIX`
//! replaces it; `matrix update` keeps a downloaded copy in the user's cache directory.
//!
//! Rows are parsed into typed structs (unknown fields denied), each remembering its file, line
//! and column, then validated for meaning (sorted, no overlapping ranges, every row sourced,
//! every referenced architecture and CUDA version defined) so that a wrong row is caught as an
//! error with its place, not turned into a wrong diagnosis.

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::version::{cmp_dotted, dotted, in_range, CudaVersion, DriverVersion, Pep440};

pub const MATRIX_SCHEMA: &str = "gpudoctor.matrix/1";

/// The embedded files, in load order.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "compat-matrix/cuda.yaml",
        include_str!("../compat-matrix/cuda.yaml"),
    ),
    (
        "compat-matrix/gpus.yaml",
        include_str!("../compat-matrix/gpus.yaml"),
    ),
    (
        "compat-matrix/cudnn.yaml",
        include_str!("../compat-matrix/cudnn.yaml"),
    ),
    (
        "compat-matrix/pytorch.yaml",
        include_str!("../compat-matrix/pytorch.yaml"),
    ),
    (
        "compat-matrix/tensorflow.yaml",
        include_str!("../compat-matrix/tensorflow.yaml"),
    ),
    (
        "compat-matrix/jax.yaml",
        include_str!("../compat-matrix/jax.yaml"),
    ),
];

/// Where a row was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct At {
    pub file: String,
    pub line: u64,
    pub column: u64,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Which operating system a driver minimum is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Windows,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    schema: String,
    data_version: String,
    // Each table is None when the file does not name it (`matrix validate` fills those from the
    // built-in matrix) and Some, possibly empty, when it does.
    #[serde(default)]
    gpus: Option<Vec<Spanned<GpuRow>>>,
    #[serde(default)]
    compute_capabilities: Option<Vec<Spanned<CcRow>>>,
    #[serde(default)]
    cuda_toolkits: Option<Vec<Spanned<ToolkitRow>>>,
    #[serde(default)]
    minor_version_compat: Option<Vec<Spanned<MvcRow>>>,
    #[serde(default)]
    driver_branches: Option<Vec<Spanned<BranchRow>>>,
    #[serde(default)]
    forward_compat: Option<Vec<Spanned<ForwardCompatRow>>>,
    #[serde(default)]
    cudnn: Option<Vec<Spanned<CudnnRow>>>,
    #[serde(default)]
    pytorch: Option<Vec<Spanned<TorchRow>>>,
    #[serde(default)]
    tensorflow: Option<Vec<Spanned<TfRow>>>,
    #[serde(default)]
    jax: Option<Vec<Spanned<JaxRow>>>,
}

/// The tables of a matrix file, as its YAML keys name them.
pub const TABLES: &[&str] = &[
    "gpus",
    "compute_capabilities",
    "cuda_toolkits",
    "minor_version_compat",
    "driver_branches",
    "forward_compat",
    "cudnn",
    "pytorch",
    "tensorflow",
    "jax",
];

impl MatrixFile {
    /// The tables this file names.
    fn tables(&self) -> Vec<&'static str> {
        let present = [
            self.gpus.is_some(),
            self.compute_capabilities.is_some(),
            self.cuda_toolkits.is_some(),
            self.minor_version_compat.is_some(),
            self.driver_branches.is_some(),
            self.forward_compat.is_some(),
            self.cudnn.is_some(),
            self.pytorch.is_some(),
            self.tensorflow.is_some(),
            self.jax.is_some(),
        ];
        TABLES
            .iter()
            .zip(present)
            .filter(|(_, p)| *p)
            .map(|(t, _)| *t)
            .collect()
    }
}

trait Located {
    fn set_at(&mut self, at: At);
    fn at(&self) -> &At;
    fn source(&self) -> &str;
}

macro_rules! located {
    ($($t:ty),*) => {$(
        impl Located for $t {
            fn set_at(&mut self, at: At) { self.at = at; }
            fn at(&self) -> &At { &self.at }
            fn source(&self) -> &str { &self.source }
        }
    )*};
}

/// GPU model names → compute capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRow {
    pub cc: String,
    pub arch: String,
    pub names: Vec<String>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// A compute capability: architecture, first toolkit, last toolkit major, last driver branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcRow {
    pub cc: String,
    pub arch: String,
    #[serde(default)]
    pub first_cuda: Option<String>,
    #[serde(default)]
    pub last_cuda_major: Option<u32>,
    #[serde(default)]
    pub last_driver_branch: Option<u32>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// A CUDA toolkit release and the driver packaged with it (release notes, Table 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitRow {
    pub cuda: String,
    pub release: String,
    #[serde(default)]
    pub linux: Option<String>,
    #[serde(default)]
    pub windows: Option<String>,
    /// The GA release of its minor version.
    #[serde(default)]
    pub ga: bool,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// Minor-version compatibility of a CUDA major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MvcRow {
    pub major: u32,
    pub linux: String,
    #[serde(default)]
    pub windows: Option<String>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// The CUDA version a driver branch supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchRow {
    pub branch: u32,
    pub cuda: String,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// A cuda-compat package (forward compatibility) and the kernel branches it runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardCompatRow {
    pub cuda: String,
    pub branches: Vec<u32>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaRange {
    pub from: String,
    pub to: String,
    /// A driver minimum for this range beyond minor-version compatibility.
    #[serde(default)]
    pub linux: Option<String>,
    #[serde(default)]
    pub windows: Option<String>,
}

/// A cuDNN release range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnRow {
    pub from: String,
    pub to: String,
    pub cuda: Vec<CudaRange>,
    pub min_cc: String,
    #[serde(default)]
    pub max_cc: Option<String>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyRange {
    pub min: String,
    pub max: String,
}

/// A CUDA wheel variant of a PyTorch release as the PyTorch index (download.pytorch.org) ships
/// it. An empty `sass` and `ptx` means its architecture list is not known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchVariant {
    pub tag: String,
    pub cuda: String,
    /// The cuDNN it loads from a pip nvidia-cudnn wheel (None when cuDNN is linked in statically,
    /// as in PyTorch before 1.13, or not known).
    #[serde(default)]
    pub cudnn: Option<String>,
    pub sass: Vec<String>,
    #[serde(default)]
    pub ptx: Vec<String>,
    /// Where PyPI's wheel of this variant differs from the PyTorch index's (only on the
    /// `pypi_default` variant): PyPI's size limit trimmed architectures and PTX.
    #[serde(default)]
    pub pypi: Option<PypiWheel>,
}

/// What PyPI's wheel of a variant has where it differs from the PyTorch index's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PypiWheel {
    #[serde(default)]
    pub sass: Option<Vec<String>>,
    #[serde(default)]
    pub ptx: Option<Vec<String>>,
    #[serde(default)]
    pub cudnn: Option<String>,
}

impl TorchVariant {
    /// The architecture lists and cuDNN of PyPI's wheel (`pypi`) or of the PyTorch index's.
    pub fn wheel(&self, pypi: bool) -> (Vec<String>, Vec<String>, Option<String>) {
        let p = self.pypi.as_ref().filter(|_| pypi);
        (
            p.and_then(|p| p.sass.clone())
                .unwrap_or_else(|| self.sass.clone()),
            p.and_then(|p| p.ptx.clone())
                .unwrap_or_else(|| self.ptx.clone()),
            p.and_then(|p| p.cudnn.clone())
                .or_else(|| self.cudnn.clone()),
        )
    }
}

/// A PyTorch release (major.minor) and its CUDA wheel variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchRow {
    pub torch: String,
    pub python: PyRange,
    pub pypi_default: String,
    pub source: String,
    pub variants: Vec<TorchVariant>,
    #[serde(skip)]
    pub at: At,
}

impl TorchRow {
    pub fn variant(&self, tag: &str) -> Option<&TorchVariant> {
        self.variants.iter().find(|v| v.tag == tag)
    }
}

/// A TensorFlow release (major.minor): its tested Linux GPU build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfRow {
    pub tf: String,
    pub python: PyRange,
    pub cuda: String,
    pub cudnn: String,
    pub windows_gpu: bool,
    pub pip_cuda: bool,
    /// The package that has GPU support when `tensorflow` itself is CPU-only ("tensorflow-gpu"
    /// before 2.1).
    #[serde(default)]
    pub gpu_package: Option<String>,
    /// CUDA libraries it loads by exact soname, each with the CUDA versions that ship it.
    #[serde(default)]
    pub libs: Vec<TfLib>,
    /// The compute capabilities its PyPI Linux wheel has cubins and PTX for (build_info's
    /// cuda_compute_capabilities); empty when not known.
    #[serde(default)]
    pub sass: Vec<String>,
    #[serde(default)]
    pub ptx: Vec<String>,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

/// A CUDA library TensorFlow opens by name (dlopen on Linux, LoadLibrary on Windows) and the
/// CUDA toolkits [from, to] whose copy has that name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfLib {
    pub lib: String,
    #[serde(default)]
    pub dll: Option<String>,
    pub from: String,
    pub to: String,
}

/// A range of JAX releases with one CUDA major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxRow {
    pub from: String,
    pub below: String,
    pub cuda_major: u32,
    pub built_with: String,
    pub min_cuda: String,
    pub min_cudnn: String,
    #[serde(default)]
    pub cudnn_below: Option<String>,
    pub min_driver: String,
    #[serde(default)]
    pub min_cc: Option<String>,
    /// Whether this CUDA build runs on native Windows (no JAX release's does: WSL2 only).
    /// Optional, false when absent, so a matrix written before the field (an installed
    /// `matrix update`) still loads, and says what is true of every JAX release.
    #[serde(default)]
    pub windows_gpu: bool,
    pub source: String,
    #[serde(skip)]
    pub at: At,
}

located!(
    GpuRow,
    CcRow,
    ToolkitRow,
    MvcRow,
    BranchRow,
    ForwardCompatRow,
    CudnnRow,
    TorchRow,
    TfRow,
    JaxRow
);

/// The loaded matrix.
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    pub data_version: String,
    /// "embedded", or the file or directory it came from.
    pub source: String,
    pub gpus: Vec<GpuRow>,
    pub ccs: Vec<CcRow>,
    pub toolkits: Vec<ToolkitRow>,
    pub mvc: Vec<MvcRow>,
    pub branches: Vec<BranchRow>,
    pub forward_compat: Vec<ForwardCompatRow>,
    pub cudnn: Vec<CudnnRow>,
    pub pytorch: Vec<TorchRow>,
    pub tensorflow: Vec<TfRow>,
    pub jax: Vec<JaxRow>,
}

/// Why a matrix could not be used (exit 2): the place and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for MatrixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Whether `d` is a driver version (a branch like "525" or a full "525.60.13").
fn driver_ok(d: &str) -> bool {
    DriverVersion::parse_min(d).is_some()
}

fn err_at(at: &At, message: String) -> MatrixError {
    MatrixError {
        path: at.to_string(),
        message,
    }
}

fn locate<T: Located>(rows: Option<Vec<Spanned<T>>>, file: &str) -> Vec<T> {
    rows.unwrap_or_default()
        .into_iter()
        .map(|s| {
            let mut v = s.value;
            v.set_at(At {
                file: file.to_string(),
                line: s.referenced.line(),
                column: s.referenced.column(),
            });
            v
        })
        .collect()
}

/// Parses one matrix file and checks its header.
fn parse_file(name: &str, text: &str) -> Result<MatrixFile, MatrixError> {
    let file: MatrixFile = serde_saphyr::from_str(text).map_err(|e| {
        let (path, message) = crate::userfile::yaml_error(name, text, &e);
        MatrixError { path, message }
    })?;
    if file.schema != MATRIX_SCHEMA {
        return Err(MatrixError {
            path: name.to_string(),
            message: format!(
                "schema is {:?}; this gpudoctor reads {MATRIX_SCHEMA:?}",
                file.schema
            ),
        });
    }
    if dotted(&file.data_version.replace('-', ".")).is_none() {
        return Err(MatrixError {
            path: name.to_string(),
            message: format!(
                "data_version {:?} is not a date like \"2026-11-21\"",
                file.data_version
            ),
        });
    }
    Ok(file)
}

impl Matrix {
    /// The matrix built into the binary.
    pub fn embedded() -> Result<Matrix, Vec<MatrixError>> {
        Matrix::from_texts(
            EMBEDDED.iter().map(|(n, t)| (n.to_string(), t.to_string())),
            "embedded",
        )
    }

    /// A matrix from a file, or from every .yaml file of a directory.
    pub fn from_path(path: &Path) -> Result<Matrix, Vec<MatrixError>> {
        let shown = path.display().to_string();
        let mut files: Vec<PathBuf> = Vec::new();
        if path.is_dir() {
            let rd = std::fs::read_dir(path).map_err(|e| {
                vec![MatrixError {
                    path: shown.clone(),
                    message: format!("cannot read the directory: {e}"),
                }]
            })?;
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml")),
            );
            files.sort();
        } else {
            files.push(path.to_path_buf());
        }
        let mut texts = Vec::new();
        for f in files {
            let text = crate::userfile::read(&f, "matrix file").map_err(|e| {
                vec![MatrixError {
                    path: f.display().to_string(),
                    message: e,
                }]
            })?;
            texts.push((f.display().to_string(), text));
        }
        Matrix::from_texts(texts.into_iter(), &shown)
    }

    /// Parses and validates named YAML texts.
    pub fn from_texts(
        texts: impl Iterator<Item = (String, String)>,
        source: &str,
    ) -> Result<Matrix, Vec<MatrixError>> {
        let mut m = Matrix {
            source: source.to_string(),
            ..Default::default()
        };
        for (name, text) in texts {
            m.merge(&name, &text).map_err(|e| vec![e])?;
        }
        let errors = m.validate();
        if errors.is_empty() {
            Ok(m)
        } else {
            Err(errors)
        }
    }

    fn merge(&mut self, name: &str, text: &str) -> Result<(), MatrixError> {
        let file = parse_file(name, text)?;
        self.merge_file(name, file, &[]);
        Ok(())
    }

    /// Adds a file's rows, leaving out the tables named in `skip`.
    fn merge_file(&mut self, name: &str, file: MatrixFile, skip: &[&str]) {
        if file.data_version > self.data_version {
            self.data_version = file.data_version;
        }
        let keep = |t: &str| !skip.contains(&t);
        if keep("gpus") {
            self.gpus.extend(locate(file.gpus, name));
        }
        if keep("compute_capabilities") {
            self.ccs.extend(locate(file.compute_capabilities, name));
        }
        if keep("cuda_toolkits") {
            self.toolkits.extend(locate(file.cuda_toolkits, name));
        }
        if keep("minor_version_compat") {
            self.mvc.extend(locate(file.minor_version_compat, name));
        }
        if keep("driver_branches") {
            self.branches.extend(locate(file.driver_branches, name));
        }
        if keep("forward_compat") {
            self.forward_compat
                .extend(locate(file.forward_compat, name));
        }
        if keep("cudnn") {
            self.cudnn.extend(locate(file.cudnn, name));
        }
        if keep("pytorch") {
            self.pytorch.extend(locate(file.pytorch, name));
        }
        if keep("tensorflow") {
            self.tensorflow.extend(locate(file.tensorflow, name));
        }
        if keep("jax") {
            self.jax.extend(locate(file.jax, name));
        }
    }

    /// One matrix file checked against the built-in tables it does not hold itself: the tables
    /// it names replace the built-in ones, the rest come from `base` (the embedded files), so a
    /// single file of `compat-matrix/` is validated with the CUDA versions, compute
    /// capabilities and drivers it refers to. Errors in base rows are shown under `base_label`
    /// so they are not mistaken for the file's own. Returns the matrix and the file's tables.
    pub fn with_base(
        path: &Path,
        base: &[(&str, &str)],
        base_label: &str,
    ) -> Result<(Matrix, Vec<&'static str>), Vec<MatrixError>> {
        let shown = path.display().to_string();
        let text = crate::userfile::read(path, "matrix file").map_err(|e| {
            vec![MatrixError {
                path: shown.clone(),
                message: e,
            }]
        })?;
        let own = parse_file(&shown, &text).map_err(|e| vec![e])?;
        let tables = own.tables();
        let mut m = Matrix {
            source: shown.clone(),
            ..Default::default()
        };
        for (name, t) in base {
            let label = format!("{base_label}{name}");
            let f = parse_file(&label, t).map_err(|e| vec![e])?;
            m.merge_file(&label, f, &tables);
        }
        m.merge_file(&shown, own, &[]);
        let errors = m.validate();
        if errors.is_empty() {
            Ok((m, tables))
        } else {
            Err(errors)
        }
    }

    /// Row counts per table, for `matrix show`.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("cuda_toolkits", self.toolkits.len()),
            ("minor_version_compat", self.mvc.len()),
            ("driver_branches", self.branches.len()),
            ("forward_compat", self.forward_compat.len()),
            ("gpus", self.gpus.len()),
            ("compute_capabilities", self.ccs.len()),
            ("cudnn", self.cudnn.len()),
            ("pytorch", self.pytorch.len()),
            (
                "pytorch variants",
                self.pytorch.iter().map(|r| r.variants.len()).sum(),
            ),
            ("tensorflow", self.tensorflow.len()),
            ("jax", self.jax.len()),
        ]
    }

    /// Tables (as [`Matrix::counts`] names them) in which `reference` has rows and this matrix
    /// has none: what a file cut short, or one missing a table, lacks.
    pub fn missing_tables(&self, reference: &Matrix) -> Vec<&'static str> {
        let mine = self.counts();
        reference
            .counts()
            .into_iter()
            .filter(|(name, n)| *n > 0 && mine.iter().any(|(m, k)| m == name && *k == 0))
            .map(|(name, _)| name)
            .collect()
    }

    // -----------------------------------------------------------------------------------------
    // Validation

    /// Every meaning error, each with its place.
    pub fn validate(&self) -> Vec<MatrixError> {
        let mut e = Vec::new();
        self.validate_sources(&mut e);
        self.validate_compute_capabilities(&mut e);
        self.validate_gpus(&mut e);
        self.validate_toolkits(&mut e);
        self.validate_minor_version_compat(&mut e);
        self.validate_driver_branches(&mut e);
        self.validate_forward_compat(&mut e);
        self.validate_cudnn(&mut e);
        self.validate_pytorch(&mut e);
        self.validate_tensorflow(&mut e);
        self.validate_jax(&mut e);
        e
    }

    /// Whether `v` is a CUDA version of cuda_toolkits.
    fn cuda_known(&self, v: &str) -> bool {
        self.toolkits.iter().any(|t| t.cuda == v)
    }

    /// Every row's `source` is an https:// link.
    fn validate_sources(&self, e: &mut Vec<MatrixError>) {
        let all: Vec<&dyn Located> = self
            .gpus
            .iter()
            .map(|r| r as &dyn Located)
            .chain(self.ccs.iter().map(|r| r as &dyn Located))
            .chain(self.toolkits.iter().map(|r| r as &dyn Located))
            .chain(self.mvc.iter().map(|r| r as &dyn Located))
            .chain(self.branches.iter().map(|r| r as &dyn Located))
            .chain(self.forward_compat.iter().map(|r| r as &dyn Located))
            .chain(self.cudnn.iter().map(|r| r as &dyn Located))
            .chain(self.pytorch.iter().map(|r| r as &dyn Located))
            .chain(self.tensorflow.iter().map(|r| r as &dyn Located))
            .chain(self.jax.iter().map(|r| r as &dyn Located))
            .collect();
        for r in all {
            if !r.source().starts_with("https://") {
                e.push(err_at(
                    r.at(),
                    format!("source {:?} is not an https:// link", r.source()),
                ));
            }
        }
    }

    /// Compute capabilities: sorted, unique, valid, first CUDA defined.
    fn validate_compute_capabilities(&self, e: &mut Vec<MatrixError>) {
        for w in self.ccs.windows(2) {
            if cc_cmp(&w[0].cc, &w[1].cc) != Ordering::Less {
                e.push(err_at(
                    &w[1].at,
                    format!(
                        "compute capability {} is not after {} (keep the table sorted and unique)",
                        w[1].cc, w[0].cc
                    ),
                ));
            }
        }
        for r in &self.ccs {
            if !valid_cc(&r.cc) {
                e.push(err_at(
                    &r.at,
                    format!("{:?} is not a compute capability like \"8.6\"", r.cc),
                ));
            }
            if let Some(f) = &r.first_cuda {
                if !self.cuda_known(f) && CudaVersion::parse(f).is_none_or(|c| c.major >= 10) {
                    e.push(err_at(
                        &r.at,
                        format!("first_cuda {f} is not a CUDA version of cuda_toolkits"),
                    ));
                }
            }
        }
    }

    /// GPU rows: a valid compute capability defined in compute_capabilities, with its architecture.
    fn validate_gpus(&self, e: &mut Vec<MatrixError>) {
        for r in &self.gpus {
            if !valid_cc(&r.cc) || r.names.is_empty() {
                e.push(err_at(
                    &r.at,
                    format!(
                        "GPU row needs a compute capability like \"8.6\" and names (cc {:?})",
                        r.cc
                    ),
                ));
            } else if !self.ccs.is_empty() && !self.ccs.iter().any(|c| c.cc == r.cc) {
                e.push(err_at(
                    &r.at,
                    format!(
                        "compute capability {} is not defined in compute_capabilities",
                        r.cc
                    ),
                ));
            } else if let Some(c) = self.ccs.iter().find(|c| c.cc == r.cc) {
                if c.arch != r.arch {
                    e.push(err_at(
                        &r.at,
                        format!(
                            "architecture {} differs from {} for compute capability {}",
                            r.arch, c.arch, r.cc
                        ),
                    ));
                }
            }
        }
    }

    /// Toolkits: sorted by CUDA version, drivers parse and do not go down, one GA per minor.
    fn validate_toolkits(&self, e: &mut Vec<MatrixError>) {
        for w in self.toolkits.windows(2) {
            if cuda_cmp(&w[0].cuda, &w[1].cuda) == Ordering::Greater {
                e.push(err_at(
                    &w[1].at,
                    format!(
                        "CUDA {} comes after {}: keep cuda_toolkits sorted",
                        w[1].cuda, w[0].cuda
                    ),
                ));
            }
            if let (Some(a), Some(b)) = (
                w[0].linux.as_deref().and_then(DriverVersion::parse),
                w[1].linux.as_deref().and_then(DriverVersion::parse),
            ) {
                if b < a {
                    e.push(err_at(
                        &w[1].at,
                        format!("Linux driver {b} is older than the previous row's {a}"),
                    ));
                }
            }
        }
        for r in &self.toolkits {
            if CudaVersion::parse(&r.cuda).is_none() {
                e.push(err_at(&r.at, format!("{:?} is not a CUDA version", r.cuda)));
            }
            for d in [&r.linux, &r.windows].into_iter().flatten() {
                if !driver_ok(d) {
                    e.push(err_at(&r.at, format!("{d:?} is not a driver version")));
                }
            }
            let gas = self
                .toolkits
                .iter()
                .filter(|t| t.cuda == r.cuda && t.ga)
                .count();
            if gas != 1
                && !self
                    .toolkits
                    .iter()
                    .take_while(|t| !std::ptr::eq(*t, r))
                    .any(|t| t.cuda == r.cuda)
            {
                e.push(err_at(
                    &r.at,
                    format!(
                        "CUDA {} needs exactly one row marked ga: true (found {gas})",
                        r.cuda
                    ),
                ));
            }
        }
    }

    /// Minor-version compatibility: majors increasing, drivers parse.
    fn validate_minor_version_compat(&self, e: &mut Vec<MatrixError>) {
        for w in self.mvc.windows(2) {
            if w[1].major <= w[0].major {
                e.push(err_at(
                    &w[1].at,
                    format!("major {} is not after {}", w[1].major, w[0].major),
                ));
            }
        }
        for r in &self.mvc {
            for d in std::iter::once(&r.linux).chain(r.windows.iter()) {
                if !driver_ok(d) {
                    e.push(err_at(&r.at, format!("{d:?} is not a driver version")));
                }
            }
        }
    }

    /// Driver branches: increasing, with a CUDA version that does not go down.
    fn validate_driver_branches(&self, e: &mut Vec<MatrixError>) {
        for w in self.branches.windows(2) {
            if w[1].branch <= w[0].branch {
                e.push(err_at(
                    &w[1].at,
                    format!("branch {} is not after {}", w[1].branch, w[0].branch),
                ));
            }
            if cuda_cmp(&w[1].cuda, &w[0].cuda) == Ordering::Less {
                e.push(err_at(
                    &w[1].at,
                    format!(
                        "branch {} supports CUDA {}, older than branch {}'s {}",
                        w[1].branch, w[1].cuda, w[0].branch, w[0].cuda
                    ),
                ));
            }
        }
        for r in &self.branches {
            if CudaVersion::parse(&r.cuda).is_none() {
                e.push(err_at(&r.at, format!("{:?} is not a CUDA version", r.cuda)));
            }
        }
    }

    /// Forward compatibility: increasing CUDA versions of cuda_toolkits, branches increasing.
    fn validate_forward_compat(&self, e: &mut Vec<MatrixError>) {
        for w in self.forward_compat.windows(2) {
            if cuda_cmp(&w[1].cuda, &w[0].cuda) != Ordering::Greater {
                e.push(err_at(
                    &w[1].at,
                    format!("cuda-compat {} is not after {}", w[1].cuda, w[0].cuda),
                ));
            }
        }
        for r in &self.forward_compat {
            if !self.cuda_known(&r.cuda) {
                e.push(err_at(
                    &r.at,
                    format!("CUDA {} is not in cuda_toolkits", r.cuda),
                ));
            }
            if r.branches.is_empty() || r.branches.windows(2).any(|w| w[1] <= w[0]) {
                e.push(err_at(
                    &r.at,
                    "branches must be a non-empty, increasing list".to_string(),
                ));
            }
        }
    }

    /// cuDNN: ranges valid, sorted, not overlapping; CUDA ranges known; ccs valid.
    fn validate_cudnn(&self, e: &mut Vec<MatrixError>) {
        for w in self.cudnn.windows(2) {
            if in_range(&w[1].from, &w[0].from, &w[0].to) == Some(true)
                || dotted_cmp(&w[1].from, &w[0].from) != Ordering::Greater
            {
                e.push(err_at(
                    &w[1].at,
                    format!(
                        "cuDNN {}–{} overlaps or precedes {}–{}",
                        w[1].from, w[1].to, w[0].from, w[0].to
                    ),
                ));
            }
        }
        for r in &self.cudnn {
            if dotted(&r.from).is_none() || in_range(&r.from, &r.from, &r.to) != Some(true) {
                e.push(err_at(
                    &r.at,
                    format!("cuDNN range {}–{} is not a range of versions", r.from, r.to),
                ));
            }
            for c in &r.cuda {
                for v in [&c.from, &c.to] {
                    if !self.cuda_known(v) {
                        e.push(err_at(
                            &r.at,
                            format!("CUDA {v} is not a CUDA version of cuda_toolkits"),
                        ));
                    }
                }
                if cuda_cmp(&c.from, &c.to) == Ordering::Greater {
                    e.push(err_at(
                        &r.at,
                        format!("CUDA range {}–{} is reversed", c.from, c.to),
                    ));
                }
                for d in [&c.linux, &c.windows].into_iter().flatten() {
                    if !driver_ok(d) {
                        e.push(err_at(&r.at, format!("{d:?} is not a driver version")));
                    }
                }
            }
            for cc in std::iter::once(&r.min_cc).chain(r.max_cc.iter()) {
                if !valid_cc(cc) {
                    e.push(err_at(&r.at, format!("{cc:?} is not a compute capability")));
                }
            }
        }
    }

    /// PyTorch: sorted, unique; variants known and their CUDA and ccs defined.
    fn validate_pytorch(&self, e: &mut Vec<MatrixError>) {
        for w in self.pytorch.windows(2) {
            if dotted_cmp(&w[1].torch, &w[0].torch) != Ordering::Greater {
                e.push(err_at(
                    &w[1].at,
                    format!("torch {} is not after {}", w[1].torch, w[0].torch),
                ));
            }
        }
        for r in &self.pytorch {
            if r.variant(&r.pypi_default).is_none() {
                e.push(err_at(
                    &r.at,
                    format!("pypi_default {} is not one of its variants", r.pypi_default),
                ));
            }
            for (i, v) in r.variants.iter().enumerate() {
                if r.variants.iter().take(i).any(|o| o.tag == v.tag) {
                    e.push(err_at(&r.at, format!("variant {} appears twice", v.tag)));
                }
                if !self.cuda_known(&v.cuda) {
                    e.push(err_at(
                        &r.at,
                        format!("variant {}: CUDA {} is not in cuda_toolkits", v.tag, v.cuda),
                    ));
                }
                if CudaVersion::parse(&v.cuda).map(|c| format!("cu{}{}", c.major, c.minor))
                    != Some(v.tag.clone())
                {
                    e.push(err_at(
                        &r.at,
                        format!("variant {} does not match its CUDA {}", v.tag, v.cuda),
                    ));
                }
                if v.pypi.is_some() && v.tag != r.pypi_default {
                    e.push(err_at(
                        &r.at,
                        format!(
                            "variant {}: pypi is only for the pypi_default variant ({})",
                            v.tag, r.pypi_default
                        ),
                    ));
                }
                let (psass, pptx, _) = v.wheel(true);
                for cc in v.sass.iter().chain(v.ptx.iter()).chain(&psass).chain(&pptx) {
                    if !self.ccs.iter().any(|c| &c.cc == cc) {
                        e.push(err_at(
                            &r.at,
                            format!("variant {}: compute capability {cc} is not defined", v.tag),
                        ));
                    }
                }
            }
        }
    }

    /// TensorFlow: sorted; CUDA versions known, compute capabilities defined, library ranges in order.
    fn validate_tensorflow(&self, e: &mut Vec<MatrixError>) {
        for w in self.tensorflow.windows(2) {
            if dotted_cmp(&w[1].tf, &w[0].tf) != Ordering::Greater {
                e.push(err_at(
                    &w[1].at,
                    format!("tensorflow {} is not after {}", w[1].tf, w[0].tf),
                ));
            }
        }
        for r in &self.tensorflow {
            let lib_cudas = r.libs.iter().flat_map(|l| [&l.from, &l.to]);
            for c in std::iter::once(&r.cuda).chain(lib_cudas) {
                if !self.cuda_known(c) {
                    e.push(err_at(&r.at, format!("CUDA {c} is not in cuda_toolkits")));
                }
            }
            for cc in r.sass.iter().chain(&r.ptx) {
                if !self.ccs.iter().any(|c| &c.cc == cc) {
                    e.push(err_at(
                        &r.at,
                        format!("compute capability {cc} is not defined"),
                    ));
                }
            }
            for l in &r.libs {
                if cuda_cmp(&l.from, &l.to) == Ordering::Greater {
                    e.push(err_at(
                        &r.at,
                        format!("{}: CUDA range {}–{} is reversed", l.lib, l.from, l.to),
                    ));
                }
            }
        }
    }

    /// JAX: per CUDA major, sorted and not overlapping.
    fn validate_jax(&self, e: &mut Vec<MatrixError>) {
        for r in &self.jax {
            if dotted_cmp(&r.from, &r.below) != Ordering::Less {
                e.push(err_at(
                    &r.at,
                    format!("range {}–{} is empty", r.from, r.below),
                ));
            }
            for v in [&r.built_with, &r.min_cuda] {
                if !self.cuda_known(v) {
                    e.push(err_at(&r.at, format!("CUDA {v} is not in cuda_toolkits")));
                }
            }
            if !driver_ok(&r.min_driver) {
                e.push(err_at(
                    &r.at,
                    format!("{:?} is not a driver version", r.min_driver),
                ));
            }
            let earlier = self.jax.iter().take_while(|o| !std::ptr::eq(*o, r));
            for o in earlier.filter(|o| o.cuda_major == r.cuda_major) {
                if dotted_cmp(&r.from, &o.below) == Ordering::Less {
                    e.push(err_at(
                        &r.at,
                        format!(
                            "jax {}–{} (CUDA {}) overlaps {}–{}",
                            r.from, r.below, r.cuda_major, o.from, o.below
                        ),
                    ));
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Queries

    /// The table row for a GPU name as NVML or a person writes it ("NVIDIA A100-SXM4-80GB",
    /// "RTX 3070", "Tesla K80").
    pub fn gpu(&self, name: &str) -> Option<&GpuRow> {
        let words = name_words(name);
        // The most words, then the most spelt out in full ("rtx 2050" over "rtx 20*").
        let mut best: Option<(&GpuRow, (usize, usize))> = None;
        for row in &self.gpus {
            for pat in &row.names {
                let pw = name_words(pat);
                let rank = (pw.len(), pw.iter().filter(|w| !w.ends_with('*')).count());
                if !pw.is_empty() && contains_run(&words, &pw) && best.is_none_or(|(_, n)| rank > n)
                {
                    best = Some((row, rank));
                }
            }
        }
        best.map(|(r, _)| r)
    }

    pub fn cc(&self, cc: &str) -> Option<&CcRow> {
        self.ccs.iter().find(|r| r.cc == cc)
    }

    /// The architecture of a compute capability ("8.6" → "Ampere").
    pub fn arch_of_cc(&self, cc: &str) -> Option<&str> {
        self.cc(cc).map(|r| r.arch.as_str())
    }

    /// The CUDA version a driver supports, from its branch (the highest branch row at or below
    /// the driver's major). None below the oldest branch or above the newest (stale matrix).
    pub fn driver_cuda(&self, d: &DriverVersion) -> Option<CudaVersion> {
        if d.major > self.newest_branch()? + 4 {
            return None;
        }
        self.branches
            .iter()
            .rev()
            .find(|b| b.branch <= d.major)
            .and_then(|b| CudaVersion::parse(&b.cuda))
    }

    /// The cuda-compat package row of a CUDA version.
    pub fn forward_compat(&self, cuda: CudaVersion) -> Option<&ForwardCompatRow> {
        self.forward_compat
            .iter()
            .find(|r| CudaVersion::parse(&r.cuda) == Some(cuda))
    }

    pub fn newest_branch(&self) -> Option<u32> {
        self.branches.last().map(|b| b.branch)
    }

    /// The newest CUDA version any toolkit row names.
    pub fn newest_cuda(&self) -> Option<CudaVersion> {
        self.toolkits
            .iter()
            .filter_map(|t| CudaVersion::parse(&t.cuda))
            .max()
    }

    /// The driver packaged with the GA release of a CUDA minor version.
    pub fn ga_driver(&self, cuda: CudaVersion, os: Os) -> Option<(DriverVersion, &ToolkitRow)> {
        let row = self
            .toolkits
            .iter()
            .find(|t| t.ga && CudaVersion::parse(&t.cuda) == Some(cuda))?;
        let d = match os {
            Os::Linux => row.linux.as_deref(),
            Os::Windows => row.windows.as_deref(),
        }?;
        Some((DriverVersion::parse_min(d)?, row))
    }

    /// The minimum driver of a CUDA major under minor-version compatibility.
    pub fn mvc_min(&self, major: u32, os: Os) -> Option<(DriverVersion, &MvcRow)> {
        let row = self.mvc.iter().find(|r| r.major == major)?;
        let d = match os {
            Os::Linux => Some(row.linux.as_str()),
            Os::Windows => row.windows.as_deref(),
        }?;
        Some((DriverVersion::parse_min(d)?, row))
    }

    /// The oldest driver that runs code built with CUDA `cuda`: minor-version compatibility for
    /// 11.x and later, unless the code JIT-compiles PTX (then the GA driver of that minor, as
    /// for 10.x and older).
    pub fn min_driver(&self, cuda: CudaVersion, os: Os, ptx_jit: bool) -> Option<Requirement> {
        if cuda.major >= 11 && !ptx_jit {
            if let Some((d, row)) = self.mvc_min(cuda.major, os) {
                return Some(Requirement {
                    driver: d,
                    why: format!(
                        "CUDA {cuda} needs driver >= {d} (minor-version compatibility of CUDA {}.x)",
                        cuda.major
                    ),
                    source: row.source.clone(),
                });
            }
        }
        let (d, row) = self.ga_driver(cuda, os)?;
        Some(Requirement {
            driver: d,
            why: if ptx_jit {
                format!("PTX built with CUDA {cuda} is JIT-compiled only by driver >= {d} (the CUDA {cuda} GA driver)")
            } else {
                format!("CUDA {cuda} needs driver >= {d} (its GA driver)")
            },
            source: row.source.clone(),
        })
    }

    /// The PyTorch release row of a version ("2.7.1+cu126" → the "2.7" row).
    pub fn torch(&self, version: &str) -> Option<&TorchRow> {
        let v = Pep440::parse(version)?;
        let (a, b) = v.major_minor();
        self.pytorch
            .iter()
            .find(|r| dotted(&r.torch) == Some(vec![a, b]))
    }

    pub fn tensorflow(&self, version: &str) -> Option<&TfRow> {
        let v = Pep440::parse(version)?;
        let (a, b) = v.major_minor();
        self.tensorflow
            .iter()
            .find(|r| dotted(&r.tf) == Some(vec![a, b]))
    }

    /// The JAX row for a jax version and CUDA major.
    pub fn jax(&self, version: &str, cuda_major: u32) -> Option<&JaxRow> {
        let v = Pep440::parse(version)?;
        self.jax.iter().find(|r| {
            r.cuda_major == cuda_major
                && cmp_dotted(&v.release, &dotted(&r.from).unwrap_or_default()) != Ordering::Less
                && cmp_dotted(&v.release, &dotted(&r.below).unwrap_or_default()) == Ordering::Less
        })
    }

    /// The cuDNN row covering a version ("9.1.0.70", "8.9.7").
    pub fn cudnn(&self, version: &str) -> Option<&CudnnRow> {
        let three: Vec<&str> = version.split('.').take(3).collect();
        let v = three.join(".");
        self.cudnn
            .iter()
            .find(|r| in_range(&v, &r.from, &r.to) == Some(true))
    }

    /// Newest releases the matrix knows (for "the matrix may be stale").
    pub fn newest_torch(&self) -> Option<&TorchRow> {
        self.pytorch.last()
    }
    pub fn newest_tensorflow(&self) -> Option<&TfRow> {
        self.tensorflow.last()
    }
    /// The exclusive upper end of the newest JAX range.
    pub fn jax_known_below(&self) -> Option<&str> {
        self.jax
            .iter()
            .max_by(|a, b| dotted_cmp(&a.below, &b.below))
            .map(|r| r.below.as_str())
    }
}

/// A driver requirement with its reason and source.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub driver: DriverVersion,
    pub why: String,
    pub source: String,
}

/// How a build reaches a compute capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// A cubin for this cc, or for a lower minor of the same major (sm_86 runs on sm_89).
    Sass(String),
    /// PTX for a cc at or below it, JIT-compiled by the driver.
    Ptx(String),
    None,
}

/// Whether code built with `sass` cubins and `ptx` runs on a GPU of compute capability `cc`
/// (CUDA C Programming Guide binary compatibility, reference/compat-facts.md §3).
pub fn coverage(sass: &[String], ptx: &[String], cc: &str) -> Coverage {
    let Some((maj, min)) = split_cc(cc) else {
        return Coverage::None;
    };
    let same_major = sass
        .iter()
        .filter_map(|s| split_cc(s).map(|(a, b)| (s, a, b)))
        .filter(|(_, a, b)| *a == maj && *b <= min)
        .max_by_key(|(_, _, b)| *b);
    if let Some((s, _, _)) = same_major {
        return Coverage::Sass(s.clone());
    }
    let jit = ptx
        .iter()
        .filter_map(|p| split_cc(p).map(|(a, b)| (p, a, b)))
        .filter(|(_, a, b)| (*a, *b) <= (maj, min))
        .max_by_key(|(_, a, b)| (*a, *b));
    match jit {
        Some((p, _, _)) => Coverage::Ptx(p.clone()),
        None => Coverage::None,
    }
}

/// "8.6" → (8, 6); also "sm_86" / "compute_90" / "sm_120".
pub fn split_cc(s: &str) -> Option<(u32, u32)> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once('.') {
        return Some((a.parse().ok()?, b.parse().ok()?));
    }
    let digits = s
        .strip_prefix("sm_")
        .or_else(|| s.strip_prefix("compute_"))?
        .trim_end_matches(['a', 'f']);
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (a, b) = digits.split_at(digits.len() - 1);
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// "X.Y" with small numbers.
pub fn valid_cc(s: &str) -> bool {
    let Some((a, b)) = s.split_once('.') else {
        return false;
    };
    let ok = |p: &str| !p.is_empty() && p.len() <= 2 && p.bytes().all(|c| c.is_ascii_digit());
    ok(a) && ok(b)
}

fn cc_cmp(a: &str, b: &str) -> Ordering {
    split_cc(a).cmp(&split_cc(b))
}

fn cuda_cmp(a: &str, b: &str) -> Ordering {
    CudaVersion::parse(a).cmp(&CudaVersion::parse(b))
}

fn dotted_cmp(a: &str, b: &str) -> Ordering {
    cmp_dotted(
        &dotted(a).unwrap_or_default(),
        &dotted(b).unwrap_or_default(),
    )
}

fn name_words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | '_' | '/' | '(' | ')'))
        .filter(|w| !w.is_empty() && !matches!(*w, "nvidia" | "geforce" | "tesla"))
        .map(str::to_string)
        .collect()
}

fn word_matches(word: &str, pat: &str) -> bool {
    match pat.strip_suffix('*') {
        Some(prefix) => word.starts_with(prefix) && word.len() > prefix.len(),
        None => word == pat,
    }
}

fn contains_run(words: &[String], pat: &[String]) -> bool {
    words
        .windows(pat.len())
        .any(|w| w.iter().zip(pat).all(|(a, b)| word_matches(a, b)))
}

#[cfg(test)]
#[path = "matrix_tests.rs"]
mod tests;
