//! The explain catalog: known error signatures as data (`explain-catalog/*.yaml`, embedded at
//! build time like `compat-matrix/`, replaceable with `--catalog` or `GPUDOCTOR_CATALOG`).
//!
//! A signature is recognised by any of its `patterns`: literal fragments matched
//! case-insensitively and whitespace-tolerantly (both the line and the pattern are lowercased and
//! every run of whitespace becomes one space), optionally narrowed by a `regex` (on the same
//! normalised line) and vetoed by `unless` fragments. What an `enrich`er extracts (sizes,
//! versions, sm_XX, codes) sharpens the answer when present and is never required: without it
//! the catalog's own text stands. `rank` orders causes in a pasted text: a root cause (an Xid, a
//! driver mismatch) leads its consequences (a CUDA error, "CUDA kernel errors might be
//! asynchronously reported").

use std::collections::HashSet;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::report::{Category, Fix, Severity};

pub const CATALOG_SCHEMA: &str = "gpudoctor.explain-catalog/1";

/// The catalog files built into the binary.
const EMBEDDED: &[(&str, &str)] = &[(
    "explain-catalog/signatures.yaml",
    include_str!("../../explain-catalog/signatures.yaml"),
)];

/// The enrichers a signature may name (the Rust that computes: src/explain/signatures.rs).
pub const ENRICHERS: &[&str] = &[
    "torch_oom",
    "driver_too_old",
    "sm_incompatible",
    "cudnn_loaded",
    "missing_library",
    "nccl",
    "exit_code",
    "cuda_text",
    "cuda_code",
    "kernel_log",
    "xid",
    "nvml_code",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    schema: String,
    version: String,
    signatures: Vec<Spanned<SignatureSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixSpec {
    text: String,
    #[serde(default)]
    commands: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub source: String,
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureSpec {
    id: String,
    category: String,
    name: String,
    #[serde(default = "default_rank")]
    rank: u8,
    #[serde(default)]
    severity: Option<String>,
    #[serde(default)]
    ambiguous: bool,
    #[serde(default)]
    also: Vec<String>,
    patterns: Vec<String>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    enrich: Option<String>,
    meaning: String,
    #[serde(default)]
    causes: Vec<String>,
    #[serde(default)]
    tell_apart: Vec<String>,
    fix: FixSpec,
    sources: Vec<String>,
    examples: Vec<Example>,
}

fn default_rank() -> u8 {
    50
}

/// One signature, validated.
#[derive(Debug)]
pub struct Signature {
    pub id: String,
    pub category: Category,
    pub name: String,
    pub rank: u8,
    pub severity: Severity,
    pub ambiguous: bool,
    /// For an ambiguous symptom: the categories of its less common causes.
    pub also: Vec<Category>,
    pub patterns: Vec<String>,
    pub regex: Option<Regex>,
    pub unless: Vec<String>,
    pub enrich: Option<String>,
    pub meaning: String,
    pub causes: Vec<String>,
    pub tell_apart: Vec<String>,
    pub fix: Fix,
    pub sources: Vec<String>,
    pub examples: Vec<Example>,
    /// Where it was read ("explain-catalog/signatures.yaml:120").
    pub at: String,
}

/// The whole catalog with its matcher.
#[derive(Debug)]
pub struct Catalog {
    pub version: String,
    pub source: String,
    pub signatures: Vec<Signature>,
    /// Over every normalised pattern; `owner[i]` is pattern i's signature.
    automaton: AhoCorasick,
    owner: Vec<usize>,
    /// [`Catalog::prefilter_groups`], computed once.
    prefilter: std::sync::OnceLock<Vec<Vec<String>>>,
}

/// Lowercases and collapses whitespace (and typographic quotes) so that "CUDA  out of\tmemory"
/// and "cuda out of memory" are the same text.
pub fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '`' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            c => c,
        };
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    out
}

fn category(s: &str) -> Option<Category> {
    Category::ALL
        .into_iter()
        .find(|c| c.as_str() == s && *c != Category::MatrixStale)
}

impl Catalog {
    /// The catalog built into the binary.
    pub fn embedded() -> Result<Catalog, Vec<String>> {
        Catalog::from_texts(
            "embedded",
            EMBEDDED.iter().map(|(n, t)| (n.to_string(), t.to_string())),
        )
    }

