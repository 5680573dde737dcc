//! `gpudoctor rules`.

use super::Output;
use crate::cli::RulesArgs;
use crate::report::ExitStatus;

pub(crate) fn list_rules(a: RulesArgs) -> Output {
    let docs: Vec<crate::rules::RuleDoc> = crate::rules::all().into_iter().map(|r| r.doc).collect();
    if a.json {
        let v: Vec<serde_json::Value> = docs
            .iter()
            .map(|d| {
                serde_json::json!({"id": d.id, "category": d.category.as_str(), "summary": d.summary,
                                   "what": d.what(), "why": d.why(), "fix": d.fix()})
            })
            .collect();
        return match serde_json::to_string_pretty(&v) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    let w = docs.iter().map(|d| d.id.len()).max().unwrap_or(0);
    let c = docs
        .iter()
        .map(|d| d.category.as_str().len())
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for d in &docs {
        s.push_str(&format!(
            "{:w$}  {:c$}  {}\n",
            d.id,
            d.category.as_str(),
            d.summary
        ));
    }
    Output::ok(s, ExitStatus::Healthy)
}
