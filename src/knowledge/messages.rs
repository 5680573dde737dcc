//! Message families of the frameworks, loaders, containers and the OS (issue 30): the files
//! `knowledge/messages/<emitter>.yaml`, written by `scripts/knowledge/msg_families.py build` from
//! the emitters' own sources (`knowledge/mined/`) and the cited mapping
//! (`knowledge/mapping/messages.yaml`), embedded at build time.
//!
//! A family is a message whose names, numbers and paths vary: its literal `pieces` (lowercased,
//! whitespace collapsed, as [`crate::explain::catalog::normalise`] writes a line) appear in order
//! with holes between them. `keys` recognise a reworded short text ("Torch not being compiled
//! with CUDA enabled"): every key word present, as a word, on a line of at most `keys_max_words`
//! words. A family whose pieces are short or common words (a shell's "line 27: 318 Killed") also
//! carries its whole `regex`, generated from the emitter's format with typed holes: the pieces
//! find the line, the regex confirms it. Each family names the explain signature whose explanation, fix and rank apply; the
//! catalog adds it to that signature when it loads (`explain::catalog`).

use serde::Deserialize;

/// The generated files built into the binary.
const EMBEDDED: &[(&str, &str)] = &[
    ("bash", knowledge_json!("messages/bash")),
    ("bitsandbytes", knowledge_json!("messages/bitsandbytes")),
    ("cpython", knowledge_json!("messages/cpython")),
    ("ctranslate2", knowledge_json!("messages/ctranslate2")),
    ("cuda-runtime", knowledge_json!("messages/cuda-runtime")),
    ("cudnn", knowledge_json!("messages/cudnn")),
    ("cupy", knowledge_json!("messages/cupy")),
    ("dash", knowledge_json!("messages/dash")),
    ("dcgm", knowledge_json!("messages/dcgm")),
    ("deepspeed", knowledge_json!("messages/deepspeed")),
    ("dkms", knowledge_json!("messages/dkms")),
    ("dxgi", knowledge_json!("messages/dxgi")),
    ("earlyoom", knowledge_json!("messages/earlyoom")),
    ("ffmpeg", knowledge_json!("messages/ffmpeg")),
    ("fish", knowledge_json!("messages/fish")),
    ("ggml", knowledge_json!("messages/ggml")),
    ("glibc", knowledge_json!("messages/glibc")),
    ("gpu-burn", knowledge_json!("messages/gpu-burn")),
    ("gpu-operator", knowledge_json!("messages/gpu-operator")),
    ("jax", knowledge_json!("messages/jax")),
    (
        "k8s-device-plugin",
        knowledge_json!("messages/k8s-device-plugin"),
    ),
    ("kubernetes", knowledge_json!("messages/kubernetes")),
    (
        "libnvidia-container",
        knowledge_json!("messages/libnvidia-container"),
    ),
    ("moby", knowledge_json!("messages/moby")),
    ("nccl", knowledge_json!("messages/nccl")),
    ("numba", knowledge_json!("messages/numba")),
    ("nvenc-api", knowledge_json!("messages/nvenc-api")),
    (
        "nvidia-container-toolkit",
        knowledge_json!("messages/nvidia-container-toolkit"),
    ),
    ("nvidia-docker", knowledge_json!("messages/nvidia-docker")),
    (
        "nvidia-installer",
        knowledge_json!("messages/nvidia-installer"),
    ),
    ("nvidia-kbuild", knowledge_json!("messages/nvidia-kbuild")),
    (
        "nvidia-modprobe",
        knowledge_json!("messages/nvidia-modprobe"),
    ),
    (
        "nvidia-persistenced",
        knowledge_json!("messages/nvidia-persistenced"),
    ),
    ("nvidia-smi", knowledge_json!("messages/nvidia-smi")),
    ("nvml", knowledge_json!("messages/nvml")),
    ("ollama", knowledge_json!("messages/ollama")),
    ("onnxruntime", knowledge_json!("messages/onnxruntime")),
    ("opencl", knowledge_json!("messages/opencl")),
    ("pytorch", knowledge_json!("messages/pytorch")),
    ("qemu", knowledge_json!("messages/qemu")),
    ("slurm", knowledge_json!("messages/slurm")),
    ("systemd", knowledge_json!("messages/systemd")),
    ("tensorflow", knowledge_json!("messages/tensorflow")),
    ("tensorrt", knowledge_json!("messages/tensorrt")),
    (
        "torch-cpp-extension",
        knowledge_json!("messages/torch-cpp-extension"),
    ),
    ("triton", knowledge_json!("messages/triton")),
    ("vllm", knowledge_json!("messages/vllm")),
    ("vulkan", knowledge_json!("messages/vulkan")),
    ("windows", knowledge_json!("messages/windows")),
    ("xla", knowledge_json!("messages/xla")),
    ("zsh", knowledge_json!("messages/zsh")),
];

/// The names of the embedded files (their emitters), for tests.
pub fn embedded_emitters() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    emitter: String,
    #[allow(dead_code)]
    generated_by: String,
    entries: Vec<Family>,
}

/// Where a family was read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The repository, or the `pip download` line of the wheel.
    pub input: String,
    /// The commit or version.
    pub at: String,
    /// file:line (or the file and the index of the string in a binary).
    #[serde(rename = "where")]
    pub at_file: String,
    /// False where the emitter's source could not be brought here and the text is cited.
    pub mined: bool,
}