    /// A catalog file (or a directory of `*.yaml` files) given by the user.
    pub fn load(path: &std::path::Path) -> Result<Catalog, Vec<String>> {
        let mut files = Vec::new();
        if path.is_dir() {
            let rd =
                std::fs::read_dir(path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
            let mut names: Vec<_> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            names.sort();
            for p in names {
                let t = crate::userfile::read(&p, "the explain catalog").map_err(|e| vec![e])?;
                // A copy of explain-catalog/ holds the code tables too: they are built in.
                let codes = |l: &str| {
                    l.trim()
                        .strip_prefix("schema:")
                        .is_some_and(|v| v.trim() == super::tables::CODES_SCHEMA)
                };
                if t.lines().any(codes) {
                    continue;
                }
                files.push((p.display().to_string(), t));
            }
            if files.is_empty() {
                return Err(vec![format!(
                    "{}: no .yaml files in this directory",
                    path.display()
                )]);
            }
        } else {
            let t = crate::userfile::read(path, "the explain catalog").map_err(|e| vec![e])?;
            files.push((path.display().to_string(), t));
        }
        Catalog::from_texts(&path.display().to_string(), files.into_iter())
    }

    fn from_texts(
        source: &str,
        files: impl Iterator<Item = (String, String)>,
    ) -> Result<Catalog, Vec<String>> {
        let mut errors = Vec::new();
        let mut sigs = Vec::new();
        let mut version = String::new();
        let mut ids = HashSet::new();
        for (name, text) in files {
            let file: CatalogFile = match serde_saphyr::from_str(&text) {
                Ok(f) => f,
                Err(e) => {
                    let (at, message) = crate::userfile::yaml_error(&name, &text, &e);
                    errors.push(format!("{at}: {message}"));
                    continue;
                }
            };
            if file.schema != CATALOG_SCHEMA {
                errors.push(format!(
                    "{name}: schema is {:?}; this gpudoctor reads {CATALOG_SCHEMA:?}",
                    file.schema
                ));
                continue;
            }
            version = file.version;
            for s in file.signatures {
                let at = format!("{name}:{}", s.referenced.line());
                match validate(s.value, &at) {
                    Ok(sig) => {
                        if !ids.insert(sig.id.clone()) {
                            errors.push(format!("{at}: signature id {:?} is used twice", sig.id));
                        }
                        sigs.push(sig);
                    }
                    Err(e) => errors.extend(e),
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut pats = Vec::new();
        let mut owner = Vec::new();
        for (i, s) in sigs.iter().enumerate() {
            for p in &s.patterns {
                pats.push(p.clone());
                owner.push(i);
            }
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&pats)
            .map_err(|e| vec![format!("{source}: {e}")])?;
        Ok(Catalog {
            version,
            source: source.to_string(),
            signatures: sigs,
            automaton,
            owner,
            prefilter: std::sync::OnceLock::new(),
        })
    }

    /// The signatures a line matches (indexes into `signatures`), in catalog order.
    pub fn matches(&self, line: &str) -> Vec<usize> {
        let n = normalise(line);
        self.matches_normalised(&n)
    }

    /// [`Catalog::matches`] of a line already normalised.
    pub fn matches_normalised(&self, n: &str) -> Vec<usize> {
        let mut hit: Vec<usize> = self
            .automaton
            .find_overlapping_iter(n)
            .filter_map(|m| self.owner.get(m.pattern().as_usize()).copied())
            .collect();
        hit.sort_unstable();
        hit.dedup();
        hit.retain(|&i| {
            let Some(s) = self.signatures.get(i) else {
                return false;
            };
            if s.unless.iter().any(|u| n.contains(u.as_str())) {
                return false;
            }
            s.regex.as_ref().is_none_or(|r| r.is_match(n))
        });
        hit
    }

    /// The literals a log scanner looks for in a lowercased log before it normalises a line and
    /// matches it in full: a small cover of the catalog's patterns (every pattern contains one),
    /// chosen greedily from their 4- to 6-byte pieces, leaving out pieces of ordinary log and
    /// English text (`BACKGROUND`) that would make every line a candidate. Grouped by
    /// [`PREFILTER_GROUP`] for the vectorised (Teddy) searches.
    pub fn prefilter_groups(&self) -> &[Vec<String>] {
        self.prefilter.get_or_init(|| self.cover())
    }

    fn cover(&self) -> Vec<Vec<String>> {
        let mut pats: Vec<&str> = self
            .signatures
            .iter()
            .flat_map(|s| s.patterns.iter().map(String::as_str))
            .collect();
        pats.sort_unstable();
        pats.dedup();
        let pieces: Vec<Vec<String>> = pats
            .iter()
            .map(|p| {
                let mut g: Vec<String> = Vec::new();
                for w in p.split(' ') {
                    let chars: Vec<(usize, char)> = w.char_indices().collect();
                    for n in 4..=6 {
                        for i in 0..chars.len().saturating_sub(n - 1) {
                            let (Some(&(a, _)), end) = (chars.get(i), chars.get(i + n)) else {
                                continue;
                            };
                            let b = end.map_or(w.len(), |&(b, _)| b);
                            let x = w.get(a..b).unwrap_or("");
                            let numeric = x.chars().all(|c| c.is_ascii_digit() || c == '.');
                            if !x.is_empty() && !numeric && !BACKGROUND.contains(x) {
                                g.push(x.to_string());
                            }
                        }
                    }
                }
                if g.is_empty() {
                    g.push((*p).to_string());
                }
                g.sort_unstable();
                g.dedup();
                g
            })
            .collect();
        let mut uncovered: Vec<usize> = (0..pats.len()).collect();
        let mut chosen: Vec<String> = Vec::new();
        while !uncovered.is_empty() {
            let mut count: std::collections::BTreeMap<&str, usize> = Default::default();
            for &i in &uncovered {
                for x in pieces.get(i).into_iter().flatten() {
                    *count.entry(x.as_str()).or_default() += 1;
                }
            }
            // Most patterns covered; then the longer piece; then the first in order.
            let Some(best) = count
                .iter()
                .max_by(|a, b| {
                    a.1.cmp(b.1)
                        .then(a.0.len().cmp(&b.0.len()))
                        .then(b.0.cmp(a.0))
                })
                .map(|(k, _)| k.to_string())
            else {
                break;
            };
            uncovered.retain(|&i| !pieces.get(i).is_some_and(|g| g.contains(&best)));
            chosen.push(best);
        }
        // Groups of at most PREFILTER_GROUP, the shorter literals together (a group's
        // fingerprint is as long as its shortest literal).
        chosen.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        chosen
            .chunks(PREFILTER_GROUP)
            .map(<[String]>::to_vec)
            .collect()
    }
}

/// Literals a vectorised (Teddy) search takes at once. Teddy puts them in 8 or 16 buckets by a
/// fingerprint of their first bytes, and every fingerprint hit is verified: the fewer literals
/// in a bucket, the fewer false hits. On the 2 GiB benchmark log (scripts/bench-explain.sh,
/// 107 literals sorted by length) groups of 64 took 1.12 s, of 45 0.84 s, of 36 0.87 s, of 32
/// (four passes) 0.87 s, of 22 0.88 s and of 16 1.0 s (docs/benchmarks.md); at most 64 in any
/// case (the crate's limit for one search).
pub const PREFILTER_GROUP: usize = 45;

/// Words of ordinary training logs and English prose: pieces of them are not used as log-scan
/// literals (a piece such as "loss" or "tion" would make almost every line a candidate).
const BACKGROUND: &str = "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part info debug warning warn epoch step loss train model data batch iter lr tokens samples throughput validation accuracy loading saving checkpoint using device starting finished done ok elapsed total average mean std value values config setup init initialized process rank world size node host port train.py grad_norm tokens/s http https www com org github python import return print self def class local lib site-packages file line module";

fn validate(s: SignatureSpec, at: &str) -> Result<Signature, Vec<String>> {
    let mut errors = Vec::new();
    let id = s.id.clone();
    let here = |what: String| format!("{at}: signature {id:?}: {what}");
    let cat = category(&s.category);
    if cat.is_none() {
        errors.push(here(format!(
            "unknown category {:?} (design.md lists them)",
            s.category
        )));
    }
    let mut also = Vec::new();
    for a in &s.also {
        match category(a) {
            Some(c) => also.push(c),
            None => errors.push(here(format!("unknown category {a:?} in also"))),
        }
    }
    if !also.is_empty() && (!s.ambiguous || s.tell_apart.is_empty()) {
        errors.push(here(
            "`also` is for ambiguous signatures with `tell_apart`".into(),
        ));
    }
    let severity = match s.severity.as_deref() {
        None | Some("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        Some("info") => Severity::Info,
        Some(o) => {
            errors.push(here(format!(
                "severity {o:?} is not error, warning or info"
            )));
            Severity::Error
        }
    };
    let patterns: Vec<String> = s.patterns.iter().map(|p| normalise(p)).collect();
    if patterns.is_empty() || patterns.iter().any(|p| p.len() < 3) {
        errors.push(here(
            "needs at least one pattern, each of 3 characters or more".into(),
        ));
    }
    let regex = match s.regex.as_deref().map(Regex::new) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            errors.push(here(format!(
                "bad regex: {}",
                crate::sanitize::clean_line(&e.to_string(), 200)
            )));
            None
        }
    };
    if let Some(e) = &s.enrich {
        if !ENRICHERS.contains(&e.as_str()) {
            errors.push(here(format!(
                "unknown enricher {e:?} (known: {})",
                ENRICHERS.join(", ")
            )));
        }
    }
    if s.sources.is_empty() || s.sources.iter().any(|u| !u.starts_with("https://")) {
        errors.push(here("needs at least one https:// source".into()));
    }
    if s.examples.is_empty() {
        errors.push(here(
            "needs at least one real example text with its source".into(),
        ));
    }
    for e in &s.examples {
        if !e.source.starts_with("https://") {
            errors.push(here(format!(
                "example source {:?} is not an https:// URL",
                e.source
            )));
        }
    }
    if s.meaning.trim().is_empty() || s.fix.text.trim().is_empty() {
        errors.push(here("needs a meaning and a fix".into()));
    }
    let Some(category) = cat else {
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Signature {
        id: s.id,
        category,
        name: s.name,
        rank: s.rank,
        severity,
        ambiguous: s.ambiguous,
        also,
        patterns,
        regex,
        unless: s.unless.iter().map(|u| normalise(u)).collect(),
        enrich: s.enrich,
        meaning: s.meaning,
        causes: s.causes,
        tell_apart: s.tell_apart,
        fix: Fix {
            text: s.fix.text,
            commands: s.fix.commands,
            ..Default::default()
        },
        sources: s.sources,
        examples: s.examples,
        at: at.to_string(),
    })
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
