//! `--format line`: the verdict and the most severe findings' titles on one line, for scripts
//! that need a reason (a Slurm drain reason, a node-problem-detector message, a provisioning
//! gate's log): `FAIL: No NVIDIA driver found; This container was started without GPU access`.
//! Waived findings are left out. One line, sanitised; the caller shortens it if it must.

use crate::report::{Mark, Report, Severity, Verdict};
use crate::sanitize;

/// How many titles to name before "(and N more)".
const NAMED: usize = 3;

pub fn render(report: &Report) -> String {
    let word = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Warn => "WARN",
        Verdict::Fail => "FAIL",
    };
    let shown: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.waived.is_none() && f.severity >= Severity::Warning)
        .map(|f| sanitize::clean_line(&f.title, 200))
        .collect();
    let mut line = if shown.is_empty() {
        format!("{word}: no issues found")
    } else {
        let mut s = format!(
            "{word}: {}",
            shown
                .iter()
                .take(NAMED)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
        if shown.len() > NAMED {
            s.push_str(&format!(" (and {} more)", shown.len() - NAMED));
        }
        s
    };
    // A pass never claims more than was checked: name what was not.
    let not_checked: Vec<&str> = report
        .areas
        .iter()
        .filter(|a| a.status == Mark::NotChecked)
        .map(|a| a.area.title())
        .collect();
    if !not_checked.is_empty() && report.verdict != Verdict::Fail {
        line.push_str(&format!(" (not checked: {})", not_checked.join(", ")));
    }
    line.push('\n');
    line
}
