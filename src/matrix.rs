//! The compatibility matrix: versioned YAML in `compat-matrix/`, embedded at build time, every
//! row with its `source:`. `--matrix FILE` or `GPUDOCTOR_MATRIX` replaces it. This module holds
//! the loader and the GPU table (model → compute capability → architecture); the compatibility
//! tables join it as the matrix grows.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const MATRIX_SCHEMA: &str = "gpudoctor.matrix/1";

/// The embedded files, in load order.
const EMBEDDED: &[(&str, &str)] = &[(
    "compat-matrix/gpus.yaml",
    include_str!("../compat-matrix/gpus.yaml"),
)];

/// One matrix file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    schema: String,
    data_version: String,
    #[serde(default)]
    gpus: Vec<GpuRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRow {
    /// Compute capability, "8.6".
    pub cc: String,
    pub arch: String,
    pub names: Vec<String>,
    pub source: String,
}

/// The loaded matrix.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub data_version: String,
    /// "embedded", or the file it came from.
    pub source: String,
    pub gpus: Vec<GpuRow>,
}

/// Why a matrix could not be loaded (exit 2).
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

impl Matrix {
    /// The matrix built into the binary.
    pub fn embedded() -> Result<Matrix, MatrixError> {
        let mut m = Matrix {
            data_version: String::new(),
            source: "embedded".to_string(),
            gpus: Vec::new(),
        };
        for (name, text) in EMBEDDED {
            m.merge(name, text)?;
        }
        Ok(m)
    }

    /// A matrix from a file (or every .yaml file of a directory).
    pub fn from_path(path: &Path) -> Result<Matrix, MatrixError> {
        let shown = path.display().to_string();
        let mut files: Vec<PathBuf> = Vec::new();
        if path.is_dir() {
            let rd = std::fs::read_dir(path).map_err(|e| MatrixError {
                path: shown.clone(),
                message: format!("cannot read the directory: {e}"),
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
        let mut m = Matrix {
            data_version: String::new(),
            source: shown.clone(),
            gpus: Vec::new(),
        };
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| MatrixError {
                path: f.display().to_string(),
                message: format!("cannot read it: {e}"),
            })?;
            m.merge(&f.display().to_string(), &text)?;
        }
        Ok(m)
    }

    fn merge(&mut self, name: &str, text: &str) -> Result<(), MatrixError> {
        let file: MatrixFile = serde_saphyr::from_str(text).map_err(|e| MatrixError {
            path: name.to_string(),
            message: crate::sanitize::clean_line(&e.to_string(), 600),
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
        for (i, row) in file.gpus.iter().enumerate() {
            if !valid_cc(&row.cc) || row.source.trim().is_empty() || row.names.is_empty() {
                return Err(MatrixError {
                    path: name.to_string(),
                    message: format!(
                        "gpus[{i}] (cc {:?}) needs a compute capability like \"8.6\", names and a source",
                        row.cc
                    ),
                });
            }
        }
        if file.data_version > self.data_version {
            self.data_version = file.data_version;
        }
        self.gpus.extend(file.gpus);
        Ok(())
    }

    /// The table row for a GPU name as NVML or a person writes it ("NVIDIA A100-SXM4-80GB",
    /// "RTX 3070", "Tesla K80").
    pub fn gpu(&self, name: &str) -> Option<&GpuRow> {
        let words = name_words(name);
        let mut best: Option<(&GpuRow, usize)> = None;
        for row in &self.gpus {
            for pat in &row.names {
                let pw = name_words(pat);
                if !pw.is_empty()
                    && contains_run(&words, &pw)
                    && best.is_none_or(|(_, n)| pw.len() > n)
                {
                    best = Some((row, pw.len()));
                }
            }
        }
        best.map(|(r, _)| r)
    }

    /// The architecture of a compute capability ("8.6" → "Ampere").
    pub fn arch_of_cc(&self, cc: &str) -> Option<&str> {
        self.gpus
            .iter()
            .find(|r| r.cc == cc)
            .map(|r| r.arch.as_str())
    }
}

/// "X.Y" with small numbers.
pub fn valid_cc(s: &str) -> bool {
    let Some((a, b)) = s.split_once('.') else {
        return false;
    };
    let ok = |p: &str| !p.is_empty() && p.len() <= 2 && p.bytes().all(|c| c.is_ascii_digit());
    ok(a) && ok(b)
}

fn name_words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_' || c == '/')
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
