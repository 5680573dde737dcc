//! Line shapes: the log scan skips a line whose shape it has already found clean.
//!
//! Training, NCCL, kernel and serving logs repeat a few templates whose numbers change. The shape
//! of a line is the line with every ASCII digit replaced by `0` ([`mask`]: a byte-to-byte map,
//! so a shape has the line's length). For any literal `L` and line `y`, `L` occurring in `y`
//! (ASCII case-insensitively) implies that `mask(L)` occurs in `mask(y)` (the map commutes with
//! ASCII lowercasing: digits are not letters). So when the shape of a line `x` holds none of the
//! masked literals (and, for a weak literal, not every masked word of one of its patterns), no
//! line `y` of the same shape holds what the first stage looks for, and such a line is skipped
//! without running the filter: exact by construction, whatever the log. The first line of a shape
//! is checked against the masked cover (`logscan`), the verdict kept in a small cache of shapes
//! ([`ShapeCache`], two ways per set, bounded) that compares the masked bytes, not only a hash,
//! so that a collision cannot skip a line.
//!
//! A line whose shape is new may still repeat a template whose hex ids vary (a serving log's
//! request ids, trace ids, addresses): its token shape ([`mask_tokens`]) masks those too, and is
//! cached apart. That mask depends on a byte's neighbours, so the argument above needs more: the
//! masked cover also holds each literal with the runs of it that a token could cover replaced
//! ([`token_variants`], each a place to check on the real line), the literals made only of hex
//! digits are looked for inside each line's tokens ([`token_spans`]), and the weak literals' words
//! a token could hide count as present on a token shape ([`token_risky`]).

/// A hex token's image in a shape: every byte of it (see [`shape_of`]).
pub(crate) const TOKEN: u8 = 0x1a;

/// Shortest hex token a shape masks.
const HEX_MIN: usize = 4;

/// Longest line (without its newline) whose shape is cached; a longer line is filtered (or, when
/// it is made of `\r`-separated redraws, skipped only if each redraw's shape holds no masked
/// literal at all).
pub(crate) const SHAPE_MAX: usize = 1024;

/// Sets of the cache (a power of two); two shapes a set.
const SETS: usize = 1024;

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// A byte's image in a shape: an ASCII digit is `0`, anything else itself.
pub(crate) fn mask(b: u8) -> u8 {
    if b.is_ascii_digit() {
        b'0'
    } else {
        b
    }
}

/// Writes the shape of `line` into `out` (replacing what it held) and returns its hash. Two
/// plain loops the compiler vectorises: the mask, then the hash of the shape 16 bytes at a time
/// (two independent multiply chains).
pub(crate) fn shape_of(line: &[u8], out: &mut Vec<u8>) -> u64 {
    out.clear();
    out.extend(line.iter().map(|&b| mask(b)));
    hash(out)
}

