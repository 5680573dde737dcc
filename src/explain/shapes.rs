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
    let (mut h0, mut h1) = (line.len() as u64, K);
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
