//! Unit tests of `pattern_index`: what it finds against an Aho-Corasick automaton's overlapping
//! search, which the catalog used alone before.
use super::*;
use aho_corasick::{AhoCorasick, MatchKind};
use proptest::prelude::*;

/// Every (pattern, start, end), sorted, as the index finds it.
fn indexed(pats: &[String], hay: &str) -> Vec<(usize, usize, usize)> {
    let ix = PatternIndex::new(pats).unwrap_or_else(|| panic!("no index of {pats:?}"));
    let mut out = Vec::new();
    ix.for_each_match(hay.as_bytes(), |p, s, e| out.push((p, s, e)));
    out.sort_unstable();
    out
}

/// The same, as the catalog's automaton finds it.
fn automaton(pats: &[String], hay: &str) -> Vec<(usize, usize, usize)> {
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(pats)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out: Vec<_> = ac
        .find_overlapping_iter(hay)
        .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
        .collect();
    out.sort_unstable();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    /// Random patterns of 1 to 9 bytes (some equal, some prefixes or suffixes of others) over a
    /// small alphabet with a multi-byte character, in a random text of the same alphabet.
    #[test]
    fn the_index_finds_what_the_automaton_finds(
        pats in proptest::collection::vec("[abc é]{1,9}", 1..30),
        hay in "[abcd é]{0,300}",
        dup in 0usize..30,
    ) {
        let mut pats = pats;
        if let Some(p) = pats.get(dup % pats.len()).cloned() {
            pats.push(p);
        }
        prop_assert_eq!(indexed(&pats, &hay), automaton(&pats, &hay));
    }
}

#[test]
fn the_catalog_patterns_are_found_where_the_automaton_finds_them() {
    let Some(cat) = crate::explain::embedded_catalog() else {
        panic!("the built-in catalog does not load");
    };
    let pats = cat.all_patterns();
    assert!(pats.len() > 1000, "{} patterns", pats.len());
    // Each pattern alone, inside text, twice overlapping with itself, at the end.
    let mut hay = String::new();
    for p in pats.iter().step_by(7) {
        hay.push_str("x ");
        hay.push_str(p);
        hay.push_str(p);
        hay.push(' ');
    }
    hay.push_str(pats.last().map(String::as_str).unwrap_or(""));
    let found = indexed(pats, &hay);
    assert!(found.len() > pats.len() / 7, "{} matches", found.len());
    assert_eq!(found, automaton(pats, &hay));
}

#[test]
fn an_empty_pattern_is_not_indexed() {
    assert!(PatternIndex::new(&["abc", ""]).is_none());
    assert!(PatternIndex::new(&["abc", "d"]).is_some());
}
