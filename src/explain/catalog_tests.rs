use super::*;

#[test]
fn normalise_folds_case_whitespace_and_quotes() {
    assert_eq!(normalise("  CUDA  out of\tmemory\n"), "cuda out of memory");
    assert_eq!(normalise("couldn’t `x`"), "couldn't 'x'");
}

#[test]
fn the_embedded_catalog_loads() {
    let c = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(c.signatures.len() >= 60, "{}", c.signatures.len());
}

#[test]
fn errors_name_file_and_line() {
    let text = "schema: gpudoctor.explain-catalog/1\nversion: x\nsignatures:\n  - id: a\n    category: nonsense\n    name: A\n    patterns: [abc]\n    meaning: m\n    fix: {text: t}\n    sources: [https://x]\n    examples: [{source: 'https://x', text: abc}]\n";
    let e = Catalog::from_texts(
        "f.yaml",
        std::iter::once(("f.yaml".to_string(), text.to_string())),
    )
    .unwrap_err();
    assert!(e[0].starts_with("f.yaml:4"), "{e:?}");
    assert!(e[0].contains("unknown category \"nonsense\""), "{e:?}");
}

#[test]
fn a_pattern_matches_whatever_the_case_and_spacing() {
    let c = Catalog::embedded().unwrap();
    let id = |line: &str| -> Vec<String> {
        c.matches(line)
            .iter()
            .map(|&i| c.signatures[i].id.clone())
            .collect()
    };
    assert!(
        id("TORCH.CUDA.OutOfMemoryError:  CUDA   out of memory").contains(&"torch-oom".to_string())
    );
    assert!(id("nothing to see here").is_empty());
}
