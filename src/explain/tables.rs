//! The code tables of `explain`, read from `explain-catalog/codes.yaml` (built into the binary):
//! Windows NTSTATUS values and POSIX signals, each table with its sources. CUDA errors, the CUDA
//! libraries' statuses and NVML return codes are mined knowledge ([`crate::knowledge::codes`]);
//! the Xids are in knowledge/xid.yaml ([`crate::knowledge::kernel`]). The Rust that reads a
//! number in a text and turns an entry into an answer is in [`super::codes`].

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::report::{Category, Severity};

pub const CODES_SCHEMA: &str = "gpudoctor.explain-codes/1";
const EMBEDDED: (&str, &str) = (
    "explain-catalog/codes.yaml",
    include_str!("../../explain-catalog/codes.yaml"),
);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tables {
    pub schema: String,
    pub version: String,
    pub ntstatus: Table<Nt>,
    pub signals: Table<Signal>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table<T> {
    pub sources: Vec<String>,
    pub codes: Vec<T>,
}

/// A Windows NTSTATUS value ([MS-ERREF] 2.3.1).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nt {
    pub code: u32,
    pub name: String,
    pub meaning: String,
    pub causes: Vec<String>,
    pub fix: String,
    #[serde(default)]
    pub commands: Vec<String>,
}

/// A POSIX signal (x86-64 numbers), as a training job meets it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    pub num: u32,
    pub name: String,
    pub meaning: String,
    pub causes: Vec<String>,
    pub category: Category,
    pub severity: Severity,
    #[serde(default)]
    pub fix: String,
    #[serde(default)]
    pub commands: Vec<String>,
    /// Added to the meaning.
    #[serde(default)]
    pub note: String,
}

/// The built-in tables; None only if the built-in file is broken (a test loads it).
pub fn tables() -> Option<&'static Tables> {
    static T: OnceLock<Option<Tables>> = OnceLock::new();
    T.get_or_init(|| parse(EMBEDDED.0, EMBEDDED.1).ok())
        .as_ref()
}

/// Reads and checks a code-table file: its schema, sources for every table, no number listed
/// twice. Errors name the file (and the line where the YAML says).
pub fn parse(name: &str, text: &str) -> Result<Tables, Vec<String>> {
    let t: Tables = serde_saphyr::from_str(text).map_err(|e| {
        let (at, message) = crate::userfile::yaml_error(name, text, &e);
        vec![format!("{at}: {message}")]
    })?;
    let mut errors = Vec::new();
    if t.schema != CODES_SCHEMA {
        errors.push(format!(
            "{name}: schema is {:?}; this gpudoctor reads {CODES_SCHEMA:?}",
            t.schema
        ));
    }
    let mut twice = |table: &str, nums: Vec<u32>, sources: &[String]| {
        if sources.is_empty() {
            errors.push(format!("{name}: the {table} table names no source"));
        }
        let mut seen = HashSet::new();
        for n in nums {
            if !seen.insert(n) {
                errors.push(format!("{name}: {table} {n} is listed twice"));
            }
        }
    };
    twice(
        "ntstatus",
        t.ntstatus.codes.iter().map(|c| c.code).collect(),
        &t.ntstatus.sources,
    );
    twice(
        "signal",
        t.signals.codes.iter().map(|c| c.num).collect(),
        &t.signals.sources,
    );
    if errors.is_empty() {
        Ok(t)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
#[path = "tables_tests.rs"]
mod tests;
