//! The log scan's first stage: one pass over the text whose cost per byte does not depend on how
//! many literals it looks for (the vectorised Teddy searches it replaces were one pass per group
//! of 24 literals, ten groups for the cover of 2026-11-27, about 33 instructions a byte).
//!
//! Each literal is known by the case-folded bigrams at its first [`OFFSETS`] offsets (a
//! shift-and filter on bigram fingerprints, as Hyperscan's FDR does with hashed ones). One table,
//! indexed by a bigram's fingerprint (12 bits), says for each of the offsets which of 8 buckets of
//! literals have that bigram there; a position is a candidate for a bucket when the bigrams at
//! the 4 positions from it all allow it. Per byte of text that is one table read and a few
//! shifts and ANDs, computed a run of [`STEP`] bytes at a time in plain loops that the compiler
//! vectorises but for the table read: no `unsafe`, no target-specific code, the same on every
//! architecture. The few candidates are verified by comparing the literals of their buckets
//! whose first bigram is theirs (ASCII case-insensitively), so what comes out is exactly where
//! the literals are. More literals make more candidates, not more passes.

/// Offsets of a literal the filter checks: the bigrams starting at its first 4 bytes (5 bytes in
/// all). A shorter literal's offsets past its end let every bigram through.
const OFFSETS: usize = 4;
/// Buckets of literals; a table entry holds one byte of bucket bits per offset.
const BUCKETS: usize = 8;
/// Bytes filtered in one run (the scratch arrays stay in the core's first-level cache).
const STEP: usize = 2048;
/// Fingerprints of a bigram: 6 bits a byte ([`class`]), the second byte's 8 bits up (so that a
/// fingerprint is the two bytes' classes read as one little-endian `u16`: one load a position).
/// Of the table's 64 KiB, the quarter that fingerprints use is read.
const DOMAIN: usize = 1 << 14;

/// A byte's fingerprint: its low 5 bits and bit 6, leaving out bit 5, which is all that tells an
/// ASCII capital from its small letter; so a byte and its ASCII lowercase share one (and so do a
/// few unrelated bytes, which only makes a candidate more to verify).
fn class(b: u8) -> u16 {
    u16::from((b & 0x1f) | ((b >> 1) & 0x20))
}

/// The fingerprint of the bigram `a`, `b`.
fn dom(a: u8, b: u8) -> usize {
    usize::from(class(a) | (class(b) << 8))
}

/// What a verified position holds: a strong literal (the line is a candidate), a weak one (the
/// line is one if it holds the words of a pattern the literal stands for), or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Kinds {
    pub strong: bool,
    pub weak: bool,
}

/// The filter over a set of literals (lowercase; any bytes), each strong or weak.
pub(crate) struct Bigrams {
    /// Per bigram fingerprint, one byte per offset (byte `k` for offset `k`): bit `b` set when a
    /// literal of bucket `b` has a bigram of that fingerprint at offset `k` (or ends before it).
    table: Box<[u32; DOMAIN]>,
    /// The literals whose first bigram has a fingerprint, as ranges of `ids` (compressed rows:
    /// `first[d]..first[d + 1]`).
    first: Vec<u32>,
    ids: Vec<u32>,
    lits: Vec<Vec<u8>>,
    weak: Vec<bool>,
    bucket: Vec<u8>,
}

/// Positions whose bigram fingerprint a run needs: its own and the OFFSETS after it.
const RUN: usize = STEP + OFFSETS;

/// Scratch space of [`Bigrams::candidates`], kept by the caller between blocks.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The run's bytes and the OFFSETS + 1 after it.
    bytes: Vec<u8>,
    cls: Vec<u8>,
    entry: Vec<u32>,
    mask: Vec<u8>,
}

impl Scratch {
    /// Sizes the arrays (once).
    fn ready(&mut self) {
        self.bytes.resize(RUN + 1, 0);
        self.cls.resize(RUN + 1, 0);
        self.entry.resize(RUN, 0);
        self.mask.resize(STEP, 0);
    }
}

