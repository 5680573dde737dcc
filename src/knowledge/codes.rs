//! The codes CUDA (runtime `cudaError_t`, driver `CUresult`), its libraries (cuDNN, cuBLAS,
//! cuFFT, cuSOLVER, cuSPARSE, cuRAND, NCCL) and NVML (`nvmlReturn_t`) return, and the one
//! category each code belongs to. The data is `knowledge/<emitter>.yaml`, mined from the
//! headers of pinned PyPI wheels by `scripts/knowledge/codes.py` and merged with the hand-written
//! mapping `knowledge/code-categories.yaml`; it is embedded here at build time. `check`
//! ([`crate::gpu::category_of`], `nvml.failed`) and `explain` both read their categories from
//! here, so a code has one category wherever it is met.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::vocab::Category;

pub const SCHEMA: &str = "gpudoctor.knowledge-codes/1";

/// The embedded files, one per emitter (as JSON: see `knowledge_json!`), by their YAML's name.
const FILES: &[(&str, &str)] = &[
    (
        "knowledge/cuda-runtime.yaml",
        knowledge_json!("cuda-runtime"),
    ),
    ("knowledge/cuda-driver.yaml", knowledge_json!("cuda-driver")),
    ("knowledge/cudnn.yaml", knowledge_json!("cudnn")),
    ("knowledge/cublas.yaml", knowledge_json!("cublas")),
    ("knowledge/cufft.yaml", knowledge_json!("cufft")),
    ("knowledge/cusolver.yaml", knowledge_json!("cusolver")),
    ("knowledge/cusparse.yaml", knowledge_json!("cusparse")),
    ("knowledge/curand.yaml", knowledge_json!("curand")),
    ("knowledge/nccl.yaml", knowledge_json!("nccl")),
    ("knowledge/nvml.yaml", knowledge_json!("nvml")),
];

/// The codes of one emitter (one library's status enum).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emitter {
    pub schema: String,
    /// "cuDNN", "CUDA runtime API (libcudart)".
    pub emitter: String,
    /// "cudnn", "cuda-runtime": the file's name.
    pub id: String,
    /// The mapping's family ("cuda" holds both the runtime and the driver API).
    pub family: String,
    /// The enum's C type ("cudnnStatus_t").
    #[serde(rename = "enum")]
    pub enum_type: String,
    /// The headers it was mined from: `dist==version:member (version V)`.
    pub sources: Vec<String>,
    #[serde(default)]
    pub category_sources: Vec<String>,
    pub default_category: Category,
    #[serde(default)]
    pub default_why: String,
    pub entries: Vec<Code>,
}

/// One enumerator.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Code {
    pub name: String,
    /// Its number in each version that has it (cuDNN 8 and 9 number the same status apart).
    pub values: Vec<Value>,
    pub versions: Vec<String>,
    /// `dist==version:member:line` of the newest header that has it.
    pub source: String,
    /// The header's comment.
    #[serde(default)]
    pub doc: String,
    pub category: Category,
    /// "explicit" (code-categories.yaml names it) or "default" (the family's default).
    pub mapped: String,
    /// What the library's GetErrorString prints, when known.
    #[serde(default)]
    pub text: String,
    /// Where `text` was read: the library and the call (`...libcudart.so.13 cudaGetErrorString(701)`).
    #[serde(default)]
    pub text_source: String,
    /// Whether `text` is CUDA's own words, recognised without "CUDA error" beside it
    /// (scripts/knowledge/codes.py `alone`).
    #[serde(default)]
    pub alone: bool,
    #[serde(default)]
    pub meaning: String,
    #[serde(default)]
    pub causes: Vec<String>,
    #[serde(default)]
    pub fix: String,
    #[serde(default)]
    pub commands: Vec<String>,
    /// Why this category, where the mapping says.
    #[serde(default)]
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Value {
    pub num: i64,
    pub versions: Vec<String>,
}

impl Code {
    /// Whether any version numbers it `n`.
    pub fn has_num(&self, n: i64) -> bool {
        self.values.iter().any(|v| v.num == n)
    }

