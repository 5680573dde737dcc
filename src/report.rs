//! Findings, the report and the exit status: plain data made by rules, read by renderers.

use serde::{Deserialize, Serialize};

use crate::snapshot::{unprobed, Snapshot};
pub use crate::vocab::{Area, Category, Finding, Fix, Severity, Waived};

pub const REPORT_SCHEMA: &str = "gpudoctor.report/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRef {
    pub version: String,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Findings a policy waived (not counted above).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waived: usize,
}

/// The doctor mark of an area: what gpudoctor may claim about it. Decided once, in
/// [`Report::new`], so that every renderer (the human marks, Markdown, JSON, JUnit, Prometheus,
/// the one-line verdict) says the same. Nothing is `Ok` unless it was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Checked, and nothing at warning or above.
    Ok,
    Warning,
    Error,
    /// Probed, but gpudoctor could not tell (a probe failed, a version newer than the matrix).
    Unknown,
    /// Its only problems are waived by a policy.
    Waived,
    /// Not checked: not probed (`--no-probe`, smoke tests not run) or rules left out by
    /// `--only` / `--skip`.
    NotChecked,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Ok => "✓",
            Mark::Warning => "!",
            Mark::Error => "✗",
            Mark::Unknown => "?",
            Mark::Waived => "~",
            Mark::NotChecked => "-",
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Ok => "ok",
            Mark::Warning => "warning",
            Mark::Error => "error",
            Mark::Unknown => "unknown",
            Mark::Waived => "waived",
            Mark::NotChecked => "not_checked",
        }
    }
}

/// One area's mark and, when it is not `Ok`/`Warning`/`Error`, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AreaStatus {
    pub area: Area,
    pub status: Mark,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Who left rules out, in "N rule(s) left out by ...": the user's flags (`check`).
pub const LEFT_OUT_BY_FLAGS: &str = "--only/--skip";

/// A rule `--only` / `--skip` (or a command that runs only its own rules) left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRule {
    pub rule: String,
    pub area: Area,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `check` found: the report of design.md's JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub tool: Tool,
    pub matrix: MatrixRef,
    pub verdict: Verdict,
    pub summary: Summary,
    pub findings: Vec<Finding>,
    /// Each area's mark (added to report/1; absent in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub areas: Vec<AreaStatus>,
    /// Rules `--only` / `--skip` left out (added to report/1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules_skipped: Vec<SkippedRule>,
    pub snapshot: Snapshot,
}

impl Report {
    /// Sorts findings (most severe first, then by area, rule and GPU) and computes the verdict
    /// and the areas' marks.
    pub fn new(findings: Vec<Finding>, snapshot: Snapshot, matrix: MatrixRef) -> Report {
        Report::with_skipped(findings, snapshot, matrix, Vec::new(), LEFT_OUT_BY_FLAGS)
    }

