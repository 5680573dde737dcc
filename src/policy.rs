//! `--policy FILE`: a fleet's own rules over the report. Waive findings (by rule id or prefix,
//! with a reason and an expiry date; a waived finding still shows, as waived, and no longer
//! fails the run), raise or lower a rule's severity, and set thresholds (expected GPU count,
//! minimum driver, highest temperature, uncorrectable ECC errors) for the whole fleet or per
//! node class, chosen by hostname pattern, GPU model or `--node-class`.
//!
//! ```yaml
//! schema: gpudoctor.policy/1
//! waive:
//!   - rule: health.pcie
//!     reason: "riser swap booked, OPS-1234"
//!     expires: 2027-01-31
//!     gpus: [3]
//! severity:
//!   - rule: smoke.pcie-bandwidth
//!     to: error
//! thresholds:
//!   expect_gpus: 8
//! classes:
//!   - name: h100
//!     match: {hostname: "gpu-h100-*", gpu: "H100"}
//!     thresholds: {min_driver: "570.86.15", max_temperature_c: 85, max_ecc_uncorrected: 0}
//! ```
//!
//! The file is read whole and checked before anything runs: an unknown field, a bad date or
//! severity, a waiver without a reason or expiry exit 2 with file:line:column.

use serde::Deserialize;
use serde_json::json;
use serde_saphyr::Spanned;

use crate::rules::RuleDoc;
use crate::snapshot::Snapshot;
use crate::version::DriverVersion;
pub use crate::vocab::days;
use crate::vocab::{Area, Finding, Severity, Waived};

pub const POLICY_SCHEMA: &str = "gpudoctor.policy/1";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    schema: String,
    #[serde(default)]
    waive: Vec<Spanned<WaiverRow>>,
    #[serde(default)]
    severity: Vec<Spanned<SeverityRow>>,
    #[serde(default)]
    thresholds: Option<Thresholds>,
    #[serde(default)]
    classes: Vec<Spanned<ClassRow>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaiverRow {
    rule: Spanned<String>,
    reason: String,
    expires: Spanned<String>,
    #[serde(default)]
    gpus: Option<Vec<u32>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeverityRow {
    rule: Spanned<String>,
    to: Spanned<String>,
}

/// Limits for a node class (or the whole fleet).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    #[serde(default)]
    pub expect_gpus: Option<u32>,
    #[serde(default)]
    pub min_driver: Option<String>,
    #[serde(default)]
    pub max_temperature_c: Option<u32>,
    #[serde(default)]
    pub max_ecc_uncorrected: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassRow {
    name: String,
    #[serde(default, rename = "match")]
    matches: Option<ClassMatch>,
    #[serde(default)]
    thresholds: Thresholds,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassMatch {
    /// A hostname pattern with `*` wildcards.
    #[serde(default)]
    hostname: Option<String>,
    /// Text the GPU model contains ("H100").
    #[serde(default)]
    gpu: Option<String>,
}

/// A waiver, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiver {
    pub rule: String,
    pub reason: String,
    /// YYYY-MM-DD; the waiver holds through that day (UTC).
    pub expires: String,
    pub gpus: Option<Vec<u32>>,
    pub at: String,
}

/// A node class, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeClass {
    pub name: String,
    pub hostname: Option<String>,
    pub gpu: Option<String>,
    pub thresholds: Thresholds,
}

/// A policy file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub path: String,
    pub waivers: Vec<Waiver>,
    pub severities: Vec<(String, Severity)>,
    pub thresholds: Thresholds,
    pub classes: Vec<NodeClass>,
}

/// "FILE:LINE:COLUMN: what is wrong"
fn at(path: &str, line: u64, col: u64) -> String {
    format!("{path}:{line}:{col}")
}

/// "FILE:LINE:COLUMN" of a value.
fn at_value<T>(path: &str, v: &Spanned<T>) -> String {
    at(path, v.referenced.line(), v.referenced.column())
}