/// Replaces in `shape` (a line's shape, [`shape_of`]) every hex token byte for byte by
/// [`TOKEN`], making it the line's token shape, and says whether it replaced any (when not, the
/// token shape is the shape). A hex token is a run of at least [`HEX_MIN`] hex digits holding a
/// digit and a letter, touching no word byte on either side except for the `x` of a `0x` that
/// starts a word (request and trace ids, hashes, addresses: `cmpl-9c6a4a08c720-0`, `0x7ffd5a3c`,
/// a UUID's groups), so that the lines of a template that differ only there share a token
/// shape. Unlike the digits' mask this depends on a byte's neighbours: a literal partly or wholly
/// inside a token is not in the token shape as the literal's mask, so the shape check also looks
/// for each literal with its token-able runs replaced ([`token_variants`]) and checks the
/// literals made only of hex digits inside the tokens of each line ([`token_spans`]). Token
/// shapes are cached apart from shapes (the scan asks for one only when a line's shape is new).
/// `runs`: scratch space.
pub(crate) fn mask_tokens(shape: &mut [u8], runs: &mut Vec<(usize, usize)>) -> bool {
    runs.clear();

    // The classes of the three bytes before the one looked at (0 before the line: not a word).
    let (mut p1, mut p2, mut p3) = (0u8, 0u8, 0u8);
    let mut start: Option<(usize, bool)> = None;
    let (mut digit, mut letter) = (false, false);
    let mut close =
        |at: usize, start: &mut Option<(usize, bool)>, right: bool, d: bool, l: bool| {
            if let Some((s, left)) = start.take() {
                if left && right && d && l && at - s >= HEX_MIN {
                    runs.push((s, at));
                }
            }
        };
    for (i, &b) in shape.iter().enumerate() {
        let c = CLASS[usize::from(b)];
        if c & HEX != 0 {
            if start.is_none() {
                let left = p1 & WORD == 0 || (p1 & EX != 0 && p2 & ZERO != 0 && p3 & WORD == 0);
                start = Some((i, left));
                digit = false;
                letter = false;
            }
            digit |= c & ZERO != 0;
            letter |= c & LETTER != 0;
        } else if start.is_some() {
            close(i, &mut start, c & WORD == 0, digit, letter);
        }
        p3 = p2;
        p2 = p1;
        p1 = c;
    }
    close(shape.len(), &mut start, true, digit, letter);
    for &(a, b) in runs.iter() {
        if let Some(r) = shape.get_mut(a..b) {
            r.fill(TOKEN);
        }
    }
    !runs.is_empty()
}

/// Byte classes of [`mask_tokens`] (of a shape: its digits are `0`).
const HEX: u8 = 1;
const ZERO: u8 = 2;
const LETTER: u8 = 4;
const WORD: u8 = 8;
const EX: u8 = 16;
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if c.is_ascii_hexdigit() {
            k |= HEX;
        }
        if c.is_ascii_digit() {
            k |= ZERO;
        }
        if c.is_ascii_hexdigit() && c.is_ascii_alphabetic() {
            k |= LETTER;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            k |= WORD;
        }
        if c == b'x' || c == b'X' {
            k |= EX;
        }
        t[b] = k;
        b += 1;
    }
    t
};

/// The hash of a shape.
pub(crate) fn hash(out: &[u8]) -> u64 {
    let (mut h0, mut h1) = (out.len() as u64, K);
    let mut words = out.chunks_exact(16);
    for w in &mut words {
        let v = u128::from_le_bytes(<[u8; 16]>::try_from(w).unwrap_or([0; 16]));
        h0 = (h0 ^ v as u64).wrapping_mul(K).rotate_left(23);
        h1 = (h1 ^ (v >> 64) as u64).wrapping_mul(K).rotate_left(23);
    }
    let rest = words.remainder();
    let mut pad = [0u8; 16];
    if let Some(p) = pad.get_mut(..rest.len()) {
        p.copy_from_slice(rest);
    }
    let v = u128::from_le_bytes(pad);
    h0 = (h0 ^ v as u64).wrapping_mul(K).rotate_left(23);
    h1 = (h1 ^ (v >> 64) as u64).wrapping_mul(K).rotate_left(23);
    (h0 ^ h1.rotate_left(32)).wrapping_mul(K)
}

/// The spans of a shape's [`TOKEN`] bytes (start, end).
pub(crate) fn token_spans(shape: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let start = i + shape.get(i..)?.iter().position(|&b| b == TOKEN)?;
        let end = start
            + shape
                .get(start..)?
                .iter()
                .position(|&b| b != TOKEN)
                .unwrap_or(shape.len() - start);
        i = end;
        Some((start, end))
    })
}

/// The runs of hex digits in `x` (a masked literal or word, lowercase) that a hex token of a
/// line could cover where `x` occurs: a token touches no word byte (but the `x` of `0x`), so a
/// run can be covered only where it starts `x` or follows a non-word byte or an `x`, and ends
/// `x` or precedes a non-word byte. (start, end) each.
pub(crate) fn token_runs(x: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < x.len() {
        if !x.get(i).is_some_and(u8::is_ascii_hexdigit) {
            i += 1;
            continue;
        }
        let start = i;
        while x.get(i).is_some_and(u8::is_ascii_hexdigit) {
            i += 1;
        }
        // A non-word byte, or the `x` of `0x`, may stand just before a token.
        let left = start == 0
            || x.get(start - 1)
                .is_some_and(|&c| CLASS[usize::from(c)] & (WORD | EX) != WORD);
        let right = x.get(i).is_none_or(|&c| CLASS[usize::from(c)] & WORD == 0);
        if left && right {
            runs.push((start, i));
        }
    }
    runs
}