    /// [`Report::new`] for a run where `--only` / `--skip` (or a command that runs only its
    /// own rules, `left_out_by` says which) left out `skipped`.
    pub fn with_skipped(
        mut findings: Vec<Finding>,
        snapshot: Snapshot,
        matrix: MatrixRef,
        skipped: Vec<SkippedRule>,
        left_out_by: &str,
    ) -> Report {
        // A fix built without the data (a literal elsewhere) still says when it needs root.
        for f in &mut findings {
            let shell = f.fix.shell.clone();
            if f.fix
                .commands
                .iter()
                .any(|c| crate::fixes::needs_root(c, &shell))
            {
                f.fix.needs_root = true;
            }
        }
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.area.cmp(&b.area))
                .then(a.rule.cmp(&b.rule))
                .then(a.gpu.cmp(&b.gpu))
        });
        let count = |s| {
            findings
                .iter()
                .filter(|f| f.severity == s && f.waived.is_none())
                .count()
        };
        let summary = Summary {
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            infos: count(Severity::Info),
            waived: findings.iter().filter(|f| f.waived.is_some()).count(),
        };
        let verdict = if summary.errors > 0 {
            Verdict::Fail
        } else if summary.warnings > 0 {
            Verdict::Warn
        } else {
            Verdict::Pass
        };
        let areas = Area::ALL
            .iter()
            .filter(|&&a| area_shown(a, &findings, &snapshot))
            .map(|&a| area_status(a, &findings, &snapshot, &skipped, left_out_by))
            .collect();
        Report {
            schema: REPORT_SCHEMA.to_string(),
            tool: Tool {
                name: "gpudoctor".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            matrix,
            verdict,
            summary,
            findings,
            areas,
            rules_skipped: skipped,
            snapshot,
        }
    }

    /// The mark of an area (computed in [`Report::new`]; recomputed for an older report).
    pub fn status(&self, area: Area) -> AreaStatus {
        self.areas
            .iter()
            .find(|s| s.area == area)
            .cloned()
            .unwrap_or_else(|| {
                area_status(
                    area,
                    &self.findings,
                    &self.snapshot,
                    &self.rules_skipped,
                    LEFT_OUT_BY_FLAGS,
                )
            })
    }

    /// Why the rules of `area` had nothing to judge (no GPU, not probed, smoke or stress not
    /// run), or None when they judged something. A rule with no finding there did not pass: it
    /// did not run (JUnit's `<skipped/>`).
    pub fn nothing_to_judge(&self, area: Area) -> Option<String> {
        let s = &self.snapshot;
        match area {
            Area::Gpus => match s.gpus.get() {
                Some(l) if !l.is_empty() => None,
                Some(_) => Some("no GPU listed by the driver".to_string()),
                None => Some(format!("GPUs: {}", reason(&s.gpus))),
            },
            Area::Smoke => match s.smoke.get() {
                Some(r) if !r.gpus.is_empty() => None,
                Some(_) => Some("the smoke tests ran on no GPU".to_string()),
                None => Some(format!("smoke tests {}", reason(&s.smoke))),
            },
            Area::Stress => match &s.stress {
                Some(r) if !r.gpus.is_empty() => None,
                Some(r) => Some(match &r.error {
                    Some(e) => format!("stress could not start: {e}"),
                    None => "stress ran on no GPU".to_string(),
                }),
                None => Some("stress did not run (gpudoctor stress runs it)".to_string()),
            },
            _ => match area_facts(area, s) {
                Facts::Known => None,
                Facts::NotProbed(why) | Facts::Unknown(why) => {
                    Some(format!("{}: {why}", area.title()))
                }
            },
        }
    }

    /// True when a finding at or above `fail_on` exists (exit 1).
    pub fn unfit(&self, fail_on: Severity) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity >= fail_on && f.waived.is_none())
    }
}

/// Whether an area's facts were there to judge.
enum Facts {
    Known,
    NotProbed(String),
    Unknown(String),
}

fn reason<T>(p: &crate::snapshot::Probed<T>) -> String {
    p.reason().unwrap_or("unknown").to_string()
}

/// What the snapshot holds for an area: known, not probed, or could not be read.
fn area_facts(area: Area, s: &Snapshot) -> Facts {
    use crate::snapshot::Probed;
    fn of<T>(p: &Probed<T>) -> Facts {
        if p.is_found() {
            Facts::Known
        } else if unprobed(p) {
            Facts::NotProbed(reason(p))
        } else {
            Facts::Unknown(reason(p))
        }
    }
    match area {
        Area::Host => of(&s.host),
        Area::Driver => {
            let d = &s.driver;
            let known = d.kernel_version().is_some()
                || d.nvml.get().is_some_and(|n| n.driver_version.is_some())
                || d.cuda_version().is_some();
            if !known && unprobed(&d.kernel_module) && unprobed(&d.nvml) {
                Facts::NotProbed("not probed".to_string())
            } else {
                Facts::Known
            }
        }
        Area::Gpus => of(&s.gpus),
        Area::Cuda => of(&s.cuda.runtimes),
        Area::Cudnn => of(&s.cudnn),
        Area::Frameworks => of(&s.python),
        Area::Smoke => match &s.smoke {
            Probed::Found { .. } => Facts::Known,
            p => Facts::NotProbed(reason(p)),
        },
        Area::Stress => match &s.stress {
            Some(_) => Facts::Known,
            None => Facts::NotProbed("not run".to_string()),
        },
        Area::Environment => {
            if env_unprobed(s) {
                Facts::NotProbed("not probed".to_string())
            } else {
                Facts::Known
            }
        }
    }
}

