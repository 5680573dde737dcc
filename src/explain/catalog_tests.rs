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

#[test]
fn the_log_prefilter_covers_every_pattern_and_skips_ordinary_lines() {
    let c = Catalog::embedded().unwrap();
    let groups = c.prefilter_groups();
    assert!(groups.iter().all(|g| g.len() <= PREFILTER_GROUP));
    // Short literals together: no group's shortest literal is longer than the next group's.
    for w in groups.windows(2) {
        let short = |g: &Vec<String>| g.iter().map(String::len).min().unwrap();
        assert!(short(&w[0]) <= short(&w[1]), "{groups:?}");
    }
    let words: Vec<String> = groups.concat();
    for s in &c.signatures {
        for p in &s.patterns {
            assert!(
                words.iter().any(|w| p.contains(w.as_str())),
                "{}: {p:?} has no literal",
                s.id
            );
        }
    }
    // An ordinary training line is no candidate.
    let line = "2026-11-21 10:17:17 info train.py:212 epoch 3 step 12345 loss 0.5230 lr 3.0e-04 grad_norm 1.20 tokens/s 41000";
    assert!(
        !words.iter().any(|w| line.contains(w.as_str())),
        "{words:?}"
    );
}
