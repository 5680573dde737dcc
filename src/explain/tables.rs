//! The code tables of `explain`, read from `explain-catalog/codes.yaml` (built into the binary):
//! Windows NTSTATUS values and POSIX signals, each table with its sources. CUDA errors, the CUDA
//! libraries' statuses and NVML return codes are mined knowledge ([`crate::knowledge::codes`]);
//! the Xids are in knowledge/xid.yaml ([`crate::knowledge::kernel`]). The Rust that reads a
//! number in a text and turns an entry into an answer is in [`super::codes`].

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::vocab::{Category, Severity};

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

/// The NTSTATUS of an exit status that is a Windows error code, which a crashed process ends
/// with: 0xC0000000 to 0xCFFFFFFF, seen as a negative 32-bit number (-1073740791) or an
/// unsigned one (3221226505). 0xFFFFFFFF is exit(-1), a program's own choice, not a crash.
pub fn crash_ntstatus(n: i64) -> Option<u32> {
    let u = if (i64::from(i32::MIN)..0).contains(&n) {
        (n as i32) as u32
    } else if (0..=i64::from(u32::MAX)).contains(&n) {
        n as u32
    } else {
        return None;
    };
    (0xC000_0000..0xD000_0000).contains(&u).then_some(u)
}

/// The name of an NTSTATUS code explain's table knows ("STATUS_ACCESS_VIOLATION").
pub fn ntstatus_name(u: u32) -> Option<&'static str> {
    tables()?
        .ntstatus
        .codes
        .iter()
        .find(|n| n.code == u)
        .map(|n| n.name.as_str())
}

#[cfg(test)]
#[path = "tables_tests.rs"]
mod tests;
