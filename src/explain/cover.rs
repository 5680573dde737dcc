//! The prefilter's literals ([`cover_of`]): a cover of the explain catalog's patterns by short
//! pieces of their words, chosen against ordinary log text. It uses the standard library only:
//! `build.rs` includes this file too and computes the built-in catalog's cover when the binary is
//! built (`logscan` uses that one when the catalog is the built-in one, and computes it at run
//! time for any other; a test compares the two).

/// Ordinary output of GPU jobs (PyTorch, NCCL INFO, tqdm, vLLM, the Hugging Face Trainer, the
/// kernel log) and English prose: the prefilter's literals are chosen to be rare in it.
pub(crate) const BACKGROUND: &str = include_str!("../../explain-catalog/log-background.txt");

/// What a literal found in one line of [`BACKGROUND`] weighs against a literal more in the
/// searches: a piece that ordinary lines hold makes those lines candidates, each matched in full
/// (about a microsecond), where a search of a few hundred MB/s would have passed it.
pub(crate) const BACKGROUND_WEIGHT: f64 = 10.0;

/// What a literal of three bytes weighs more than a longer one.
pub(crate) const SHORT_WEIGHT: f64 = 2.0;

/// The literals the prefilter looks for, derived from the catalog's patterns: a cover (every
/// pattern contains one of them) chosen greedily among the 4- to 6-byte pieces of the patterns'
/// words, weighing how many patterns a piece covers against how many lines of ordinary output
/// ([`BACKGROUND`]) hold it: `cuda`, `gpu`, `nvrm` or `memory` would make every line of a
/// PyTorch, NCCL or kernel log a candidate, `udaerr` or `fallen` none. Pieces with a quote
/// (typographic quotes are normalised) or a byte outside ASCII (the prefilter lowercases ASCII
/// only) are left out where the pattern has others; a pattern without such pieces is looked for
/// by its longest word (whitespace between words varies). Shorter literals first.
pub(crate) fn cover_of(patterns: &[&str]) -> Cover {
    let mut pats: Vec<&str> = patterns.to_vec();
    pats.sort_unstable();
    pats.dedup();
    let split = PatternPieces::of(&pats);
    let seen = background_counts(&pats, &split.pieces);
    let chosen = greedy_cover(&split, &seen, pats.len());
    group_cover(chosen, &pats, &split, &seen)
}

/// Whether a piece can be a literal of the prefilter: ASCII (the prefilter lowercases ASCII
/// only), no quote (typographic quotes are normalised).
fn fits(x: &str) -> bool {
    x.is_ascii() && !x.contains(['\'', '"'])
}

/// The 3- to 6-byte pieces of the patterns' words, numbered once, and the pieces of each
/// pattern (its longest fitting word where it has no piece).
struct PatternPieces {
    ids: std::collections::HashMap<String, usize>,
    pieces: Vec<String>,
    of_pattern: Vec<Vec<usize>>,
}

impl PatternPieces {
    fn of(pats: &[&str]) -> PatternPieces {
        use std::collections::HashMap;
        let fit = fits;
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut pieces: Vec<String> = Vec::new();
        let mut of_pattern: Vec<Vec<usize>> = Vec::new();
        for p in pats {
            let mut g: Vec<String> = Vec::new();
            for w in p.split(' ') {
                let chars: Vec<(usize, char)> = w.char_indices().collect();
                // A word of three ("xid", "nan", "old") is a piece too, weighed as rarer ones are.
                if chars.len() == 3 && fit(w) && !w.chars().all(|c| c.is_ascii_digit()) {
                    g.push(w.to_string());
                }
                for n in 4..=6 {
                    for i in 0..chars.len().saturating_sub(n - 1) {
                        let (Some(&(a, _)), end) = (chars.get(i), chars.get(i + n)) else {
                            continue;
                        };
                        let b = end.map_or(w.len(), |&(b, _)| b);
                        let x = w.get(a..b).unwrap_or("");
                        let numeric = x.chars().all(|c| c.is_ascii_digit() || c == '.');
                        if !x.is_empty() && !numeric && fit(x) {
                            g.push(x.to_string());
                        }
                    }
                }
            }
            if g.is_empty() {
                let longest = p
                    .split(' ')
                    .filter(|w| fit(w))
                    .max_by_key(|w| (!w.chars().all(|c| c.is_ascii_digit()), w.len()))
                    .unwrap_or(p);
                g.push(longest.to_string());
            }
            g.sort_unstable();
            g.dedup();
            of_pattern.push(
                g.into_iter()
                    .map(|x| {
                        let n = pieces.len();
                        *ids.entry(x.clone()).or_insert_with(|| {
                            pieces.push(x);
                            n
                        })
                    })
                    .collect(),
            );
        }
        PatternPieces {
            ids,
            pieces,
            of_pattern,
        }
    }
}

