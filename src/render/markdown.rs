//! `--format markdown`: a report to paste into a bug report or an issue.

use super::{areas, summary_line, GpuFilter};
use crate::report::{Report, Verdict};
use crate::sanitize;

pub fn render(report: &Report, gpus: &GpuFilter) -> String {
    let views = areas(report, gpus);
    let verdict = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Warn => "WARN",
        Verdict::Fail => "FAIL",
    };
    let mut out = format!(
        "## gpudoctor check: {verdict}\n\ngpudoctor {} · matrix {} ({})\n\n| | Area | Found |\n|---|---|---|\n",
        report.tool.version, report.matrix.version, report.matrix.source
    );
    for v in &views {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            v.mark.symbol(),
            v.area.title(),
            cell(&v.headline)
        ));
    }
    out.push_str(&format!("\n{}\n", summary_line(report, &views)));
    if !report.findings.is_empty() {
        out.push_str("\n### Findings\n");
        for f in &report.findings {
            out.push_str(&format!(
                "\n#### {} {}: {}\n\n`{}` · `{}`{}\n\n{}\n",
                match f.severity {
                    crate::report::Severity::Error => "✗",
                    crate::report::Severity::Warning => "!",
                    crate::report::Severity::Info => "i",
                },
                f.severity.as_str(),
                text(&f.title),
                f.rule,
                f.category.as_str(),
                f.gpu.map(|g| format!(" · GPU {g}")).unwrap_or_default(),
                text(&f.detail)
            ));
            if !f.fix.text.is_empty() {
                out.push_str(&format!("\n**Fix:** {}\n", text(&f.fix.text)));
            }
            if !f.fix.commands.is_empty() {
                out.push_str("\n```sh\n");
                for c in &f.fix.commands {
                    out.push_str(&sanitize::clean_line(c, 2000).replace("```", "'''"));
                    out.push('\n');
                }
                out.push_str("```\n");
            }
            for l in &f.links {
                out.push_str(&format!("\nSee: <{}>\n", sanitize::clean_line(l, 500)));
            }
        }
    }
    out.push_str("\n### Machine\n\n");
    for v in &views {
        if v.facts.is_empty() {
            continue;
        }
        out.push_str(&format!("- **{}**\n", v.area.title()));
        for f in &v.facts {
            out.push_str(&format!("  - {}\n", text(f)));
        }
    }
    out.push_str("\n<details><summary>Snapshot (JSON)</summary>\n\n```json\n");
    match serde_json::to_string_pretty(&report.snapshot) {
        Ok(j) => out.push_str(&j.replace("```", "'''")),
        Err(e) => out.push_str(&format!("(could not serialise the snapshot: {e})")),
    }
    out.push_str("\n```\n\n</details>\n");
    out
}

/// Text in a Markdown paragraph: cleaned, with HTML-ish angle brackets neutralised.
fn text(s: &str) -> String {
    sanitize::clean_line(s, 4000)
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Text in a table cell.
fn cell(s: &str) -> String {
    text(s).replace('|', "\\|")
}
