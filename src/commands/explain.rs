//! `gpudoctor explain`.

use std::io::IsTerminal;

use super::Output;
use super::*;
use crate::cli::ExplainArgs;
use crate::probe::{self, ProbeOptions};
use crate::report::{ExitStatus, Report};
use crate::rules::{RuleOptions, Selection};

/// The built-in catalog does not load (the tests load it: this is a defect).
const NO_CATALOG: &str =
    "internal error: the built-in explain catalog does not load; please report it";
/// The built-in matrix does not load (the tests load it: this is a defect).
const NO_MATRIX: &str =
    "internal error: the built-in compatibility matrix does not load; please report it";

/// The matrix `explain` reads: the built-in one is loaded only when a matched line, a paste or
/// --with-check needs it (a log with no error never does: it was 36 M instructions at every
/// start); a matrix file given or updated is loaded now, so that its errors are said whatever
/// the input.
fn matrix_source(
    a: &ExplainArgs,
) -> Result<Box<dyn crate::explain::logscan::MatrixSource>, Output> {
    let given =
        a.matrix.is_some() || crate::matrix_update::cached_path().is_some_and(|p| p.is_file());
    if !given {
        return Ok(Box::new(crate::explain::logscan::EmbeddedMatrix::default()));
    }
    match load_matrix(a.matrix.as_deref()) {
        Ok(m) => Ok(Box::new(m)),
        Err(e) => Err(Output::tool_error(e)),
    }
}