/// True when a waiver or severity entry's `rule` covers the rule `id`: the id itself, or a
/// prefix ending at a dot (`driver` and `driver.` cover `driver.missing`).
fn covers(rule: &str, id: &str) -> bool {
    id == rule
        || (rule.ends_with('.') && id.starts_with(rule))
        || id
            .strip_prefix(rule)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Checks the `rule` of a waiver or severity entry against the rules gpudoctor has: a typo
/// would otherwise waive nothing, silently.
fn check_rule_id(loc: &str, key: &str, rule: &str) -> Result<(), String> {
    let docs: Vec<RuleDoc> = crate::rules::all().into_iter().map(|r| r.doc).collect();
    if docs.iter().any(|d| covers(rule, d.id)) {
        return Ok(());
    }
    let prefixes = crate::rules::prefixes(&docs);
    let ids: Vec<&str> = docs.iter().map(|d| d.id).collect();
    Err(format!(
        "{loc}: {key}: {:?} is not a rule id, and no rule id starts with it: expected a rule id or a prefix ending at a dot.\nRule prefixes: {}\nRule ids: {}\n(`gpudoctor rules` lists every rule with what it checks.)",
        crate::sanitize::clean_line(rule, 80),
        prefixes.join(" "),
        ids.join(" ")
    ))
}

fn severity(s: &str) -> Option<Severity> {
    match s {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "info" => Some(Severity::Info),
        _ => None,
    }
}

impl Policy {
    /// Reads and checks a policy file; the error names file:line:column.
    pub fn load(path: &std::path::Path) -> Result<Policy, String> {
        let name = path.display().to_string();
        let text =
            crate::userfile::read(path, "policy file").map_err(|e| format!("{name}: {e}"))?;
        Policy::parse(&name, &text)
    }

    pub fn parse(name: &str, text: &str) -> Result<Policy, String> {
        let file: PolicyFile = serde_saphyr::from_str(text).map_err(|e| {
            let (at, message) = crate::userfile::yaml_error(name, text, &e);
            format!("{at}: {message}")
        })?;
        if file.schema != POLICY_SCHEMA {
            return Err(format!(
                "{name}:1:1: schema is {:?}; this gpudoctor reads {POLICY_SCHEMA:?}",
                file.schema
            ));
        }
        let mut p = Policy {
            path: name.to_string(),
            waivers: Vec::new(),
            severities: Vec::new(),
            thresholds: file.thresholds.unwrap_or_default(),
            classes: Vec::new(),
        };
        check_thresholds(&p.thresholds, name, "thresholds")?;
        for w in file.waive {
            let loc = at(name, w.referenced.line(), w.referenced.column());
            let v = w.value;
            let rule_at = at_value(name, &v.rule);
            if v.rule.value.trim().is_empty() {
                return Err(format!(
                    "{rule_at}: waive: rule is empty: expected the rule id (or prefix) it waives, such as health.pcie"
                ));
            }
            check_rule_id(&rule_at, "waive: rule", &v.rule.value)?;
            if v.reason.trim().is_empty() {
                return Err(format!(
                    "{loc}: waive: reason is empty: the waiver of {} needs a reason (a ticket, who and why)",
                    crate::sanitize::clean_line(&v.rule.value, 80)
                ));
            }
            if days(&v.expires.value).is_none() {
                return Err(format!(
                    "{}: waive: expires is {:?}: expected a date as YYYY-MM-DD, such as 2027-01-31",
                    at_value(name, &v.expires),
                    crate::sanitize::clean_line(&v.expires.value, 40)
                ));
            }
            p.waivers.push(Waiver {
                rule: v.rule.value,
                reason: v.reason,
                expires: v.expires.value,
                gpus: v.gpus,
                at: loc,
            });
        }
        for s in file.severity {
            let v = s.value;
            let rule_at = at_value(name, &v.rule);
            if v.rule.value.trim().is_empty() {
                return Err(format!(
                    "{rule_at}: severity: rule is empty: expected the rule id (or prefix) whose severity changes, such as smoke.pcie-bandwidth"
                ));
            }
            check_rule_id(&rule_at, "severity: rule", &v.rule.value)?;
            let Some(sev) = severity(&v.to.value) else {
                return Err(format!(
                    "{}: severity: to is {:?}: expected error, warning or info",
                    at_value(name, &v.to),
                    crate::sanitize::clean_line(&v.to.value, 40)
                ));
            };
            p.severities.push((v.rule.value, sev));
        }
        for c in file.classes {
            let loc = at(name, c.referenced.line(), c.referenced.column());
            let v = c.value;
            if v.name.trim().is_empty() {
                return Err(format!(
                    "{loc}: classes: name is empty: expected the node class's name, such as h100 (what --node-class names)"
                ));
            }
            check_thresholds(&v.thresholds, &loc, &format!("class {}", v.name))?;
            let m = v.matches.unwrap_or_default();
            p.classes.push(NodeClass {
                name: v.name,
                hostname: m.hostname,
                gpu: m.gpu,
                thresholds: v.thresholds,
            });
        }
        Ok(p)
    }

    /// The node class that applies: the one named (`--node-class`), else the first whose
    /// hostname pattern and GPU model match.
    pub fn class(
        &self,
        named: Option<&str>,
        hostname: Option<&str>,
        snap: &Snapshot,
    ) -> Result<Option<&NodeClass>, String> {
        if let Some(n) = named {
            return self
                .classes
                .iter()
                .find(|c| c.name == n)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "{}: no node class named {n:?} (classes: {})",
                        self.path,
                        self.classes
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                });
        }
        let models: Vec<String> = snap
            .gpu_list()
            .iter()
            .filter_map(|g| g.name.get().cloned())
            .collect();
        Ok(self.classes.iter().find(|c| {
            c.hostname
                .as_ref()
                .is_none_or(|pat| hostname.is_some_and(|h| glob(pat, h)))
                && c.gpu
                    .as_ref()
                    .is_none_or(|m| models.iter().any(|x| x.contains(m.as_str())))
        }))
    }

    /// The fleet's thresholds with the class's on top.
    pub fn thresholds(&self, class: Option<&NodeClass>) -> Thresholds {
        let mut t = self.thresholds.clone();
        if let Some(c) = class {
            let o = &c.thresholds;
            t.expect_gpus = o.expect_gpus.or(t.expect_gpus);
            t.min_driver = o.min_driver.clone().or(t.min_driver);
            t.max_temperature_c = o.max_temperature_c.or(t.max_temperature_c);
            t.max_ecc_uncorrected = o.max_ecc_uncorrected.or(t.max_ecc_uncorrected);
        }
        t
    }

    /// Applies severities and waivers to the findings; adds a warning for each expired waiver
    /// that would have applied. `today` is days since 1970-01-01 (UTC).
    pub fn apply(&self, findings: &mut Vec<Finding>, today: i64) {
        let matches = covers;
        for f in findings.iter_mut() {
            if let Some((_, s)) = self
                .severities
                .iter()
                .rev()
                .find(|(r, _)| matches(r, &f.rule))
            {
                f.severity = *s;
            }
        }
        let mut expired = Vec::new();
        for f in findings.iter_mut() {
            for w in self.waivers.iter().filter(|w| matches(&w.rule, &f.rule)) {
                if let (Some(gpus), Some(g)) = (&w.gpus, f.gpu) {
                    if !gpus.contains(&g) {
                        continue;
                    }
                }
                if days(&w.expires).is_some_and(|d| d >= today) {
                    f.waived = Some(Waived {
                        reason: w.reason.clone(),
                        expires: w.expires.clone(),
                        policy: w.at.clone(),
                    });
                    break;
                } else if !expired
                    .iter()
                    .any(|(a, _, _): &(String, String, Area)| *a == w.at)
                {
                    // Shown beside the findings it covered, which count again.
                    expired.push((w.at.clone(), format!("{} ({})", w.rule, w.reason), f.area));
                }
            }
        }
        let doc = crate::rules::policy_waiver_expired::RULE.doc;
        for (loc, what, area) in expired {
            let mut f = doc
                .finding(Severity::Warning, format!("A policy waiver expired: {what}"), format!("The waiver at {loc} is past its date, so the findings it covered count again."))
                .fix("Fix what it waived, or renew the waiver with a new date and reason.", &[])
                .evidence(json!({"waiver": loc}));
            f.area = area;
            findings.push(f);
        }
    }
}

fn check_thresholds(t: &Thresholds, loc: &str, what: &str) -> Result<(), String> {
    if let Some(d) = &t.min_driver {
        if DriverVersion::parse(d).is_none() {
            return Err(format!(
                "{loc}: {what}: min_driver {d:?} is not a driver version like 550.54.15"
            ));
        }
    }
    Ok(())
}

/// `*` matches any run of characters; everything else matches itself (case-insensitive).
pub fn glob(pat: &str, s: &str) -> bool {
    let (p, s) = (pat.to_ascii_lowercase(), s.to_ascii_lowercase());
    let parts: Vec<&str> = p.split('*').collect();
    let mut rest = s.as_str();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(k) => rest = &rest[k + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}