impl Bigrams {
    /// The filter over `strong` and `weak` literals (ASCII lowercase where ASCII). Literals of any
    /// length are allowed (an empty one is everywhere).
    pub(crate) fn new<S: AsRef<[u8]>>(strong: &[S], weak: &[S]) -> Bigrams {
        let mut lits: Vec<Vec<u8>> = Vec::new();
        let mut is_weak = Vec::new();
        for x in strong {
            lits.push(x.as_ref().to_ascii_lowercase());
            is_weak.push(false);
        }
        for x in weak {
            lits.push(x.as_ref().to_ascii_lowercase());
            is_weak.push(true);
        }
        let bucket = buckets(&lits);
        let mut table = Box::new([0u32; DOMAIN]);
        for (lit, &b) in lits.iter().zip(&bucket) {
            for k in 0..OFFSETS {
                let bit = 1u32 << (8 * k + usize::from(b));
                match (lit.get(k), lit.get(k + 1)) {
                    (Some(&x), Some(&y)) => {
                        if let Some(e) = table.get_mut(dom(x, y)) {
                            *e |= bit;
                        }
                    }
                    // The last byte: any byte may follow it.
                    (Some(&x), None) => {
                        for y in 0..64u16 {
                            if let Some(e) = table.get_mut(usize::from(class(x) | (y << 8))) {
                                *e |= bit;
                            }
                        }
                    }
                    _ => {
                        for e in table.iter_mut() {
                            *e |= bit;
                        }
                    }
                }
            }
        }
        // The literals under the fingerprint of their first bigram (a literal of one byte under
        // all those of its byte, an empty one under all).
        let mut rows: Vec<Vec<u32>> = vec![Vec::new(); DOMAIN];
        for (i, lit) in lits.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            match (lit.first(), lit.get(1)) {
                (Some(&x), Some(&y)) => {
                    if let Some(r) = rows.get_mut(dom(x, y)) {
                        r.push(i);
                    }
                }
                (Some(&x), None) => {
                    for y in 0..64u16 {
                        if let Some(r) = rows.get_mut(usize::from(class(x) | (y << 8))) {
                            r.push(i);
                        }
                    }
                }
                _ => rows.iter_mut().for_each(|r| r.push(i)),
            }
        }
        let mut first = Vec::with_capacity(DOMAIN + 1);
        let mut ids = Vec::new();
        for r in rows {
            first.push(u32::try_from(ids.len()).unwrap_or(u32::MAX));
            ids.extend(r);
        }
        first.push(u32::try_from(ids.len()).unwrap_or(u32::MAX));
        Bigrams {
            table,
            first,
            ids,
            lits,
            weak: is_weak,
            bucket,
        }
    }

    /// Calls `found(p, buckets)` for every position `p` of `text`, ascending, where a literal of
    /// `buckets` may start (every position where one does, and a few more). Bytes past the end of
    /// `text` count as 0 (no literal reaches there: a candidate near the end is only verified).
    pub(crate) fn candidates(
        &self,
        text: &[u8],
        s: &mut Scratch,
        mut found: impl FnMut(usize, u8),
    ) {
        s.ready();
        let mut at = 0usize;
        while at < text.len() {
            let len = STEP.min(text.len() - at);
            // Positions whose fingerprint is needed: the run's and the OFFSETS after it (a short
            // text, such as one line, costs its length, not a whole run).
            let span = len + OFFSETS;
            // The run and the OFFSETS bytes after it (zeros past the end of `text`).
            let have = (span + 1).min(text.len() - at);
            if let (Some(to), Some(from)) = (s.bytes.get_mut(..have), text.get(at..at + have)) {
                to.copy_from_slice(from);
            }
            if let Some(rest) = s.bytes.get_mut(have..span + 1) {
                rest.fill(0);
            }
            // Each byte's fingerprint, then the table entry of the bigram at each position (and
            // at the OFFSETS after the run): the only step the compiler does not vectorise (a
            // gather).
            let (cls, bytes) = (
                s.cls.get_mut(..span + 1).unwrap_or(&mut []),
                s.bytes.get(..span + 1).unwrap_or(&[]),
            );
            for (c, &b) in cls.iter_mut().zip(bytes) {
                *c = class(b) as u8;
            }
            let table = &self.table;
            for (e, w) in s
                .entry
                .get_mut(..span)
                .unwrap_or(&mut [])
                .iter_mut()
                .zip(s.cls.windows(2))
            {
                let d = <[u8; 2]>::try_from(w).map_or(0, u16::from_le_bytes);
                *e = table
                    .get(usize::from(d) & (DOMAIN - 1))
                    .copied()
                    .unwrap_or(u32::MAX);
            }
            // The buckets each position allows: the AND of its offsets' bytes.
            let e = s.entry.get(..span).unwrap_or(&[]);
            let (e0, e1, e2, e3) = (
                e.get(..len).unwrap_or(&[]),
                e.get(1..).unwrap_or(&[]),
                e.get(2..).unwrap_or(&[]),
                e.get(3..).unwrap_or(&[]),
            );
            // Whole words of 8 positions: the positions past `len` are zeroed.
            let words = len.div_ceil(8) * 8;
            let mask = s.mask.get_mut(..words).unwrap_or(&mut []);
            for ((((m, &a), &b), &c), &d) in mask.iter_mut().zip(e0).zip(e1).zip(e2).zip(e3) {
                *m = (a & (b >> 8) & (c >> 16) & (d >> 24)) as u8;
            }
            // Most runs of 8 positions have none; of the others, each candidate's byte is found
            // by counting zero bits.
            if let Some(rest) = mask.get_mut(len..) {
                rest.fill(0);
            }
            for (i, w) in mask.chunks_exact(8).enumerate() {
                let mut v = <[u8; 8]>::try_from(w).map_or(u64::MAX, u64::from_le_bytes);
                while v != 0 {
                    let j = (v.trailing_zeros() / 8) as usize;
                    found(at + 8 * i + j, (v >> (8 * j)) as u8);
                    v &= !(0xff << (8 * j));
                }
            }
            at += len;
        }
    }

    /// The literals whose first two bytes' fingerprint is that of `rest`'s first two: (number,
    /// literal, bucket, weak), to be compared with `rest`.
    fn starting<'a>(
        &'a self,
        rest: &[u8],
    ) -> impl Iterator<Item = (usize, &'a [u8], u8, bool)> + 'a {
        let d = dom(
            rest.first().copied().unwrap_or(0),
            rest.get(1).copied().unwrap_or(0),
        );
        let (a, b) = (
            self.first.get(d).copied().unwrap_or(0) as usize,
            self.first.get(d + 1).copied().unwrap_or(0) as usize,
        );
        self.ids
            .get(a..b)
            .unwrap_or(&[])
            .iter()
            .filter_map(move |&i| {
                let i = i as usize;
                Some((
                    i,
                    self.lits.get(i)?.as_slice(),
                    *self.bucket.get(i)?,
                    *self.weak.get(i)?,
                ))
            })
    }

    /// Which literals of `buckets` (a candidate's, from [`Bigrams::candidates`]) start at `p`
    /// of `text` (ASCII case-insensitively): strong ones, weak ones.
    pub(crate) fn kinds_at(&self, text: &[u8], p: usize, buckets: u8) -> Kinds {
        let mut k = Kinds::default();
        let rest = text.get(p..).unwrap_or(&[]);
        for (_, lit, bk, weak) in self.starting(rest) {
            if buckets & (1 << bk) == 0 || (weak && k.weak) || (!weak && k.strong) {
                continue;
            }
            if rest
                .get(..lit.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(lit))
            {
                if weak {
                    k.weak = true;
                } else {
                    k.strong = true;
                }
                if k.weak && k.strong {
                    break;
                }
            }
        }
        k
    }

    /// Calls `found(i, weak)` for every literal `i` (its number: the strong ones first, in the
    /// order given to [`Bigrams::new`]) of `buckets` that starts at `p` of `text`.
    pub(crate) fn each_at(
        &self,
        text: &[u8],
        p: usize,
        buckets: u8,
        mut found: impl FnMut(usize, bool),
    ) {
        let rest = text.get(p..).unwrap_or(&[]);
        for (i, lit, bk, weak) in self.starting(rest) {
            if buckets & (1 << bk) != 0
                && rest
                    .get(..lit.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(lit))
            {
                found(i, weak);
            }
        }
    }

    /// Whether literal `i` (as [`Bigrams::each_at`] numbers them) starts at `p` of `text`
    /// (ASCII case-insensitively).
    pub(crate) fn is_at(&self, i: usize, text: &[u8], p: usize) -> bool {
        self.lits.get(i).is_some_and(|lit| {
            text.get(p..)
                .and_then(|t| t.get(..lit.len()))
                .is_some_and(|t| t.eq_ignore_ascii_case(lit))
        })
    }

    /// Whether `text` holds a strong literal.
    pub(crate) fn holds_strong(&self, text: &[u8], s: &mut Scratch) -> bool {
        let mut yes = false;
        self.candidates(text, s, |p, m| {
            if !yes && self.kinds_at(text, p, m).strong {
                yes = true;
            }
        });
        yes
    }
}

