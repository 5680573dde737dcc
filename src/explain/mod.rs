//! `gpudoctor explain`: crash codes, error messages and whole logs mapped to causes and fixes.
//! Codes in every form users paste (`-1073740791`, `3221226505`, `0xC0000409`, `C0000409`, 137,
//! CUDA/NVML error numbers and names, Xids), messages by their known signatures (with the
//! numbers in them turned into facts), and `--log` files scanned in one streaming pass.

pub mod codes;
pub mod logscan;
pub mod signatures;

use serde::Serialize;

use crate::report::{Category, Fix, Severity};

pub const EXPLAIN_SCHEMA: &str = "gpudoctor.explain/1";

/// One reading of the input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// "ntstatus", "signal", "exit_code", "cuda_error", "nvml_error", "xid", "signature", "rule".
    pub kind: &'static str,
    pub code: serde_json::Value,
    pub name: String,
    pub category: Category,
    pub meaning: String,
    pub likely_causes: Vec<String>,
    pub fix: Fix,
    /// "high", "medium" or "low".
    pub confidence: &'static str,
    /// `--log`: how often it occurred and where first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_line: Option<u64>,
    /// The text it was found in (sanitised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `--with-check`: what this machine shows about it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub machine: Vec<String>,
    /// How serious, for ordering (not part of the JSON contract).
    #[serde(skip)]
    pub severity: Severity,
    /// Identifies repeats in a log.
    #[serde(skip)]
    pub key: String,
}

impl Match {
    pub fn new(
        kind: &'static str,
        code: serde_json::Value,
        name: impl Into<String>,
        category: Category,
        meaning: impl Into<String>,
    ) -> Match {
        let name = name.into();
        Match {
            kind,
            key: format!("{kind}:{code}:{name}"),
            code,
            name,
            category,
            meaning: meaning.into(),
            likely_causes: Vec::new(),
            fix: Fix::default(),
            confidence: "high",
            count: None,
            first_line: None,
            text: None,
            machine: Vec::new(),
            severity: Severity::Error,
        }
    }
    pub fn causes(mut self, c: &[&str]) -> Match {
        self.likely_causes = c.iter().map(|s| s.to_string()).collect();
        self
    }
    pub fn causes_owned(mut self, c: Vec<String>) -> Match {
        self.likely_causes = c;
        self
    }
    pub fn fix(mut self, text: impl Into<String>, commands: &[&str]) -> Match {
        self.fix = Fix {
            text: text.into(),
            commands: commands.iter().map(|s| s.to_string()).collect(),
        };
        self
    }
    pub fn fix_owned(mut self, text: impl Into<String>, commands: Vec<String>) -> Match {
        self.fix = Fix {
            text: text.into(),
            commands,
        };
        self
    }
    pub fn severity(mut self, s: Severity) -> Match {
        self.severity = s;
        self
    }
    pub fn key(mut self, k: impl Into<String>) -> Match {
        self.key = k.into();
        self
    }
}

/// Explains a code or a message (several lines are fine).
pub fn explain_text(input: &str, m: &crate::matrix::Matrix) -> Vec<Match> {
    if let Some(v) = codes::parse(input, m) {
        return v;
    }
    let mut out: Vec<Match> = Vec::new();
    let mut parser = crate::faults::logparse::LogParser::new();
    for line in input.lines() {
        for x in signatures::match_line(line, m, &mut parser) {
            if !out.iter().any(|o| o.key == x.key) {
                out.push(x);
            }
        }
    }
    sort(&mut out);
    out
}

/// Most severe first; then the more frequent; then the earlier.
pub fn sort(v: &mut [Match]) {
    v.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(b.count.unwrap_or(0).cmp(&a.count.unwrap_or(0)))
            .then(a.first_line.unwrap_or(0).cmp(&b.first_line.unwrap_or(0)))
    });
}

/// Human output.
pub fn render(input_label: &str, matches: &[Match], lines: Option<u64>) -> String {
    let mut s = String::new();
    if matches.is_empty() {
        s.push_str(&format!(
            "No known code or message matched {input_label}. gpudoctor knows Windows NTSTATUS codes, exit statuses (128+signal), CUDA, NVML and Xid codes, and framework error messages; `gpudoctor check` looks at the machine itself.\n"
        ));
        return s;
    }
    if let Some(n) = lines {
        s.push_str(&format!(
            "{} known problem(s) in {n} lines of {input_label}:\n\n",
            matches.len()
        ));
    }
    for (i, m) in matches.iter().enumerate() {
        let code = match &m.code {
            serde_json::Value::String(c) => c.clone(),
            other => other.to_string(),
        };
        let seen = match (m.count, m.first_line) {
            (Some(c), Some(l)) => format!(" — {c} time(s), first at line {l}"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{}. {} {} ({}, {}){seen}\n",
            i + 1,
            crate::sanitize::clean(&code),
            m.name,
            m.category.as_str(),
            match m.confidence {
                "high" => "most likely",
                "medium" => "likely",
                _ => "possible",
            }
        ));
        if let Some(t) = &m.text {
            s.push_str(&format!(
                "   Seen: {}\n",
                crate::sanitize::clean_line(t, 300)
            ));
        }
        s.push_str(&format!(
            "   What it is: {}\n",
            crate::sanitize::clean(&m.meaning)
        ));
        if !m.likely_causes.is_empty() {
            s.push_str("   Likely causes:\n");
            for c in &m.likely_causes {
                s.push_str(&format!("     - {}\n", crate::sanitize::clean(c)));
            }
        }
        if !m.fix.text.is_empty() {
            s.push_str(&format!(
                "   Fix: {}\n",
                crate::sanitize::clean(&m.fix.text)
            ));
        }
        for c in &m.fix.commands {
            s.push_str(&format!("     $ {}\n", crate::sanitize::clean(c)));
        }
        for l in &m.machine {
            s.push_str(&format!("   This machine: {}\n", crate::sanitize::clean(l)));
        }
        s.push('\n');
    }
    s
}
