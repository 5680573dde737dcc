//! Every occurrence of a set of literal patterns in a text, found without an automaton: the
//! catalog's first lines are matched with this, and its Aho-Corasick automaton is built only
//! when a text has many lines to match (building it was 42 M instructions, a quarter of
//! `explain --log`'s start-up, for a log that has a handful of candidate lines).
//!
//! Each pattern is filed under its first bytes: one of 4 bytes or more under its first 4, one of
//! 2 or 3 under its first 2, one of 1 byte under that byte. At each position of the text, a
//! bit set of the patterns' first 2 bytes says whether any pattern of 2 bytes or more may start
//! there; the patterns filed under the bytes found there are compared whole. It finds what an
//! Aho-Corasick automaton's overlapping search (standard semantics) finds: every pattern at
//! every place it occurs, overlapping, each of two equal patterns; an empty pattern is not
//! indexed ([`PatternIndex::new`] gives `None`).

/// The patterns, filed by their first bytes.
#[derive(Debug)]
pub(crate) struct PatternIndex {
    pats: Vec<Box<[u8]>>,
    /// Bit `k` set: a pattern of 2 bytes or more starts with the bytes `k.to_le_bytes()`.
    pairs: Vec<u64>,
    /// Bit set of the bytes a 1-byte pattern is.
    singles: [u64; 4],
    /// (first 4 bytes, pattern) of the patterns of 4 bytes or more, sorted.
    long: Vec<(u32, u32)>,
    /// (first 2 bytes, pattern) of the patterns of 2 or 3 bytes, sorted.
    mid: Vec<(u16, u32)>,
    /// (byte, pattern) of the 1-byte patterns, sorted.
    one: Vec<(u8, u32)>,
}

impl PatternIndex {
    /// `None` when a pattern is empty (it occurs everywhere: the automaton's business).
    pub(crate) fn new<S: AsRef<str>>(patterns: &[S]) -> Option<PatternIndex> {
        let mut ix = PatternIndex {
            pats: Vec::with_capacity(patterns.len()),
            pairs: vec![0; 1 << 10],
            singles: [0; 4],
            long: Vec::new(),
            mid: Vec::new(),
            one: Vec::new(),
        };
        for (i, p) in patterns.iter().enumerate() {
            let p = p.as_ref().as_bytes();
            let id = u32::try_from(i).ok()?;
            match *p {
                [] => return None,
                [a] => {
                    set(&mut ix.singles, usize::from(a));
                    ix.one.push((a, id));
                }
                [a, b, ..] => {
                    let k2 = u16::from_le_bytes([a, b]);
                    set(&mut ix.pairs, usize::from(k2));
                    match p.get(..4) {
                        Some(&[a, b, c, d]) => ix.long.push((u32::from_le_bytes([a, b, c, d]), id)),
                        _ => ix.mid.push((k2, id)),
                    }
                }
            }
            ix.pats.push(p.into());
        }
        ix.long.sort_unstable();
        ix.mid.sort_unstable();
        ix.one.sort_unstable();
        Some(ix)
    }

    /// Calls `f(pattern, start, end)` for every occurrence of every pattern in `hay`.
    pub(crate) fn for_each_match(&self, hay: &[u8], mut f: impl FnMut(usize, usize, usize)) {
        let mut check = |id: u32, at: usize| {
            let i = id as usize;
            if let Some(p) = self.pats.get(i) {
                if hay.get(at..).is_some_and(|rest| rest.starts_with(p)) {
                    f(i, at, at + p.len());
                }
            }
        };
        for (at, &a) in hay.iter().enumerate() {
            if get(&self.singles, usize::from(a)) {
                for &(_, id) in filed(&self.one, a) {
                    check(id, at);
                }
            }
            let Some(&b) = hay.get(at + 1) else {
                continue;
            };
            let k2 = u16::from_le_bytes([a, b]);
            if !get(&self.pairs, usize::from(k2)) {
                continue;
            }
            for &(_, id) in filed(&self.mid, k2) {
                check(id, at);
            }
            if let Some(&[_, _, c, d]) = hay.get(at..at + 4) {
                for &(_, id) in filed(&self.long, u32::from_le_bytes([a, b, c, d])) {
                    check(id, at);
                }
            }
        }
    }
}

fn set(bits: &mut [u64], i: usize) {
    if let Some(w) = bits.get_mut(i / 64) {
        *w |= 1 << (i % 64);
    }
}

fn get(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// The entries of a sorted list filed under `key`.
fn filed<K: Ord + Copy>(v: &[(K, u32)], key: K) -> &[(K, u32)] {
    let from = v.partition_point(|&(k, _)| k < key);
    let to = v.partition_point(|&(k, _)| k <= key);
    v.get(from..to).unwrap_or(&[])
}

#[cfg(test)]
#[path = "pattern_index_tests.rs"]
mod tests;