/// Whether `x` (masked, lowercase) could be partly or wholly hidden by a hex token of a line it
/// occurs in.
pub(crate) fn token_risky(x: &[u8]) -> bool {
    !token_runs(x).is_empty()
}

/// `x` (masked) as the shape of a line holding it may show it: each combination of its token-able
/// runs ([`token_runs`]) replaced by [`TOKEN`] bytes, but `x` itself and the one where `x` is all
/// token (a literal inside a token: [`token_spans`] are checked for those). `None` when `x` has
/// more than [`MAX_RUNS`] such runs (a literal of the cover has at most two): a shape with a
/// token is then never clean.
pub(crate) fn token_variants(x: &[u8]) -> Option<Vec<Vec<u8>>> {
    let runs = token_runs(x);
    if runs.len() > MAX_RUNS {
        return None;
    }
    let mut out = Vec::new();
    for set in 1u32..(1u32 << runs.len()) {
        let mut v = x.to_vec();
        for (k, &(a, b)) in runs.iter().enumerate() {
            if set & (1 << k) != 0 {
                if let Some(r) = v.get_mut(a..b) {
                    r.fill(TOKEN);
                }
            }
        }
        if v.iter().all(|&b| b == TOKEN) {
            continue;
        }
        out.push(v);
    }
    Some(out)
}

/// Most token-able runs of a literal whose variants are listed.
const MAX_RUNS: usize = 4;

/// What the first stage can find in the lines of a shape (computed on the shape with the masked
/// cover, so it may say more than a given line holds, never less).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A masked strong literal, a masked weak literal with every word of one of its patterns, or
    /// a sequence the filter checks again normalised: its lines go through the filter.
    Dirty,
    /// Masked strong literals that hold a digit's mask (`[0,` in `torch.Size([8, 2048])`) at
    /// the places the cache keeps, and maybe masked weak literals but no pattern of theirs
    /// whole: a line of this shape is skipped unless a real literal is at one of those places
    /// (only there can one be); a `\r`-separated piece of a longer line is not skipped.
    Maybe,
    /// No masked literal at all: skipped, as a line or as a piece.
    NoLiteral,
    /// Not judged yet: a shape seen once (its hash only, no bytes: a collision only makes a line
    /// filtered). Its lines are filtered; the shape is judged when a line of it comes again and
    /// holds nothing, so that the lines whose shape never repeats (a random request id) cost
    /// no judging.
    Seen,
}

struct Entry {
    hash: u64,
    verdict: Verdict,
    shape: Vec<u8>,
    /// Of [`Verdict::Maybe`]: where a masked strong literal starts, and its number.
    at: Vec<(u32, u32)>,
}

/// The shapes seen last, with their verdicts: [`SETS`] sets of two, the one used last first.
/// Bounded: at most `2 * SETS` shapes of at most [`SHAPE_MAX`] bytes.
#[derive(Default)]
pub(crate) struct ShapeCache {
    ways: Vec<Option<Entry>>,
}

impl ShapeCache {
    fn set(hash: u64) -> usize {
        2 * ((hash >> 32) as usize & (SETS - 1))
    }

    /// The verdict of `shape` (its hash `hash`) and the places it names, when it is cached.
    pub(crate) fn get(&mut self, hash: u64, shape: &[u8]) -> Option<(Verdict, &[(u32, u32)])> {
        let i = Self::set(hash);
        let ways = self.ways.get_mut(i..i + 2)?;
        let found = ways.iter().position(|e| {
            e.as_ref()
                .is_some_and(|e| e.hash == hash && (e.verdict == Verdict::Seen || e.shape == shape))
        })?;
        if found == 1 {
            ways.swap(0, 1);
        }
        ways.first()?.as_ref().map(|e| (e.verdict, e.at.as_slice()))
    }

