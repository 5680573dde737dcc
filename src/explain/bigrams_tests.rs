//! Unit tests of `bigrams`: the filter against a plain search on random, cased and edge inputs.
use super::*;
use proptest::prelude::*;

/// Every (position, strong, weak) where a literal starts: the plain reference.
fn plain(text: &[u8], strong: &[&[u8]], weak: &[&[u8]]) -> Vec<(usize, Kinds)> {
    let lower = text.to_ascii_lowercase();
    let at = |lits: &[&[u8]], p: usize| {
        lits.iter().any(|l| {
            lower
                .get(p..)
                .is_some_and(|t| t.starts_with(&l.to_ascii_lowercase()))
        })
    };
    (0..=text.len())
        .map(|p| {
            (
                p,
                Kinds {
                    strong: at(strong, p),
                    weak: at(weak, p),
                },
            )
        })
        .filter(|(p, k)| (k.strong || k.weak) && *p < text.len().max(1))
        .collect()
}

/// What the filter and its verification find.
fn filtered(text: &[u8], strong: &[&[u8]], weak: &[&[u8]]) -> Vec<(usize, Kinds)> {
    let b = Bigrams::new(strong, weak);
    let mut s = Scratch::default();
    let mut out = Vec::new();
    b.candidates(text, &mut s, |p, m| {
        let k = b.kinds_at(text, p, m);
        if k.strong || k.weak {
            out.push((p, k));
        }
    });
    out
}

#[test]
fn finds_every_literal_in_any_case_at_every_edge() {
    let strong: Vec<&[u8]> = vec![
        b"xid",
        b"**",
        b"fallen",
        b"nan",
        b"oom_",
        b"c0000",
        b"3221225477",
        "异常代码".as_bytes(),
        b"a",
    ];
    let weak: Vec<&[u8]> = vec![b"error", b"old", b"memory"];
    // A literal at the very start and end, across a run of STEP bytes, in capitals, in CRLF
    // text, behind a colour sequence.
    let mut text = Vec::new();
    text.extend_from_slice(b"XID ");
    for i in 0..3 * STEP {
        text.push(b"qwz. \r\n"[i % 7]);
    }
    for lit in strong.iter().chain(&weak) {
        for cut in [STEP - 1, 2 * STEP - 2, 2 * STEP + 3] {
            let mut t = text.clone();
            let at = cut.min(t.len());
            t.splice(at..at, lit.to_ascii_uppercase());
            t.extend_from_slice(b"\x1b[31mFaLLeN\x1b[0m\r\n");
            t.extend_from_slice(lit);
            assert_eq!(
                filtered(&t, &strong, &weak),
                plain(&t, &strong, &weak),
                "{:?} at {cut}",
                String::from_utf8_lossy(lit)
            );
        }
    }
}

#[test]
fn no_literals_and_an_empty_literal() {
    let none: Vec<&[u8]> = Vec::new();
    assert!(filtered(b"anything at all\n", &none, &none).is_empty());
    let empty: Vec<&[u8]> = vec![b""];
    assert_eq!(filtered(b"ab", &empty, &none), plain(b"ab", &empty, &none));
    assert_eq!(filtered(b"ab", &empty, &none).len(), 2);
}

/// The filter lets few ordinary positions through: on lines of real GPU-job output with the
/// built-in cover, candidates are a few per cent of the positions at most (a filter that let
/// everything through would be exact too, and as slow as verifying every position).
#[test]
fn few_ordinary_positions_are_candidates() {
    let cover = crate::explain::logscan::cover(crate::explain::embedded_catalog().unwrap());
    let strong: Vec<&[u8]> = cover.strong.iter().map(|x| x.as_bytes()).collect();
    let weak: Vec<&[u8]> = cover.weak.iter().map(|(x, _)| x.as_bytes()).collect();
    let b = Bigrams::new(&strong, &weak);
    let text = crate::explain::cover::BACKGROUND.as_bytes();
    let mut s = Scratch::default();
    let (mut cands, mut real) = (0usize, 0usize);
    b.candidates(text, &mut s, |p, m| {
        cands += 1;
        let k = b.kinds_at(text, p, m);
        real += usize::from(k.strong || k.weak);
    });
    assert!(text.len() > 10_000);
    assert!(
        cands * 50 < text.len(),
        "{cands} candidates of {} positions ({real} real)",
        text.len()
    );
    assert_eq!(filtered(text, &strong, &weak), plain(text, &strong, &weak));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// On random text over a small alphabet (so that literals occur, cased and cut) and random
    /// literals, the filter finds exactly what the plain search finds.
    #[test]
    fn the_filter_finds_what_the_plain_search_finds(
        text in proptest::collection::vec(prop::sample::select(b"abAB xX\n\r\x1b-*0\xc4\xb0".to_vec()), 0..3 * STEP),
        strong in proptest::collection::vec(proptest::collection::vec(prop::sample::select(b"abx -*0\xc4".to_vec()), 1..8), 0..40),
        weak in proptest::collection::vec(proptest::collection::vec(prop::sample::select(b"ab x\n".to_vec()), 1..6), 0..5),
    ) {
        let s: Vec<&[u8]> = strong.iter().map(Vec::as_slice).collect();
        let w: Vec<&[u8]> = weak.iter().map(Vec::as_slice).collect();
        prop_assert_eq!(filtered(&text, &s, &w), plain(&text, &s, &w));
    }
}