/// How many lines of ordinary output ([`BACKGROUND`]) hold each piece and each word of 3 to 6
/// bytes of the patterns (for the weak literals' words).
fn background_counts<'a>(
    pats: &[&'a str],
    pieces: &'a [String],
) -> std::collections::HashMap<&'a [u8], u32> {
    use std::collections::HashMap;
    let lowered: Vec<Vec<u8>> = BACKGROUND
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.as_bytes().to_ascii_lowercase())
        .collect();
    // The pieces and the patterns' words (for the weak literals' words): only these are
    // counted, one hash lookup per window of a background line.
    let mut seen: HashMap<&[u8], (u32, usize), std::hash::BuildHasherDefault<WordHasher>> =
        HashMap::default();
    for x in pieces {
        seen.insert(x.as_bytes(), (0, usize::MAX));
    }
    for p in pats {
        for w in p.split(' ') {
            seen.insert(w.as_bytes(), (0, usize::MAX));
        }
    }
    for (n, l) in lowered.iter().enumerate() {
        for len in 3..=6 {
            for w in l.windows(len) {
                if let Some(e) = seen.get_mut(w) {
                    // Each line once.
                    if e.1 != n {
                        *e = (e.0 + 1, n);
                    }
                }
            }
        }
    }
    let seen: HashMap<&[u8], u32> = seen
        .into_iter()
        .filter(|(k, _)| (3..=6).contains(&k.len()))
        .map(|(k, (c, _))| (k, c))
        .collect();
    seen
}

/// A fast hash of short byte strings for [`background_counts`], which looks up every window of
/// 3 to 6 bytes of the background at every start: with the standard library's SipHash that was
/// a third of the cover's instructions. Not for keys an attacker chooses (these are the
/// embedded background's and the catalog's).
#[derive(Default)]
struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            if let Some(d) = w.get_mut(..c.len()) {
                d.copy_from_slice(c);
            }
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write(&n.to_le_bytes());
    }
}

/// The greedy cover: pieces chosen until every pattern holds one.
fn greedy_cover(
    split: &PatternPieces,
    seen: &std::collections::HashMap<&[u8], u32>,
    n_patterns: usize,
) -> Vec<String> {
    let PatternPieces {
        pieces, of_pattern, ..
    } = split;
    let cost: Vec<f64> = pieces
        .iter()
        .map(|x| {
            // Three bytes are in more words than any sample shows.
            let short = if x.len() < 4 { SHORT_WEIGHT } else { 0.0 };
            1.0 + short + BACKGROUND_WEIGHT * f64::from(*seen.get(x.as_bytes()).unwrap_or(&0))
        })
        .collect();
    let mut covers = vec![0usize; pieces.len()];
    for g in of_pattern {
        for &i in g {
            if let Some(c) = covers.get_mut(i) {
                *c += 1;
            }
        }
    }
    // The patterns each piece is in.
    let mut in_patterns: Vec<Vec<usize>> = vec![Vec::new(); pieces.len()];
    for (j, g) in of_pattern.iter().enumerate() {
        for &i in g {
            if let Some(v) = in_patterns.get_mut(i) {
                v.push(j);
            }
        }
    }
    let score = |covers: &[usize], i: usize| -> f64 {
        covers.get(i).copied().unwrap_or(0) as f64 / cost.get(i).copied().unwrap_or(1.0)
    };
    // Greedy: the most patterns covered for the weight; then the longer piece; then the first
    // in order. A piece's score only falls as patterns are covered, so a heap of scores that
    // may be stale gives the best piece once its popped score is still its score (lazy greedy:
    // the same choices as rescoring every piece each round).
    let mut heap: std::collections::BinaryHeap<Ranked> = (0..pieces.len())
        .filter(|&i| covers.get(i).is_some_and(|&c| c > 0))
        .map(|i| Ranked {
            score: score(&covers, i),
            piece: pieces.get(i).map_or("", String::as_str),
            i,
        })
        .collect();
    let mut covered = vec![false; n_patterns];
    let mut chosen: Vec<String> = Vec::new();
    while let Some(top) = heap.pop() {
        if covers.get(top.i).is_none_or(|&c| c == 0) {
            continue;
        }
        let now = score(&covers, top.i);
        if now.total_cmp(&top.score).is_ne() {
            heap.push(Ranked { score: now, ..top });
            continue;
        }
        let best = top.i;
        for &j in in_patterns.get(best).map_or(&[][..], Vec::as_slice) {
            if covered.get(j).copied().unwrap_or(true) {
                continue;
            }
            if let Some(c) = covered.get_mut(j) {
                *c = true;
            }
            for &i in of_pattern.get(j).map_or(&[][..], Vec::as_slice) {
                if let Some(c) = covers.get_mut(i) {
                    *c = c.saturating_sub(1);
                }
            }
        }
        chosen.push(top.piece.to_string());
    }
    chosen
}