    /// Keeps `shape` with its verdict, in front of its set (the set's older shape is dropped).
    pub(crate) fn put(&mut self, hash: u64, shape: &[u8], verdict: Verdict, at: &[(u32, u32)]) {
        if self.ways.is_empty() {
            self.ways.resize_with(2 * SETS, || None);
        }
        let i = Self::set(hash);
        let Some(ways) = self.ways.get_mut(i..i + 2) else {
            return;
        };
        ways.swap(0, 1);
        let (mut bytes, mut places) = ways
            .first_mut()
            .and_then(Option::take)
            .map(|e| (e.shape, e.at))
            .unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(shape);
        places.clear();
        places.extend_from_slice(at);
        if let Some(w) = ways.first_mut() {
            *w = Some(Entry {
                hash,
                verdict,
                shape: bytes,
                at: places,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_the_masked_line_and_equal_shapes_hash_equal() {
        let mut out = Vec::new();
        for len in 0..70 {
            let line: Vec<u8> = (0..len).map(|i| b"ab0123456789:x\r\xc3"[i % 15]).collect();
            let h = shape_of(&line, &mut out);
            let want: Vec<u8> = line.iter().map(|&x| mask(x)).collect();
            assert_eq!(out, want);
            let other: Vec<u8> = line
                .iter()
                .map(|&x| if x.is_ascii_digit() { b'7' } else { x })
                .collect();
            let mut out2 = Vec::new();
            assert_eq!(shape_of(&other, &mut out2), h);
            assert_eq!(out2, out);
        }
    }

    #[test]
    fn the_cache_answers_only_for_the_same_bytes() {
        let mut c = ShapeCache::default();
        let get = |c: &mut ShapeCache, s: &[u8]| c.get(5, s).map(|(v, at)| (v, at.to_vec()));
        let get9 = |c: &mut ShapeCache, s: &[u8]| c.get(9, s).map(|(v, at)| (v, at.to_vec()));
        c.put(5, b"abc", Verdict::NoLiteral, &[]);
        assert_eq!(get(&mut c, b"abc"), Some((Verdict::NoLiteral, vec![])));
        // A collision (same hash, other bytes) is not a hit.
        assert_eq!(get(&mut c, b"abd"), None);
        c.put(5, b"abd", Verdict::Dirty, &[]);
        assert_eq!(get(&mut c, b"abc"), Some((Verdict::NoLiteral, vec![])));
        assert_eq!(get(&mut c, b"abd"), Some((Verdict::Dirty, vec![])));
        // A third shape in the set drops the one used least recently.
        c.put(5, b"abe", Verdict::Maybe, &[(1, 7)]);
        assert_eq!(get(&mut c, b"abc"), None);
        assert_eq!(get(&mut c, b"abd"), Some((Verdict::Dirty, vec![])));
        assert_eq!(get(&mut c, b"abe"), Some((Verdict::Maybe, vec![(1, 7)])));
        // A shape seen once is known by its hash alone.
        c.put(9, b"", Verdict::Seen, &[]);
        assert_eq!(get9(&mut c, b"xyz"), Some((Verdict::Seen, vec![])));
        c.put(9, b"xyz", Verdict::NoLiteral, &[]);
        assert_eq!(get9(&mut c, b"xyz"), Some((Verdict::NoLiteral, vec![])));
        // Another shape of that hash finds the seen one (its lines are only filtered), never
        // the judged one.
        assert_eq!(get9(&mut c, b"xyw"), Some((Verdict::Seen, vec![])));
        // The entry it replaces keeps none of the dropped one's places.
        c.put(5, b"abf", Verdict::NoLiteral, &[]);
        assert_eq!(get(&mut c, b"abf"), Some((Verdict::NoLiteral, vec![])));
    }
}
