//! The doctor-style human output: one line per area with [✓] [!] [✗] [?], indented facts and
//! findings with fixes to paste, one summary line. Colour only when asked for (the caller
//! decides from --color, the TTY and NO_COLOR).

use super::{areas, summary_line, GpuFilter, Mark};
use crate::report::{Report, Severity};
use crate::sanitize;

/// Options of the human renderer.
#[derive(Debug, Clone, Default)]
pub struct HumanOptions {
    pub color: bool,
    /// Show facts under areas that have no finding (verbose); facts of areas with findings are
    /// always shown.
    pub all_facts: bool,
    pub gpus: GpuFilter,
    /// Only these areas (the stress report shows its own); None for all.
    pub areas: Option<Vec<crate::report::Area>>,
}

struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn mark(&self, m: Mark) -> String {
        let code = match m {
            Mark::Ok => "32",
            Mark::Warning => "33",
            Mark::Error => "31",
            Mark::Unknown => "35",
            Mark::Waived => "36",
            Mark::NotChecked => "2",
        };
        format!("[{}]", self.wrap(code, m.symbol()))
    }
    fn sev(&self, s: Severity) -> String {
        match s {
            Severity::Error => self.wrap("31", "✗"),
            Severity::Warning => self.wrap("33", "!"),
            Severity::Info => self.wrap("36", "i"),
        }
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
}

pub fn render(report: &Report, opts: &HumanOptions) -> String {
    let p = Paint(opts.color);
    let mut views = areas(report, &opts.gpus);
    if let Some(only) = &opts.areas {
        views.retain(|v| only.contains(&v.area));
    }
    let mut out = String::new();
    for v in &views {
        out.push_str(&format!(
            "{} {}: {}\n",
            p.mark(v.mark),
            p.bold(v.area.title()),
            clean(&v.headline)
        ));
        let show_facts = opts.all_facts
            || !v.findings.is_empty()
            || matches!(v.mark, Mark::Unknown | Mark::NotChecked);
        // Why it is not checked or could not tell, unless the headline says it already.
        if let Some(why) = v.why.as_deref().filter(|w| !v.headline.contains(w)) {
            out.push_str(&format!("    {}\n", p.dim(&format!("• {}", clean(why)))));
        }
        if show_facts {
            for f in &v.facts {
                out.push_str(&format!("    {}\n", p.dim(&format!("• {}", clean(f)))));
            }
        }
        for f in &v.findings {
            if let (Some(g), Some(sel)) = (f.gpu, &opts.gpus) {
                if !sel.contains(&g) {
                    continue;
                }
            }
            out.push_str(&format!(
                "    {} {}\n",
                p.sev(f.severity),
                p.bold(&clean(&f.title))
            ));
            if let Some(w) = &f.waived {
                out.push_str(&format!(
                    "      Waived until {} by {}: {}\n",
                    clean(&w.expires),
                    clean(&w.policy),
                    clean(&w.reason)
                ));
            }
            if !f.detail.is_empty() {
                out.push_str(&format!("      {}\n", clean(&f.detail)));
            }
            if !f.fix.text.is_empty() {
                out.push_str(&format!("      Fix: {}\n", clean(&f.fix.text)));
            }
            for c in &f.fix.commands {
                out.push_str(&format!("        $ {}\n", clean(c)));
            }
            for l in &f.links {
                out.push_str(&format!("      See: {}\n", clean(l)));
            }
            out.push_str(&format!(
                "      {}\n",
                p.dim(&format!("rule {} · {}", f.rule, f.category.as_str()))
            ));
        }
    }
    out.push('\n');
    let line = summary_line(report, &views);
    let line = if report.summary.errors > 0 {
        p.wrap("31;1", &line)
    } else if report.summary.warnings > 0 {
        p.wrap("33;1", &line)
    } else {
        p.wrap("32;1", &line)
    };
    out.push_str(&line);
    out.push('\n');
    out
}

fn clean(s: &str) -> String {
    sanitize::clean_line(s, 2000)
}
