//! The prose of each rule (what it checks, why it matters, the fix) as data:
//! `rules-text/rules.yaml`, embedded at build time and read once. A rule's own file keeps its
//! id, category, area and one-line summary; [`super::RuleDoc::what`], `why` and `fix` read the
//! rest from here.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `rules-text/rules.yaml`.
pub const RULES_TEXT_YAML: &str = include_str!("../../rules-text/rules.yaml");

const SCHEMA: &str = "gpudoctor.rules-text/1";

/// One rule's prose.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleText {
    pub what: String,
    pub why: String,
    pub fix: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesTextFile {
    schema: String,
    rules: BTreeMap<String, RuleText>,
}

/// The texts of a rules-text file by rule id, or why it does not parse.
pub fn parse(yaml: &str) -> Result<BTreeMap<String, RuleText>, String> {
    let f: RulesTextFile =
        serde_saphyr::from_str(yaml).map_err(|e| format!("rules-text/rules.yaml: {e}"))?;
    if f.schema != SCHEMA {
        return Err(format!(
            "rules-text/rules.yaml: schema {:?}, expected {SCHEMA}",
            f.schema
        ));
    }
    Ok(f.rules)
}

/// The embedded texts (a broken file gives none, never a panic: the tests check that it parses
/// and that every rule has its texts).
pub fn texts() -> &'static BTreeMap<String, RuleText> {
    static T: OnceLock<BTreeMap<String, RuleText>> = OnceLock::new();
    T.get_or_init(|| parse(RULES_TEXT_YAML).unwrap_or_default())
}

/// The texts of rule `id`, if the file has them.
pub fn of(id: &str) -> Option<&'static RuleText> {
    texts().get(id)
}

#[cfg(test)]
#[path = "texts_tests.rs"]
mod tests;
