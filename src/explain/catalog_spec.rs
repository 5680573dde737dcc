//! The explain catalog's files as they are written (`explain-catalog/*.yaml`), before
//! validation; shared with `build.rs`, which reads the built-in catalog's YAML at build time and
//! writes it as JSON with each signature's line (`BuiltFile`), so that a start of `explain`
//! parses JSON (a few million instructions) instead of YAML (56 M). Standard library and serde
//! only: `build.rs` includes this file.

use serde::{Deserialize, Serialize};

/// A catalog file as YAML, each signature with where it was read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    pub schema: String,
    pub version: String,
    pub signatures: Vec<serde_saphyr::Spanned<SignatureSpec>>,
}

/// The same file as build.rs writes it: JSON, each signature with its line in the YAML.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltFile {
    pub schema: String,
    pub version: String,
    pub signatures: Vec<BuiltSignature>,
}

/// A signature of a [`BuiltFile`] and the line of the YAML it was read at.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltSignature {
    pub line: u64,
    pub spec: SignatureSpec,
}

impl From<CatalogFile> for BuiltFile {
    fn from(f: CatalogFile) -> BuiltFile {
        BuiltFile {
            schema: f.schema,
            version: f.version,
            signatures: f
                .signatures
                .into_iter()
                .map(|s| BuiltSignature {
                    line: s.referenced.line(),
                    spec: s.value,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FixSpec {
    pub text: String,
    #[serde(default)]
    pub commands: Vec<String>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub source: String,
    pub text: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureSpec {
    pub id: String,
    pub category: String,
    pub name: String,
    #[serde(default = "default_rank")]
    pub rank: u8,
    #[serde(default)]
    pub severity: Option<String>,
    #[serde(default)]
    pub ambiguous: bool,
    #[serde(default)]
    pub evidence: bool,
    #[serde(default)]
    pub also: Vec<String>,
    pub patterns: Vec<String>,
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default)]
    pub unless: Vec<String>,
    #[serde(default)]
    pub enrich: Option<String>,
    pub meaning: String,
    #[serde(default)]
    pub causes: Vec<String>,
    #[serde(default)]
    pub tell_apart: Vec<String>,
    pub fix: FixSpec,
    pub sources: Vec<String>,
    pub examples: Vec<Example>,
}

fn default_rank() -> u8 {
    50
}