    /// Its number in the newest version.
    pub fn num(&self) -> Option<i64> {
        self.values.last().map(|v| v.num)
    }

    /// What it means: the hand-written meaning, else the header's comment.
    pub fn meaning(&self) -> &str {
        if self.meaning.is_empty() {
            &self.doc
        } else {
            &self.meaning
        }
    }

    /// "CUDA 11-13", "cuDNN 8-9": the versions that define it.
    pub fn version_range(&self) -> String {
        match (self.versions.first(), self.versions.last()) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
            (Some(a), _) => a.clone(),
            _ => String::new(),
        }
    }
}

/// Every emitter's codes (empty only if a built-in file were broken: a test loads them all).
pub fn all() -> &'static [Emitter] {
    static ALL: OnceLock<Vec<Emitter>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(name, json)| from_json(name, json).ok())
            .collect()
    })
}

/// Reads one emitter's file and checks its schema and that no name is listed twice.
pub fn parse(name: &str, text: &str) -> Result<Emitter, String> {
    let e: Emitter = serde_saphyr::from_str(text).map_err(|err| {
        let (at, message) = crate::userfile::yaml_error(name, text, &err);
        format!("{at}: {message}")
    })?;
    checked(name, e)
}

/// The embedded JSON of `name` (build.rs's conversion of the YAML), checked as [`parse`] does.
fn from_json(name: &str, json: &str) -> Result<Emitter, String> {
    let e: Emitter = serde_json::from_str(json).map_err(|err| format!("{name}: {err}"))?;
    checked(name, e)
}

fn checked(name: &str, e: Emitter) -> Result<Emitter, String> {
    if e.schema != SCHEMA {
        return Err(format!(
            "{name}: schema is {:?}; this gpudoctor reads {SCHEMA:?}",
            e.schema
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for c in &e.entries {
        if !seen.insert(c.name.as_str()) {
            return Err(format!("{name}: {} is listed twice", c.name));
        }
        if c.values.is_empty() {
            return Err(format!("{name}: {} has no number", c.name));
        }
    }
    Ok(e)
}

/// The emitter whose file is `id` ("cuda-driver", "nvml").
pub fn emitter(id: &str) -> Option<&'static Emitter> {
    all().iter().find(|e| e.id == id)
}

/// A code by its name in any emitter, ignoring case ("cudnn_status_not_initialized").
pub fn by_name(name: &str) -> Option<(&'static Emitter, &'static Code)> {
    let name = name.trim();
    all().iter().find_map(|e| {
        e.entries
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .map(|c| (e, c))
    })
}

/// The code numbered `n` in one emitter.
pub fn by_num(id: &str, n: i64) -> Option<&'static Code> {
    emitter(id)?.entries.iter().find(|c| c.has_num(n))
}

/// A CUDA error by number: the runtime's `cudaError_t` and the driver's `CUresult` of that
/// number (either may be absent: 35 is the runtime's alone, 202 the driver's).
pub fn cuda(n: i64) -> (Option<&'static Code>, Option<&'static Code>) {
    (by_num("cuda-runtime", n), by_num("cuda-driver", n))
}

/// The category of CUDA error `n` (a CUresult, or a runtime-only cudaError_t), None for a
/// number no CUDA version defines. The runtime and driver codes of one number share a category
/// (the generator refuses a mapping that splits them).
pub fn cuda_category(n: i64) -> Option<Category> {
    let (rt, drv) = cuda(n);
    drv.or(rt).map(|c| c.category)
}

/// The NVML return code numbered `n`.
pub fn nvml(n: i64) -> Option<&'static Code> {
    by_num("nvml", n)
}

/// The NVML return code named `name` ("NVML_ERROR_RESET_REQUIRED").
pub fn nvml_named(name: &str) -> Option<&'static Code> {
    emitter("nvml")?.entries.iter().find(|c| c.name == name)
}

#[cfg(test)]
#[path = "codes_tests.rs"]
mod tests;