/// Not a check: the figures of docs/benchmarks.md on whether the first stage's cost grows with
/// the number of literals. Over the log named by `GPUDOCTOR_BENCH_LOG`, the filter and its
/// verification, and the Teddy searches it replaced (groups of 24), with the built-in cover
/// halved (every other literal), whole, and doubled (each literal once more, reversed: as rare
/// in logs). Writes, per cover, the literals, the candidates and the milliseconds (best of 3) to
/// standard error; run under `valgrind --tool=callgrind --toggle-collect=...` for instructions.
///   GPUDOCTOR_BENCH_LOG=/tmp/x.log cargo test --release --lib explain::bigrams::tests::cost_by_cover_size -- --ignored --nocapture
#[test]
#[ignore]
fn cost_by_cover_size() {
    use std::io::Write;
    let Some(path) = std::env::var_os("GPUDOCTOR_BENCH_LOG") else {
        return;
    };
    let text = std::fs::read(path).unwrap();
    let cover = crate::explain::logscan::cover(crate::explain::embedded_catalog().unwrap());
    let all: Vec<Vec<u8>> = cover.strong.iter().map(|x| x.as_bytes().to_vec()).collect();
    let half: Vec<Vec<u8>> = all.iter().step_by(2).cloned().collect();
    let mut double = all.clone();
    double.extend(
        all.iter()
            .map(|x| x.iter().rev().copied().collect::<Vec<u8>>()),
    );
    let mut err = std::io::stderr();
    for (name, lits) in [("half", &half), ("whole", &all), ("double", &double)] {
        let none: Vec<Vec<u8>> = Vec::new();
        let b = Bigrams::new(lits, &none);
        let mut s = Scratch::default();
        let mut best = f64::MAX;
        let (mut cands, mut hits) = (0usize, 0usize);
        for _ in 0..3 {
            let t = std::time::Instant::now();
            (cands, hits) = (0, 0);
            // As the scan: one hit a line.
            let mut next = 0;
            b.candidates(&text, &mut s, |p, m| {
                cands += 1;
                if p >= next && b.kinds_at(&text, p, m).strong {
                    hits += 1;
                    next = memchr::memchr(b'\n', &text[p..]).map_or(text.len(), |i| p + i + 1);
                }
            });
            best = best.min(t.elapsed().as_secs_f64());
        }
        // The Teddy searches (over a lowercased copy, as the stage before this one; hits are summed over the groups).
        let lower = text.to_ascii_lowercase();
        let teddy: Vec<_> = lits
            .chunks(24)
            .filter_map(|g| {
                aho_corasick::packed::Config::new()
                    .builder()
                    .extend(g)
                    .build()
            })
            .collect();
        let mut best_teddy = f64::MAX;
        let mut teddy_hits = 0usize;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            teddy_hits = 0;
            for sr in &teddy {
                let mut pos = 0;
                while let Some(h) = sr.find_in(&lower, aho_corasick::Span::from(pos..lower.len())) {
                    teddy_hits += 1;
                    pos = memchr::memchr(b'\n', &lower[h.start()..])
                        .map_or(lower.len(), |i| h.start() + i + 1);
                }
            }
            best_teddy = best_teddy.min(t.elapsed().as_secs_f64());
        }
        writeln!(
            err,
            "{name}: {} literals; filter {cands} candidates, {hits} hits, {:.1} ms ({:.2} ns/byte); teddy {} groups, {teddy_hits} hits, {:.1} ms ({:.2} ns/byte)",
            lits.len(),
            best * 1e3,
            best * 1e9 / text.len() as f64,
            teddy.len(),
            best_teddy * 1e3,
            best_teddy * 1e9 / text.len() as f64,
        )
        .unwrap();
    }
}