/// How many offsets of a literal say something: a literal of `n` bytes fixes the bigrams at
/// offsets below `n - 1` and the first byte of the one at `n - 1`.
fn reach(lit: &[u8]) -> usize {
    lit.len().min(OFFSETS + 1)
}

/// The bucket of each literal. Literals that say less (shorter than [`OFFSETS`] + 1 bytes) share
/// buckets only with literals as short, so that they do not make every position a candidate for
/// the longer ones' buckets: bucket 0 for literals of up to 3 bytes, 1 and 2 for those of 4, the
/// rest for longer ones (each group's buckets shared by a greedy choice: the bucket whose table
/// bits the literal adds fewest to). A cover without short or long literals gives their
/// buckets to the others.
fn buckets(lits: &[Vec<u8>]) -> Vec<u8> {
    let group = |l: &[u8]| match reach(l) {
        0..=3 => 0usize,
        4 => 1,
        _ => 2,
    };
    let mut count = [0usize; 3];
    for l in lits {
        if let Some(c) = count.get_mut(group(l)) {
            *c += 1;
        }
    }
    // Buckets per group: 1, 2 and 5 when all are present; a missing group's go to the others.
    let want = [1usize, 2, 5];
    let present: Vec<usize> = (0..3)
        .filter(|&g| count.get(g).copied().unwrap_or(0) > 0)
        .collect();
    let mut per = [0usize; 3];
    for &g in &present {
        if let (Some(p), Some(&w)) = (per.get_mut(g), want.get(g)) {
            *p = w;
        }
    }
    let spare = BUCKETS - per.iter().sum::<usize>();
    if let Some(&g) = present.last() {
        if let Some(p) = per.get_mut(g) {
            *p += spare;
        }
    }
    let mut start = [0usize; 3];
    let mut acc = 0;
    for g in 0..3 {
        if let (Some(s), Some(&p)) = (start.get_mut(g), per.get(g)) {
            *s = acc;
            acc += p;
        }
    }
    // Longer literals first: they fix the most bits.
    let mut order: Vec<usize> = (0..lits.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lits.get(i).map_or(0, |l| l.len())));
    // Per bucket, the (offset, fingerprint) pairs its literals set, as a bit set (a hash set
    // of them was half of this function's cost at every start), and how many.
    let mut bits = vec![0u64; BUCKETS * OFFSETS * DOMAIN / 64];
    let mut size = [0usize; BUCKETS];
    let at = |b: usize, &(k, d): &(usize, usize)| (b * OFFSETS + k) * DOMAIN + d;
    let has = |bits: &[u64], i: usize| bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0);
    let mut out = vec![0u8; lits.len()];
    for i in order {
        let Some(lit) = lits.get(i) else { continue };
        let g = group(lit);
        let (s, n) = (
            start.get(g).copied().unwrap_or(0),
            per.get(g).copied().unwrap_or(1).max(1),
        );
        let keys: Vec<(usize, usize)> = lit
            .windows(2)
            .take(OFFSETS)
            .enumerate()
            .map(|(k, w)| {
                (
                    k,
                    dom(
                        w.first().copied().unwrap_or(0),
                        w.get(1).copied().unwrap_or(0),
                    ),
                )
            })
            .collect();
        let best = (s..s + n)
            .min_by_key(|&b| {
                let new = keys
                    .iter()
                    .filter(|x| b < BUCKETS && !has(&bits, at(b, x)))
                    .count();
                (new, size.get(b).copied().unwrap_or(0))
            })
            .unwrap_or(s)
            .min(BUCKETS - 1);
        for x in &keys {
            let i = at(best, x);
            if !has(&bits, i) {
                if let Some(w) = bits.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
                if let Some(c) = size.get_mut(best) {
                    *c += 1;
                }
            }
        }
        if let Some(o) = out.get_mut(i) {
            *o = best as u8;
        }
    }
    out
}

#[cfg(test)]
#[path = "bigrams_tests.rs"]
mod tests;
