//! `--format json`: the report object of design.md, pretty-printed.

use crate::report::Report;

pub fn render(report: &Report) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(report)?;
    s.push('\n');
    Ok(s)
}