/// One message family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub id: String,
    pub emitter: String,
    #[serde(default)]
    pub versions: String,
    pub source: Source,
    pub level: String,
    /// The emitter's format string, as in its source.
    pub format: String,
    /// The type of each hole of the format.
    #[serde(default)]
    pub holes: Vec<String>,
    /// What the first hole is printed as in the family this entry stands for.
    #[serde(default)]
    pub value: Option<String>,
    /// Literal pieces, normalised, in order.
    #[serde(default)]
    pub pieces: Vec<String>,
    /// How the emitter prints the family when its format is printed inside another (a shell's
    /// job line around the signal's text).
    #[serde(default)]
    pub shape: Option<String>,
    /// The whole format (or shape) as a regex over a normalised line, holes typed: required as
    /// well as the pieces where it is given.
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(skip)]
    compiled: std::sync::OnceLock<Option<regex::Regex>>,
    /// For a signal's text: the signal (its category is explain-catalog/codes.yaml's).
    #[serde(default)]
    pub signal: Option<String>,
    /// Key words for a reworded short text.
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default = "default_max_words")]
    pub keys_max_words: usize,
    /// A category name of design.md.
    pub category: String,
    /// The explain signature whose explanation applies.
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub fix: Option<String>,
    /// For a status code of an API's enum (`code_tables:` of the mapping: Vulkan's VkResult,
    /// DXGI's HRESULTs, NVENCSTATUS): the code as its header defines it.
    #[serde(default)]
    pub code: Option<ApiCode>,
}

/// A status code as its API's header defines it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiCode {
    /// The enum or type ("VkResult", "HRESULT", "NVENCSTATUS").
    #[serde(rename = "enum")]
    pub enum_type: String,
    pub name: String,
    /// As the header writes it: "-4", "0x887A0005", "10".
    pub value: String,
    /// The code of which this name is an alias (VK_ERROR_OUT_OF_POOL_MEMORY_KHR).
    #[serde(default)]
    pub alias_of: Option<String>,
    /// The description its header (or the registry the header is generated from) gives.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub text_source: Option<String>,
}

impl ApiCode {
    /// The value as a number (a hexadecimal HRESULT as its unsigned 32 bits).
    pub fn number(&self) -> Option<i64> {
        match self
            .value
            .strip_prefix("0x")
            .or_else(|| self.value.strip_prefix("0X"))
        {
            Some(h) => i64::from_str_radix(h, 16).ok(),
            None => self.value.parse().ok(),
        }
    }
}

fn default_max_words() -> usize {
    10
}

impl Family {
    /// Whether a normalised line shows this family: its pieces in order (and its regex, where
    /// it has one).
    pub fn matches_pieces(&self, n: &str) -> bool {
        if self.pieces.is_empty() {
            return false;
        }
        if let Some(rx) = &self.regex {
            let re = self
                .compiled
                .get_or_init(|| regex::Regex::new(rx).ok())
                .as_ref();
            if !re.is_some_and(|r| r.is_match(n)) {
                return false;
            }
        }
        let mut at = 0;
        for p in &self.pieces {
            match n.get(at..).and_then(|rest| rest.find(p.as_str())) {
                Some(i) => at += i + p.len(),
                None => return false,
            }
        }
        true
    }

    /// Whether a short normalised line says this family in other words: every key word present
    /// as a word, on a line of at most `keys_max_words` words. Numbers (a device's index, a
    /// size, a line number: "GPU #1: out of memory") are not words here.
    pub fn matches_keys(&self, n: &str) -> bool {
        if self.keys.is_empty() {
            return false;
        }
        let words: Vec<&str> = n
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        if words.is_empty() || words.len() > self.keys_max_words {
            return false;
        }
        self.keys.iter().all(|k| words.contains(&k.as_str()))
    }

    /// The longest piece: the literal a search looks for before it checks the rest.
    pub fn anchor(&self) -> Option<&str> {
        self.pieces
            .iter()
            .max_by_key(|p| p.len())
            .map(String::as_str)
    }
}

/// Every embedded family, in file order (files sorted by emitter). A file that does not parse is
/// caught by the tests; here it gives no families rather than a panic. The families' regexes are
/// compiled when a line first needs them (compiling all of them here was 7 M instructions of
/// every `explain` start); [`load`], which the tests call, compiles each to check it, and one
/// that does not compile matches nothing.
pub fn families() -> &'static [Family] {
    static F: std::sync::OnceLock<Vec<Family>> = std::sync::OnceLock::new();
    F.get_or_init(|| load_with(false).unwrap_or_default())
}

/// The embedded families, or every error found in them (each regex compiled to check it).
pub fn load() -> Result<Vec<Family>, Vec<String>> {
    load_with(true)
}

/// [`load`]; `check_regexes`: compile each family's regex and report those that do not compile.
fn load_with(check_regexes: bool) -> Result<Vec<Family>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in EMBEDDED {
        match serde_json::from_str::<File>(text) {
            Ok(f) => {
                if f.emitter != *name {
                    errors.push(format!(
                        "knowledge/messages/{name}.yaml: emitter is {:?}",
                        f.emitter
                    ));
                }
                for e in f.entries {
                    if e.pieces.is_empty() && e.keys.is_empty() {
                        errors.push(format!("{name}: {}: no pieces and no keys", e.id));
                    }
                    if let Some(Err(err)) = e
                        .regex
                        .as_deref()
                        .filter(|_| check_regexes)
                        .map(regex::Regex::new)
                    {
                        errors.push(format!("{name}: {}: bad regex: {err}", e.id));
                    }
                    out.push(e);
                }
            }
            Err(e) => errors.push(format!("knowledge/messages/{name}.yaml: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
