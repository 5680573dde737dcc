//! The commands, one module each. This module holds what several of them share: reading a
//! snapshot, loading the matrix, the `--gpu` selection, colour, and the probe → snapshot →
//! rules → report pipeline with the policy. [`config`] turns the command line into the plain
//! configuration of a run, once.

mod check;
mod children;
mod config;
mod docs;
mod explain;
mod matrix;
mod output;
mod recommend;
mod rules;
mod run;
mod snapshot;
mod stress;

pub(crate) use check::check;
pub(crate) use children::{probe_lib, probe_nvml, smoke_child};
pub(crate) use docs::{completions, man_page};
pub(crate) use explain::explain;
pub(crate) use matrix::matrix_command;
pub(crate) use recommend::recommend;
pub(crate) use rules::list_rules;
pub(crate) use run::run;
pub(crate) use snapshot::snapshot;
pub(crate) use stress::stress;

use std::path::Path;

pub use output::Output;

use crate::assume;
use crate::cli::{ColorChoice, FailOn};
use crate::matrix::Matrix;
use crate::probe;
use crate::render::GpuFilter;
use crate::report::{MatrixRef, Report, Severity};
use crate::rules::{Context, RuleOptions, Selection};
use crate::snapshot::{Snapshot, SNAPSHOT_SCHEMA};

/// Reads a snapshot file; errors name the file and the line.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, String> {
    let text =
        crate::userfile::read(path, "snapshot").map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a JSON snapshot: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    // A whole report (check --format json) holds the snapshot under "snapshot".
    let v = match v.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s.starts_with("gpudoctor.report/") => v.get("snapshot").cloned().unwrap_or(v),
        _ => v,
    };
    match v.get("schema").and_then(|s| s.as_str()) {
        Some(SNAPSHOT_SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "{}: the snapshot schema is {other:?}; this gpudoctor reads {SNAPSHOT_SCHEMA:?}",
                path.display()
            ))
        }
        None => {
            return Err(format!(
                "{}: no \"schema\" field: this is not a gpudoctor snapshot (make one with `gpudoctor snapshot -o FILE`)",
                path.display()
            ))
        }
    }
    serde_json::from_value(v).map_err(|e| {
        format!(
            "{}: the snapshot does not match {SNAPSHOT_SCHEMA}: {e}",
            path.display()
        )
    })
}

/// The matrix `--matrix` / GPUDOCTOR_MATRIX names, else an updated copy in the cache, else the
/// embedded one.
pub fn load_matrix(path: Option<&Path>) -> Result<Matrix, String> {
    let join = |errs: Vec<crate::matrix::MatrixError>| {
        errs.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    match path {
        Some(p) => Matrix::from_path(p).map_err(|e| format!("cannot use the matrix:\n  {}", join(e))),
        None => match crate::matrix_update::cached_path().filter(|p| p.is_file()) {
            Some(p) => Matrix::from_path(&p).map_err(|e| {
                format!(
                    "the updated matrix in {} is unusable (remove it to use the built-in one):\n  {}",
                    p.display(),
                    join(e)
                )
            }),
            None => Matrix::embedded().map_err(|e| format!("the built-in matrix is broken:\n  {}", join(e))),
        },
    }
}

/// One item of `--gpu`: an index as nvidia-smi numbers the GPUs, or a GPU UUID (or the start
/// of one) as nvidia-smi -L prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GpuSelector {
    Index(u32),
    Uuid(String),
}

/// What `--gpu` accepts, for its error messages.
pub(crate) const GPU_LIST_GRAMMAR: &str = "expected a comma-separated list of GPU indexes as nvidia-smi numbers them (0, 1, 2, ...) or GPU UUIDs as `nvidia-smi -L` prints them (GPU-..., or its first characters; MIG-... for a MIG instance), e.g. --gpu 0,2 or --gpu GPU-5c1b0e2a";