/// Whether a report shows an area: the smoke tests only when they ran here (not for a snapshot,
/// `--no-probe` or `--no-smoke`) or have findings, the stress test only in its own reports.
fn area_shown(area: Area, findings: &[Finding], s: &Snapshot) -> bool {
    let has = || findings.iter().any(|f| f.area == area);
    match area {
        Area::Smoke => !unprobed(&s.smoke) || has(),
        Area::Stress => s.stress.is_some() || has(),
        _ => true,
    }
}

/// True when the environment variables were not read (`--no-probe`: nothing was probed).
pub fn env_unprobed(s: &Snapshot) -> bool {
    s.env.is_empty() && s.probes.is_empty() && unprobed(&s.host)
}

/// The mark of one area: the worst finding that counts; else could not tell; else waived; else
/// not checked; else ok.
fn area_status(
    area: Area,
    findings: &[Finding],
    snap: &Snapshot,
    skipped: &[SkippedRule],
    left_out_by: &str,
) -> AreaStatus {
    let mine: Vec<&Finding> = findings.iter().filter(|f| f.area == area).collect();
    let counted = || {
        mine.iter()
            .filter(|f| f.waived.is_none() && f.category != Category::MatrixStale)
    };
    let worst = counted().map(|f| f.severity).max();
    let stale = mine
        .iter()
        .any(|f| f.waived.is_none() && f.category == Category::MatrixStale);
    let waived: Vec<&str> = mine
        .iter()
        .filter(|f| f.waived.is_some() && f.severity >= Severity::Warning)
        .map(|f| f.rule.as_str())
        .collect();
    let left_out: Vec<&str> = skipped
        .iter()
        .filter(|r| r.area == area)
        .map(|r| r.rule.as_str())
        .collect();
    let facts = area_facts(area, snap);
    let (status, why) = match (worst, facts) {
        (Some(Severity::Error), _) => (Mark::Error, None),
        (Some(Severity::Warning), _) => (Mark::Warning, None),
        (_, Facts::Unknown(why)) => (Mark::Unknown, Some(why)),
        _ if stale => (
            Mark::Unknown,
            Some("a version newer than the compatibility matrix knows".to_string()),
        ),
        _ if !waived.is_empty() => (
            Mark::Waived,
            Some(format!("waived by the policy: {}", waived.join(", "))),
        ),
        (_, Facts::NotProbed(why)) => (Mark::NotChecked, Some(why)),
        _ if !left_out.is_empty() => (
            Mark::NotChecked,
            Some(format!(
                "{} rule(s) left out by {left_out_by}: {}",
                left_out.len(),
                left_out.join(", ")
            )),
        ),
        _ => (Mark::Ok, None),
    };
    AreaStatus { area, status, why }
}

/// gpudoctor's exit codes (design.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Healthy,
    Unfit,
    ToolFailed,
    Interrupted,
    Terminated,
    /// `gpudoctor run`: the command's own status (its exit code, or 128 + the signal; on
    /// Windows the whole 32-bit code, a crash's NTSTATUS included).
    Passthrough(i32),
}

impl ExitStatus {
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Healthy => 0,
            ExitStatus::Unfit => 1,
            ExitStatus::ToolFailed => 2,
            ExitStatus::Interrupted => 130,
            ExitStatus::Terminated => 143,
            ExitStatus::Passthrough(c) => c,
        }
    }
}