/// The chosen literals as the prefilter uses them: the strong ones, shorter first; each weak one (seen in ordinary output) with the words of every
/// pattern it is a piece of, rarest first.
fn group_cover(
    mut chosen: Vec<String>,
    pats: &[&str],
    split: &PatternPieces,
    seen: &std::collections::HashMap<&[u8], u32>,
) -> Cover {
    let PatternPieces {
        ids, of_pattern, ..
    } = split;
    let fit = fits;
    chosen.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    let (weak, strong): (Vec<String>, Vec<String>) = chosen
        .into_iter()
        .partition(|x| seen.get(x.as_bytes()).is_some_and(|&n| n > 0));
    // Each weak literal with the words of every pattern it is a piece of, rarest first.
    let rarity = |w: &str| seen.get(w.as_bytes()).copied().unwrap_or(0);
    let weak = weak
        .into_iter()
        .map(|x| {
            let id = ids.get(&x).copied();
            let mut of: Vec<Vec<String>> = pats
                .iter()
                .zip(of_pattern)
                .filter(|(_, g)| id.is_some_and(|i| g.contains(&i)))
                .map(|(p, _)| {
                    let mut words: Vec<String> = p
                        .split(' ')
                        .filter(|w| !w.is_empty() && fit(w))
                        .map(str::to_string)
                        .collect();
                    words.sort_by_key(|w| (rarity(w), std::cmp::Reverse(w.len())));
                    words.dedup();
                    words
                })
                .collect();
            of.sort();
            of.dedup();
            (x, of)
        })
        .collect();
    Cover { strong, weak }
}

/// A piece of [`cover_of`]'s greedy choice, ordered by its score, then its length, then (first
/// in order is greater) the piece itself.
struct Ranked<'a> {
    score: f64,
    piece: &'a str,
    i: usize,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&o.score)
            .then(self.piece.len().cmp(&o.piece.len()))
            .then(o.piece.cmp(self.piece))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}

impl Eq for Ranked<'_> {}

/// The prefilter's literals ([`cover_of`]).
#[derive(Clone)]
pub(crate) struct Cover {
    /// Literals no line of the background holds: a line with one is a candidate (one pass of
    /// the bigram filter looks for them all).
    pub strong: Vec<String>,
    /// Literals that ordinary lines hold (`alloca` of "cannot allocate memory" is in PyTorch's
    /// "max memory allocated"), each with the words of the patterns it stands for: a line with
    /// one is a candidate only when it also holds every word of one of those patterns (a
    /// pattern in a normalised line has each of its words in the lowercased line).
    pub weak: Vec<(String, Vec<Vec<String>>)>,
}

/// A fingerprint of the patterns a cover is computed from (FNV-1a over the sorted, deduplicated
/// patterns, each ended by a NUL): `logscan` uses the committed cover only for the patterns it
/// was computed from.
pub(crate) fn patterns_hash(patterns: &[&str]) -> u64 {
    let mut v: Vec<&str> = patterns.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in v {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The Rust text of `src/explain/cover_built.rs`: the cover of the built-in catalog, the
/// fingerprint of its patterns, that of the files they were read from (build.rs's
/// `GPUDOCTOR_COVER_INPUTS`) and the kernel-log knowledge's anchors (the catalog's patterns
/// include them, so a change of anchors changes the fingerprint: write the file, build, write it
/// once more) (written by the test `the_built_cover_is_the_computed_one` when
/// `GPUDOCTOR_WRITE_COVER=1`, checked by it otherwise).
#[cfg(test)]
pub(crate) fn render_rust(c: &Cover, hash: u64, inputs: u64, kernel_anchors: &[String]) -> String {
    // Rust slices of string literals (`{:?}` of a str is a Rust string literal).
    let strs = |v: &[String]| -> String {
        let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        format!("&[{}]", items.join(", "))
    };
    let mut out = String::from(
        "// Generated: the prefilter's cover of the built-in explain catalog (src/explain/cover.rs,\n\
         // cover_of). Regenerate with\n\
         //   GPUDOCTOR_WRITE_COVER=1 cargo test --lib explain::logscan::tests::the_built_cover_is_the_computed_one\n\
         // after any change under explain-catalog/ or knowledge/ (twice when the kernel anchors\n\
         // changed: the catalog holds them); the test fails when it is stale.\n",
    );
    out.push_str(&format!(
        "pub(crate) const PATTERNS_HASH: u64 = {hash:#018x};\n"
    ));
    out.push_str(&format!(
        "pub(crate) const INPUTS_HASH: u64 = {inputs:#018x};\n"
    ));
    out.push_str("pub(crate) const STRONG: &[&str] = &[\n");
    for x in &c.strong {
        out.push_str(&format!("    {x:?},\n"));
    }
    out.push_str("];\npub(crate) const WEAK: &[super::BuiltWeak] = &[\n");
    for (x, of) in &c.weak {
        let groups: Vec<String> = of.iter().map(|w| strs(w)).collect();
        out.push_str(&format!("    ({x:?}, &[{}]),\n", groups.join(", ")));
    }
    out.push_str("];\npub(crate) const KERNEL_ANCHORS: &[&str] = &[\n");
    for a in kernel_anchors {
        out.push_str(&format!("    {a:?},\n"));
    }
    out.push_str("];\n");
    out
}