/// Parses `--gpu LIST` before anything is probed: every item must be an index or a UUID
/// (prefix); an empty list or item, or anything else, is an error naming what was given.
pub(crate) fn parse_gpu_list(list: &str) -> Result<Vec<GpuSelector>, String> {
    let shown = crate::sanitize::clean_line(list, 80);
    if list.trim().is_empty() {
        return Err(format!(
            "--gpu {shown:?}: the list is empty; {GPU_LIST_GRAMMAR}"
        ));
    }
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!(
                "--gpu {shown:?}: an empty item between commas; {GPU_LIST_GRAMMAR}"
            ));
        }
        if item.bytes().all(|b| b.is_ascii_digit()) {
            match item.parse::<u32>() {
                Ok(i) => out.push(GpuSelector::Index(i)),
                Err(_) => {
                    return Err(format!(
                        "--gpu {shown:?}: {item} is too large for a GPU index; {GPU_LIST_GRAMMAR}"
                    ))
                }
            }
            continue;
        }
        let upper = item.to_ascii_uppercase();
        let uuid = ["GPU-", "MIG-"]
            .iter()
            .any(|p| upper.starts_with(p) && upper.len() > p.len())
            && item
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'/');
        if !uuid {
            return Err(format!(
                "--gpu {shown:?}: {:?} is neither a GPU index nor a GPU UUID; {GPU_LIST_GRAMMAR}",
                crate::sanitize::clean_line(item, 60)
            ));
        }
        out.push(GpuSelector::Uuid(item.to_string()));
    }
    Ok(out)
}

/// `--gpu 0,2` or UUIDs → indexes, against the GPUs of the snapshot.
pub(crate) fn gpu_filter(list: Option<&str>, snap: &Snapshot) -> Result<GpuFilter, String> {
    let Some(list) = list else { return Ok(None) };
    gpu_selection(Some(&parse_gpu_list(list)?), snap)
}

/// The GPUs of the snapshot that parsed `--gpu` selectors name, as indexes.
pub(crate) fn gpu_selection(
    selectors: Option<&[GpuSelector]>,
    snap: &Snapshot,
) -> Result<GpuFilter, String> {
    let Some(selectors) = selectors else {
        return Ok(None);
    };
    let gpus = snap.gpu_list();
    if gpus.is_empty() {
        // Nothing to select from (no driver, say): the findings say why.
        return Ok(None);
    }
    let mut out = Vec::new();
    for sel in selectors {
        let found = match sel {
            GpuSelector::Index(i) => gpus.iter().find(|g| g.index == *i),
            GpuSelector::Uuid(u) => gpus.iter().find(|g| {
                g.uuid.get().is_some_and(|x| {
                    x.get(..u.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(u))
                })
            }),
        };
        match found {
            Some(g) => out.push(g.index),
            None => {
                let item = match sel {
                    GpuSelector::Index(i) => i.to_string(),
                    GpuSelector::Uuid(u) => crate::sanitize::clean_line(u, 60),
                };
                return Err(format!(
                    "--gpu {item}: no such GPU here (indexes 0..{}, or a UUID prefix)",
                    gpus.len().saturating_sub(1)
                ));
            }
        }
    }
    Ok(Some(out))
}

pub(crate) fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => {
            // Asked for: switch the Windows console to ANSI if it can be, colour either way.
            let _ = crate::outguard::ansi_console();
            true
        }
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
                && ((crate::outguard::is_terminal() && crate::outguard::ansi_console())
                    || std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0"))
        }
    }
}

/// Applies the parsed `--assume` facts to a snapshot, in order.
pub(crate) fn apply_assumptions(
    snap: &mut Snapshot,
    matrix: &Matrix,
    facts: &[(String, String)],
) -> Result<(), String> {
    facts
        .iter()
        .try_for_each(|(k, v)| assume::apply(snap, matrix, k, v).map_err(|e| e.0))
}

