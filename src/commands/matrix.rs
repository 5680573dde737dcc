//! `gpudoctor matrix`.

use super::Output;
use super::*;
use crate::cli::{MatrixCommand, ShowBy};
use crate::matrix::Matrix;
use crate::matrix_show::View;
use crate::report::ExitStatus;

pub(crate) fn matrix_command(c: MatrixCommand) -> Output {
    match c {
        MatrixCommand::Show { matrix, json, by } => {
            let m = match load_matrix(matrix.as_deref()) {
                Ok(m) => m,
                Err(e) => return Output::tool_error(e),
            };
            if json {
                return match serde_json::to_string_pretty(&crate::matrix_show::to_json(&m)) {
                    Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
                    Err(e) => Output::tool_error(e.to_string()),
                };
            }
            let view = by.map(|b| match b {
                ShowBy::Framework => View::Framework,
                ShowBy::Cuda => View::Cuda,
                ShowBy::Arch => View::Arch,
            });
            Output::ok(crate::matrix_show::render(&m, view), ExitStatus::Healthy)
        }
        MatrixCommand::Validate { file } => validate(&file),
        MatrixCommand::Path { matrix } => {
            let line = match matrix {
                Some(p) => format!("{} (--matrix or GPUDOCTOR_MATRIX)", p.display()),
                None => match crate::matrix_update::cached_path() {
                    Some(p) if p.is_file() => {
                        format!("{} (installed by matrix update)", p.display())
                    }
                    Some(p) => format!(
                        "embedded (built into gpudoctor; matrix update would install {})",
                        p.display()
                    ),
                    None => "embedded (built into gpudoctor)".to_string(),
                },
            };
            Output::ok(line + "\n", ExitStatus::Healthy)
        }
        MatrixCommand::Update { from, sha256 } => {
            let Some(dir) = crate::matrix_update::cache_dir() else {
                return Output::tool_error(if cfg!(windows) {
                    "no cache directory: set LOCALAPPDATA or GPUDOCTOR_CACHE_DIR"
                } else {
                    "no cache directory: set HOME, XDG_CACHE_HOME or GPUDOCTOR_CACHE_DIR"
                });
            };
            match crate::matrix_update::update(&from, sha256.as_deref(), &dir) {
                Ok(u) => Output {
                    stdout: format!(
                        "installed matrix {} (sha256 {}) as {}{}\n",
                        u.matrix.data_version,
                        u.sha256,
                        u.path.display(),
                        u.previous
                            .map(|p| format!("; the previous one is kept as {}", p.display()))
                            .unwrap_or_default()
                    ),
                    stderr: String::new(),
                    status: ExitStatus::Healthy,
                },
                Err(e) => Output::tool_error(e),
            }
        }
    }
}

/// `matrix validate`: a directory as a whole matrix; a single file against the built-in tables
/// it does not hold (a file of `compat-matrix/` refers to CUDA versions, compute capabilities
/// and drivers defined in the others).
fn validate(file: &std::path::Path) -> Output {
    let fail = |errs: Vec<crate::matrix::MatrixError>| Output {
        stdout: String::new(),
        stderr: errs.iter().map(|e| format!("{e}\n")).collect(),
        status: ExitStatus::ToolFailed,
    };
    if file.is_dir() {
        return match Matrix::from_path(file) {
            Ok(m) => {
                let total: usize = m
                    .counts()
                    .iter()
                    .filter(|(k, _)| *k != "pytorch variants")
                    .map(|(_, n)| n)
                    .sum();
                Output::ok(
                    format!(
                        "{}: valid ({total} rows, data version {})\n",
                        file.display(),
                        m.data_version
                    ),
                    ExitStatus::Healthy,
                )
            }
            Err(errs) => fail(errs),
        };
    }
    match Matrix::with_base(file, crate::matrix::EMBEDDED, "built-in ") {
        Ok((m, own)) => {
            let counts = m.counts();
            let rows: Vec<String> = own
                .iter()
                .map(|t| {
                    let n = counts.iter().find(|(k, _)| k == t).map_or(0, |(_, n)| *n);
                    format!("{n} {t}")
                })
                .collect();
            let rest: Vec<&str> = crate::matrix::TABLES
                .iter()
                .copied()
                .filter(|t| !own.contains(t))
                .collect();
            let against = if rest.is_empty() {
                String::new()
            } else {
                format!("; checked against the built-in {}", rest.join(", "))
            };
            let what = if rows.is_empty() {
                "it names no table".to_string()
            } else {
                format!("rows: {}", rows.join(", "))
            };
            Output::ok(
                format!(
                    "{}: valid ({what}, data version {}{against})\n",
                    file.display(),
                    m.data_version
                ),
                ExitStatus::Healthy,
            )
        }
        Err(errs) => fail(errs),
    }
}