pub(crate) fn explain(a: ExplainArgs) -> Output {
    use crate::explain::catalog::Catalog;
    use crate::explain::logscan::{CatalogSource, EmbeddedCatalog};
    use crate::explain::{render, EXPLAIN_SCHEMA};
    let matrix = match matrix_source(&a) {
        Ok(m) => m,
        Err(out) => return out,
    };
    let matrix = &*matrix;
    let loaded;
    // The built-in catalog is loaded where it is needed: a log scan loads it at its first
    // candidate line (logscan::EmbeddedCatalog).
    let catalog: &dyn CatalogSource = match &a.catalog {
        Some(p) => match Catalog::load(p) {
            Ok(c) => {
                loaded = c;
                &loaded
            }
            Err(e) => {
                return Output::tool_error(format!(
                    "the explain catalog {} is not valid:\n{}",
                    p.display(),
                    e.join("\n")
                ))
            }
        },
        None => &EmbeddedCatalog,
    };
    if a.list {
        return match catalog.catalog() {
            Some(c) => list_catalog(c),
            None => Output::tool_error(NO_CATALOG),
        };
    }
    if let Some(id) = &a.rule {
        return explain_rule(id, a.json);
    }
    // Binary data (a core dump, an image, random bytes) is no message: say so, match nothing.
    let read = match &a.log {
        Some(path) => from_log(path, matrix, catalog),
        None => from_text(&a.input, matrix, catalog),
    };
    let Explained {
        mut matches,
        label,
        input_json,
        lines,
        not_text,
    } = match read {
        Ok(e) => e,
        Err(out) => return out,
    };
    if a.with_check {
        let snap = match &a.snapshot {
            Some(p) => match read_snapshot(p) {
                Ok(s) => s,
                Err(e) => return Output::tool_error(e),
            },
            None => probe::probe_all(&ProbeOptions::default()),
        };
        let Some(matrix) = matrix.matrix() else {
            return Output::tool_error(NO_MATRIX);
        };
        let report = evaluate(snap, matrix, &RuleOptions::default(), &Selection::default());
        join_with_machine(&mut matches, &report);
    }
    if a.json {
        let mut v =
            serde_json::json!({"schema": EXPLAIN_SCHEMA, "input": input_json, "matches": matches});
        if not_text {
            v["not_text"] = serde_json::json!(true);
            // A paste's text is not shown; a log read from standard input keeps its summary.
            if a.log.is_none() && v["input"].get("log").is_none() {
                v["input"] = serde_json::json!(null);
            }
        }
        return match serde_json::to_string_pretty(&v) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    if not_text && matches.is_empty() {
        return Output::ok(
            format!(
                "{} is not text (mostly control or undecodable bytes): gpudoctor explains error messages, codes and logs, and found none in it.\n",
                if a.log.is_some() && label != "-" { label.as_str() } else { "The input" }
            ),
            ExitStatus::Healthy,
        );
    }
    Output::ok(render(&label, &matches, lines), ExitStatus::Healthy)
}

/// `--list`: the catalog's signatures, and the tables and knowledge built in.
fn list_catalog(catalog: &crate::explain::catalog::Catalog) -> Output {
    let mut s = format!(
        "{} signatures (catalog {}, {}):\n",
        catalog.signatures.len(),
        catalog.version,
        catalog.source
    );
    for g in &catalog.signatures {
        s.push_str(&format!(
            "  {:<28} {:<26} {}\n",
            g.id,
            g.category.as_str(),
            g.name
        ));
    }
    if let Some(t) = crate::explain::tables::tables() {
        s.push_str(&format!(
            "\nCode tables (built in, explain-catalog/codes.yaml {}): {} NTSTATUS values, {} signals\n",
            t.version,
            t.ntstatus.codes.len(),
            t.signals.codes.len(),
        ));
    }
    if let (Some(x), Some(e)) = (
        crate::knowledge::kernel::xid_file(),
        crate::knowledge::kernel::events_file(),
    ) {
        s.push_str(&format!(
            "Kernel driver knowledge (built in, knowledge/, NVIDIA driver {}): {} Xids, {} kernel-log events\n",
            x.source.version,
            x.entries.len(),
            e.entries.len()
        ));
    }
    s.push_str("Codes mined from their headers (knowledge/):\n");
    for e in crate::knowledge::codes::all() {
        s.push_str(&format!(
            "  {:<28} {:>4} codes ({})\n",
            e.emitter,
            e.entries.len(),
            e.enum_type
        ));
    }
    Output::ok(s, ExitStatus::Healthy)
}

/// `--rule ID`: what the rule checks, why, and its fix.
fn explain_rule(id: &str, json: bool) -> Output {
    use crate::explain::EXPLAIN_SCHEMA;
    let Some(d) = crate::rules::doc(id) else {
        let ids: Vec<&str> = crate::rules::all().iter().map(|r| r.doc.id).collect();
        return Output::tool_error(format!("no rule {id:?}; the rules are: {}", ids.join(", ")));
    };
    if json {
        let v = serde_json::json!({"schema": EXPLAIN_SCHEMA, "input": id, "matches": [{
            "kind": "rule", "code": d.id, "name": d.summary, "category": d.category.as_str(),
            "meaning": d.what(), "likely_causes": [d.why()], "fix": {"text": d.fix(), "commands": []}, "confidence": "high"}]});
        return match serde_json::to_string_pretty(&v) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    Output::ok(
        format!(
            "{} ({})\n{}\n\nWhat it does: {}\nWhy: {}\nFix: {}\n",
            d.id,
            d.category.as_str(),
            d.summary,
            d.what(),
            d.why(),
            d.fix()
        ),
        ExitStatus::Healthy,
    )
}

/// What `explain` read and found: the matches, how to name the input, the input for JSON, and
/// whether it was text at all.
struct Explained {
    matches: Vec<crate::explain::Match>,
    label: String,
    input_json: serde_json::Value,
    lines: Option<u64>,
    not_text: bool,
}

/// `--log FILE` (or `-`): the log scanned to its end.
fn from_log(
    path: &std::path::Path,
    matrix: &dyn crate::explain::logscan::MatrixSource,
    catalog: &dyn crate::explain::logscan::CatalogSource,
) -> Result<Explained, Output> {
    use crate::explain::logscan;
    let result = if path.as_os_str() == "-" {
        logscan::scan_stdin(matrix, catalog)
    } else {
        match std::fs::File::open(path) {
            Ok(f) => logscan::scan_file(f, matrix, catalog, 0),
            Err(e) => {
                return Err(Output::tool_error(format!(
                    "cannot read the log {}: {e}",
                    path.display()
                )))
            }
        }
    };
    let mut not_text = false;
    if result.as_ref().is_ok_and(|r| r.matches.is_empty()) {
        not_text = if path.as_os_str() == "-" {
            result.as_ref().is_ok_and(|r| r.not_text)
        } else {
            file_is_binary(path)
        };
    }
    match result {
        Ok(r) => Ok(Explained {
            matches: r.matches,
            label: path.display().to_string(),
            input_json: serde_json::json!({"log": path.display().to_string(), "lines": r.lines, "bytes": r.bytes}),
            lines: Some(r.lines),
            not_text,
        }),
        Err(e) => Err(Output::tool_error(format!(
            "reading {} failed: {e}",
            path.display()
        ))),
    }
}

/// The code or message given, or a paste on standard input (a log when it is long).
fn from_text(
    input: &[String],
    matrix: &dyn crate::explain::logscan::MatrixSource,
    catalog: &dyn crate::explain::logscan::CatalogSource,
) -> Result<Explained, Output> {
    use crate::explain::{explain_with, logscan};
    let mut text = input.join(" ");
    let mut scanned = None;
    // "-" alone is standard input, as for --log - (the convention of Unix tools): a script that
    // pipes a paste into `explain -` must not get the explanation of a dash.
    if input.is_empty() || (input.len() == 1 && input[0] == "-") {
        // A traceback does not fit in one quoted argument: read the paste from stdin.
        if std::io::stdin().is_terminal() {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "Paste the error (a whole traceback or log is fine), then press Ctrl-D (Ctrl-Z Enter on Windows):"
            );
        }
        // A paste is explained whole; anything longer is a log, scanned to its end.
        match logscan::read_stdin(matrix, catalog) {
            Ok(logscan::Stdin::Paste(buf)) => text = String::from_utf8_lossy(&buf).into_owned(),
            Ok(logscan::Stdin::Log(r)) => scanned = Some(r),
            Err(e) => {
                return Err(Output::tool_error(format!(
                    "could not read standard input: {e}"
                )))
            }
        }
    }
    if let Some(r) = scanned {
        let not_text = r.matches.is_empty() && r.not_text;
        return Ok(Explained {
            matches: r.matches,
            label: "standard input".to_string(),
            input_json: serde_json::json!({"log": "-", "lines": r.lines, "bytes": r.bytes}),
            lines: Some(r.lines),
            not_text,
        });
    }
    if text.trim().is_empty() {
        return Err(Output::tool_error("give a code or a message to explain (or paste it on standard input), --log FILE, or --rule RULE_ID (e.g. gpudoctor explain -1073740791)"));
    }
    let Some(matrix) = matrix.matrix() else {
        return Err(Output::tool_error(NO_MATRIX));
    };
    let Some(catalog) = catalog.catalog() else {
        return Err(Output::tool_error(NO_CATALOG));
    };
    Ok(Explained {
        matches: explain_with(&text, matrix, catalog),
        label: format!("{:?}", crate::sanitize::clean_line(&text, 80)),
        not_text: crate::explain::catalog::mostly_binary(&text),
        input_json: serde_json::json!(text),
        lines: None,
    })
}

/// Whether a log file is binary data: its first 64 KiB, read as text, is mostly not text.
fn file_is_binary(path: &std::path::Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = Vec::new();
    if f.take(64 << 10).read_to_end(&mut buf).is_err() {
        return false;
    }
    crate::explain::catalog::mostly_binary(&String::from_utf8_lossy(&buf))
}

/// `--with-check`: what this machine shows about each explained problem.
pub(crate) fn join_with_machine(matches: &mut [crate::explain::Match], report: &Report) {
    for m in matches.iter_mut() {
        let cats = crate::explain::related(m.category);
        for f in report
            .findings
            .iter()
            .filter(|f| cats.contains(&f.category))
        {
            let mut line = format!("{} {}", f.title, f.detail);
            if !f.fix.text.is_empty() {
                line.push_str(&format!(" Fix: {}", f.fix.text));
                if let Some(c) = f.fix.commands.first() {
                    line.push_str(&format!(" `{c}`"));
                }
            }
            m.machine.push(line);
        }
        if m.machine.is_empty() && m.category != crate::report::Category::ApplicationError {
            // Without a driver, "no problem found" would be false comfort.
            let no_driver = report
                .findings
                .iter()
                .any(|f| f.category == crate::report::Category::DriverMissing);
            m.machine.push(if no_driver {
                "this machine has no working NVIDIA driver, so it cannot show this problem now; run the explanation where the error happened.".to_string()
            } else {
                format!(
                    "gpudoctor check finds no {} problem on this machine now.",
                    m.category.as_str()
                )
            });
        }
    }
}
