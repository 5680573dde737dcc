//! build.rs's JSON of every knowledge file holds what the YAML says, value for value, and every
//! file is converted: the binary parses the JSON, people and generators edit the YAML.

use std::path::Path;

fn yaml_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge");
    let mut out = Vec::new();
    for sub in ["", "messages"] {
        for e in std::fs::read_dir(root.join(sub)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "yaml") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_knowledge_yaml_is_embedded_as_the_same_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge");
    let out = Path::new(env!("OUT_DIR")).join("knowledge");
    let files = yaml_files();
    assert!(files.len() >= 20, "{files:?}");
    for yaml in &files {
        let rel = yaml.strip_prefix(&root).unwrap().with_extension("json");
        let from_yaml: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(yaml).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", yaml.display()));
        let json = std::fs::read_to_string(out.join(&rel))
            .unwrap_or_else(|e| panic!("{}: not converted: {e}", rel.display()));
        let embedded: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(
            !embedded.is_null(),
            "{}: build.rs could not read it",
            rel.display()
        );
        assert_eq!(embedded, from_yaml, "{}", rel.display());
    }
}

#[test]
fn the_embedded_tables_load() {
    assert!(super::codes::all().len() >= 10);
    assert!(!super::messages::families().is_empty());
    assert!(super::kernel::xid_file().is_some());
    assert!(super::kernel::events_file().is_some());
    assert!(super::kernel::messages_file().is_some());
}
