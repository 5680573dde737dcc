//! `--format junit`: the report as JUnit XML for CI systems and provisioning dashboards. One
//! testsuite; one testcase per rule per GPU for rules about GPUs (GPUs, smoke, stress), one per
//! rule for the rest. A finding at or above `--fail-on` is a `<failure>` (its category as the
//! type, the fix in the text); lower ones go to `<system-out>`. A rule that had nothing to judge
//! (no GPU, smoke or stress not run, an area not probed: [`Report::nothing_to_judge`]) and found
//! nothing is `<skipped/>`, never a pass.

use std::fmt::Write;

use crate::report::{Area, Finding, Report, Severity};
use crate::vocab::RuleDoc;

/// Escapes text for XML content and attribute values, dropping characters XML 1.0 forbids.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => o.push(c),
        }
    }
    o
}

fn finding_text(f: &Finding) -> String {
    let mut t = f.detail.clone();
    if !f.fix.text.is_empty() {
        t.push_str("\nFix: ");
        t.push_str(&f.fix.text);
    }
    for c in &f.fix.commands {
        t.push_str("\n  $ ");
        t.push_str(c);
    }
    t
}

/// `suite` names the run ("gpudoctor check", "gpudoctor stress"); `rules` are those that ran.
pub fn render(report: &Report, rules: &[RuleDoc], fail_on: Severity, suite: &str) -> String {
    let gpus: Vec<u32> = report.snapshot.gpu_list().iter().map(|g| g.index).collect();
    let mut cases: Vec<String> = Vec::new();
    let (mut failures, mut total, mut skipped) = (0usize, 0usize, 0usize);
    for r in rules {
        let per_gpu = matches!(r.area, Area::Gpus | Area::Smoke | Area::Stress);
        // (GPU or none) for each testcase of this rule.
        let mut targets: Vec<Option<u32>> = if per_gpu && !gpus.is_empty() {
            gpus.iter().map(|g| Some(*g)).collect()
        } else {
            vec![None]
        };
        for f in report.findings.iter().filter(|f| f.rule == r.id) {
            if !targets.contains(&f.gpu) {
                targets.push(f.gpu);
            }
        }
        for t in targets {
            total += 1;
            let name = match t {
                Some(g) => format!("{} (GPU {g})", r.id),
                None => r.id.to_string(),
            };
            let mine: Vec<&Finding> = report
                .findings
                .iter()
                .filter(|f| f.rule == r.id && (f.gpu == t || (t.is_none() && !per_gpu)))
                .collect();
            let mut case = format!(
                "    <testcase classname=\"gpudoctor.{}\" name=\"{}\">\n",
                esc(r.category.as_str()),
                esc(&name)
            );
            // A waived finding is not a failure: it is said in <system-out> with its waiver.
            let failing: Vec<&&Finding> = mine
                .iter()
                .filter(|f| f.severity >= fail_on && f.waived.is_none())
                .collect();
            let idle = if mine.is_empty() {
                report.nothing_to_judge(r.area)
            } else {
                None
            };
            if let Some(why) = idle {
                skipped += 1;
                let _ = writeln!(case, "      <skipped message=\"{}\"/>", esc(&why));
            } else if let Some(first) = failing.first() {
                failures += 1;
                let text: Vec<String> = failing
                    .iter()
                    .map(|f| format!("{}\n{}", f.title, finding_text(f)))
                    .collect();
                let _ = writeln!(
                    case,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    esc(&first.title),
                    esc(first.category.as_str()),
                    esc(&text.join("\n\n"))
                );
            }
            let quiet = quiet_lines(&mine, fail_on);
            if !quiet.is_empty() {
                let _ = writeln!(
                    case,
                    "      <system-out>{}</system-out>",
                    esc(&quiet.join("\n"))
                );
            }
            case.push_str("    </testcase>\n");
            cases.push(case);
        }
    }
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"{}\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\">",
        esc(suite)
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
        esc(suite)
    );
    for c in cases {
        s.push_str(&c);
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// What the testcase says in `<system-out>`: its findings below `fail_on`, and waived ones with
/// their waiver.
fn quiet_lines(mine: &[&Finding], fail_on: Severity) -> Vec<String> {
    mine.iter()
        .filter(|f| f.severity < fail_on || f.waived.is_some())
        .map(|f| match &f.waived {
            Some(w) => format!(
                "[{}, waived until {} by {}: {}] {}",
                f.severity.as_str(),
                w.expires,
                w.policy,
                w.reason,
                f.title
            ),
            None => format!("[{}] {}", f.severity.as_str(), f.title),
        })
        .collect()
}
