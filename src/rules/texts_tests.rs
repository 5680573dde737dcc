//! rules-text/rules.yaml against the rules: it parses, every rule of `all()` has its three texts,
//! and every text belongs to a rule.

use super::*;

#[test]
fn the_embedded_file_parses() {
    let parsed = parse(RULES_TEXT_YAML).unwrap();
    assert_eq!(parsed.len(), texts().len());
    assert!(parsed.len() >= crate::rules::all().len());
}

#[test]
fn every_rule_has_what_why_and_fix() {
    for r in crate::rules::all() {
        let t =
            of(r.doc.id).unwrap_or_else(|| panic!("{}: not in rules-text/rules.yaml", r.doc.id));
        for (field, text) in [("what", &t.what), ("why", &t.why), ("fix", &t.fix)] {
            assert!(
                !text.trim().is_empty() && text.trim() == text,
                "{}: `{field}` is empty or has spaces around it",
                r.doc.id
            );
        }
    }
}

#[test]
fn every_text_belongs_to_a_rule() {
    let ids: Vec<&str> = crate::rules::all().iter().map(|r| r.doc.id).collect();
    let strays: Vec<&String> = texts()
        .keys()
        .filter(|k| !ids.contains(&k.as_str()))
        .collect();
    assert!(strays.is_empty(), "texts for no rule: {strays:?}");
}

#[test]
fn a_wrong_schema_or_an_unknown_field_is_an_error() {
    let ok =
        "schema: gpudoctor.rules-text/1\nrules:\n  a.b:\n    what: w\n    why: y\n    fix: f\n";
    assert_eq!(parse(ok).unwrap()["a.b"].why, "y");
    assert!(parse(&ok.replace("rules-text/1", "rules-text/2")).is_err());
    assert!(parse(&format!("{ok}    how: h\n")).is_err());
}