/// Evaluates a snapshot into a report.
pub fn evaluate(snap: Snapshot, matrix: &Matrix, opts: &RuleOptions, sel: &Selection) -> Report {
    let findings = {
        let ctx = Context {
            snap: &snap,
            matrix,
            opts,
        };
        crate::rules::evaluate(&ctx, sel)
    };
    Report::new(
        findings,
        snap,
        MatrixRef {
            version: matrix.data_version.clone(),
            source: matrix.source.clone(),
        },
    )
}

/// The report of a run: the rules, the findings of the selected GPUs (`--gpu`), and the policy's
/// severities and waivers. `left_out_by` says who left out the rules `sel` does not select
/// (the user's `--only` / `--skip`, or the command itself).
pub(crate) fn judge(
    snap: Snapshot,
    matrix: &Matrix,
    opts: &RuleOptions,
    sel: &Selection,
    gpus: &GpuFilter,
    policy: Option<&crate::policy::Policy>,
    left_out_by: &str,
) -> Report {
    let mut report = evaluate(snap, matrix, opts, sel);
    if let Some(keep) = gpus {
        report
            .findings
            .retain(|f| f.gpu.is_none_or(|g| keep.contains(&g)));
    }
    if let Some(p) = policy {
        p.apply(&mut report.findings, today());
        // What the policy adds (expired waivers) honours --only / --skip like the rules do.
        report
            .findings
            .retain(|f| crate::rules::doc(&f.rule).is_none_or(|d| sel.selects(&d)));
    }
    // What --only / --skip left out: its areas are not checked, never "ok".
    let skipped = crate::rules::all()
        .into_iter()
        .filter(|r| !sel.selects(&r.doc))
        .map(|r| crate::report::SkippedRule {
            rule: r.doc.id.to_string(),
            area: r.doc.area,
        })
        .collect();
    Report::with_skipped(
        report.findings,
        report.snapshot,
        report.matrix,
        skipped,
        left_out_by,
    )
}

/// The lowest severity that fails the run.
pub(crate) fn fail_severity(f: FailOn) -> Severity {
    match f {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    }
}

/// Days since 1970-01-01, UTC (for policy expiry dates).
pub(crate) fn today() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0)
}

/// The rule options of a run: `--expect-gpus`, then the policy's thresholds for this node's
/// class (named, or matched by hostname and GPU model).
pub(crate) fn policy_options(
    policy: Option<&crate::policy::Policy>,
    node_class: Option<&str>,
    snap: &Snapshot,
    expect_gpus: Option<u32>,
) -> Result<RuleOptions, String> {
    let Some(policy) = policy else {
        return Ok(RuleOptions {
            expect_gpus,
            ..RuleOptions::default()
        });
    };
    let host = probe::host::hostname();
    let class = policy.class(node_class, host.as_deref(), snap)?;
    let t = policy.thresholds(class);
    Ok(RuleOptions {
        expect_gpus: expect_gpus.or(t.expect_gpus),
        min_driver: t.min_driver,
        max_temperature_c: t.max_temperature_c,
        max_ecc_uncorrected: t.max_ecc_uncorrected,
    })
}

/// Writes a file the user named, safely ([`crate::safewrite`]): through a temporary file
/// renamed into place, never replacing anything but a regular file, and an existing one only
/// when `force`; `-`, `/dev/stdout` and the like are written as streams.
pub(crate) fn write_new(path: &Path, text: impl AsRef<[u8]>, force: bool) -> std::io::Result<()> {
    use crate::safewrite::Existing;
    let existing = if force {
        Existing::Replace
    } else {
        Existing::Keep
    };
    crate::safewrite::write(path, text.as_ref(), existing).map(|_| ())
}

/// The documentation of the rules a selection runs (JUnit lists each as a testcase).
pub(crate) fn selected_rules(sel: &Selection) -> Vec<crate::rules::RuleDoc> {
    crate::rules::all()
        .into_iter()
        .map(|r| r.doc)
        .filter(|d| sel.selects(d))
        .collect()
}
