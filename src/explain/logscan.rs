//! `explain --log FILE`: scans a log of any size. One pass of a bigram-fingerprint filter
//! ([`Bigrams`]: its cost per byte does not grow with the number of literals) over each block of
//! lines finds where the literals of a small cover of the catalog's patterns may start ([`cover`]:
//! literals chosen against ordinary log text); its candidates are verified exactly, and a line
//! holding a weak literal is a candidate only when it holds every word of one of that literal's
//! patterns ([`WeakWords`]). (Ten Teddy passes over a lowercased copy, one per group of 24
//! literals, did this before: docs/benchmarks.md.) Before the filter, a line whose shape (its
//! digits masked, [`shapes`]) the masked cover finds nothing in is skipped: a cache of shapes per
//! thread makes that one hash, one lookup and one comparison a line on logs that repeat a few
//! templates (exact by construction: a literal in a line has its mask in the line's shape). A
//! regular file of some size is cut into segments of whole lines that several threads search at
//! once ([`scan_file`]); the threads take turns reading a pipe a block of whole lines at a time
//! ([`scan_stream`]); a small file is one stream ([`scan_with`]). The text is searched 128 KiB at
//! a time, so that it is still in the core's cache (reading a 16 MiB segment first cost 17 % more
//! time). A candidate line is decoded
//! and matched against the whole catalog (normalised, as pasted text is) by the thread that found
//! it; what matches is merged in the order of the log, on one thread; of a line longer than
//! [`MAX_LINE`], the window of that size around each hit. The cover of the built-in catalog is
//! computed by src/explain/cover.rs and committed (src/explain/cover_built.rs). Line numbers come
//! from counting newlines with memchr. Each distinct match is reported once, with its count and
//! first line. The built-in catalog itself is loaded at the first candidate line
//! ([`EmbeddedCatalog`]): a log without one costs the filter's tables and no more.

use std::collections::HashMap;
use std::io::Read;

use aho_corasick::{AhoCorasick, Input};

use super::bigrams::{self, Bigrams};
use super::catalog::Catalog;
use super::cover::{cover_of, Cover};
#[cfg(test)]
use super::cover::{BACKGROUND, BACKGROUND_WEIGHT, SHORT_WEIGHT};
use super::shapes::{self, ShapeCache, Verdict, SHAPE_MAX};
use super::{line_matches_of, rank, Match};
use crate::faults::logparse::LogParser;
use crate::matrix::Matrix;

/// Read at a time: small enough that the text and the filter's work stay in the core's cache
/// (a whole segment read first went through memory three times).
const CHUNK: usize = 256 * 1024;
/// Longest line kept whole; of a longer line, the window of this size around each hit is matched.
const MAX_LINE: usize = 64 * 1024;
/// The prefilter searches this much at a time (its hits are sorted and deduplicated a block at a
/// time).
const BLOCK: usize = 128 * 1024;
/// What each thread scans of a regular file in one round.
const SEGMENT: u64 = 16 << 20;
/// Files smaller than this are scanned on one thread.
const PARALLEL_FROM: u64 = 64 << 20;

/// The compatibility matrix that matched lines are explained with (two enrichers read it).
/// The built-in one ([`EmbeddedMatrix`]) is loaded only when one of those first reads it:
/// parsing it was 36 M instructions, a fifth of the start-up of `explain --log` on a log with no
/// error, and as much again at the first matched line of a log with one.
pub trait MatrixSource {
    /// `None`: it cannot be loaded.
    fn matrix(&self) -> Option<&Matrix>;
}

impl MatrixSource for Matrix {
    fn matrix(&self) -> Option<&Matrix> {
        Some(self)
    }
}

/// The built-in matrix, loaded at its first use.
#[derive(Default)]
pub struct EmbeddedMatrix(std::sync::OnceLock<Option<Matrix>>);

impl MatrixSource for EmbeddedMatrix {
    fn matrix(&self) -> Option<&Matrix> {
        self.0.get_or_init(|| Matrix::embedded().ok()).as_ref()
    }
}

pub struct ScanResult {
    pub matches: Vec<Match>,
    pub lines: u64,
    pub bytes: u64,
    /// Its first [`HEAD`] bytes are mostly not text ([`super::catalog::mostly_binary`]): binary
    /// data, as a log file's or a paste's would say.
    pub not_text: bool,
}

/// How much of the start of a log says whether it is text.
const HEAD: usize = 64 << 10;

/// A reader that keeps the first [`HEAD`] bytes it reads.
struct Head<R> {
    r: R,
    head: Vec<u8>,
}

impl<R: Read> Read for Head<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.r.read(buf)?;
        let want = HEAD.saturating_sub(self.head.len()).min(n);
        self.head.extend_from_slice(buf.get(..want).unwrap_or(&[]));
        Ok(n)
    }
}

fn head_not_text(head: &[u8]) -> bool {
    super::catalog::mostly_binary(&String::from_utf8_lossy(head))
}

pub fn scan<R: Read>(r: R, m: &dyn MatrixSource) -> std::io::Result<ScanResult> {
    scan_with(r, m, &EmbeddedCatalog)
}

/// The weak literals ([`Cover::weak`]) and the patterns each stands for: a line passes when it
/// holds a weak literal and every word of one of that literal's patterns. One automaton finds the
/// weak literals and the patterns' words of [`LONG_WORD`] bytes or more (every occurrence,
/// overlapping); only the patterns whose longest word the line holds are checked, their shorter
/// words with a substring search. (A substring search per literal and word cost 29,000 instructions a line on
/// the PyTorch log's "max memory allocated" lines, which hold the weak `memory` and `alloca`:
/// 43 % of that log's scan.)
struct WeakWords {
    /// The weak literals and the patterns' words of [`LONG_WORD`] bytes or more, each once.
    items: Vec<String>,
    /// Their automata, built at their first use: a contiguous NFA, and after [`DFA_AFTER`] lines
    /// a DFA (the same matches).
    nfa: std::sync::OnceLock<Option<AhoCorasick>>,
    dfa: std::sync::OnceLock<Option<AhoCorasick>>,
    /// Per item, the patterns checked when a line holds it (those it is the longest word of, or
    /// the literal of, when they have no word): their literal's item, their words' items, their
    /// shorter words. The last entry: patterns checked always (no word, an empty literal).
    keyed: Vec<Vec<WeakPattern>>,
    /// The words' finders, each once, each built at its first use ([`LazyFinder`]).
    finders: Vec<LazyFinder>,
    /// Lines checked so far, and after how many the DFA is built.
    uses: std::sync::atomic::AtomicUsize,
    dfa_after: usize,
    /// Per weak literal (in the cover's order), when it stands for at most [`FEW`] patterns:
    /// those patterns, each as the finders of all its words, longest first ([`WeakWords::quick`]).
    quick: Vec<Option<Vec<Vec<usize>>>>,
    /// Of the masked words checked on a line shape: the items and finders a hex token of a line
    /// may hide ([`shapes::token_risky`]), counted as present when the shape holds a token.
    /// Empty for the words checked on lines.
    risky_items: Vec<usize>,
    risky_finders: Vec<bool>,
}

/// Of masked words checked on line shapes: the items and the finders' words that a hex token
/// of a line may hide ([`shapes::token_risky`]).
fn risky(items: &[String], finders: &[LazyFinder]) -> (Vec<usize>, Vec<bool>) {
    let lower = |x: &str| x.to_ascii_lowercase().into_bytes();
    (
        (0..items.len())
            .filter(|&i| items.get(i).is_some_and(|x| shapes::token_risky(&lower(x))))
            .collect(),
        finders
            .iter()
            .map(|f| shapes::token_risky(&f.word.to_ascii_lowercase()))
            .collect(),
    )
}

/// A [`WeakWords`] built at its first use: a log whose lines hold no weak literal (or, for the
/// masked cover, no shape seen twice) never needs it; building the two was 12 M instructions of
/// every start.
/// The cover's weak literals, each with the words of the patterns it stands for.
type WeakList = Vec<(String, Vec<Vec<String>>)>;

struct LazyWeak {
    /// Shared by the prefilter and its shape check.
    weak: std::sync::Arc<WeakList>,
    dfa_after: usize,
    /// Every literal and word masked ([`shapes::mask`]) when it is built.
    masked: bool,
    built: std::sync::OnceLock<WeakWords>,
}

impl LazyWeak {
    fn new(weak: std::sync::Arc<WeakList>, dfa_after: usize, masked: bool) -> LazyWeak {
        LazyWeak {
            weak,
            dfa_after,
            masked,
            built: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> &WeakWords {
        self.built.get_or_init(|| {
            if !self.masked {
                return WeakWords::with_dfa_after(&self.weak, self.dfa_after, false);
            }
            let weak: WeakList = self
                .weak
                .iter()
                .map(|(x, of)| {
                    (
                        mask_text(x),
                        of.iter()
                            .map(|ws| ws.iter().map(|w| mask_text(w)).collect())
                            .collect(),
                    )
                })
                .collect();
            WeakWords::with_dfa_after(&weak, self.dfa_after, true)
        })
    }
}

/// A text with every byte masked ([`shapes::mask`]).
fn mask_text(x: &str) -> String {
    String::from_utf8_lossy(&x.bytes().map(shapes::mask).collect::<Vec<u8>>()).into_owned()
}

/// A substring searcher built at its first use: building the weak literals' words' finders
/// eagerly (several hundred, each a Two-Way table and a prefilter) was 14 M instructions of every
/// start, and a log whose lines hold no weak literal uses none of them.
struct LazyFinder {
    word: Box<[u8]>,
    finder: std::sync::OnceLock<memchr::memmem::Finder<'static>>,
}

impl LazyFinder {
    fn new(word: &str) -> LazyFinder {
        LazyFinder {
            word: word.as_bytes().into(),
            finder: std::sync::OnceLock::new(),
        }
    }

    /// Whether the word occurs in `hay`.
    fn is_in(&self, hay: &[u8]) -> bool {
        self.finder
            .get_or_init(|| memchr::memmem::Finder::new(&self.word).into_owned())
            .find(hay)
            .is_some()
    }
}

/// A weak literal standing for this many patterns or fewer is checked alone, at its hit, by a
/// substring search per word ([`WeakWords::quick`]); one standing for more (`memory`, in about a
/// hundred) by the automaton over the whole line.
const FEW: usize = 40;

/// Lines a scan's [`WeakWords`] checks with its NFA before it builds its DFA: a log with a few
/// such lines (most lines skipped by their shape) does not pay for the DFA.
const DFA_AFTER: usize = 256;

/// The shortest word [`WeakWords`]' automaton looks for: shorter ones (`the`, `for`, `not`)
/// are in most lines of prose (a vLLM log's prompts), and each occurrence costs the automaton's
/// overlapping search a stop.
const LONG_WORD: usize = 4;

/// A pattern of a weak literal, as [`WeakWords`] checks it.
struct WeakPattern {
    literal: usize,
    words: Vec<usize>,
    /// Its words shorter than [`LONG_WORD`]: their finders' numbers.
    short: Vec<usize>,
}

/// A line's items, for [`WeakWords::holds`] (kept between lines: only the items seen are reset).
#[derive(Default)]
struct WeakScratch {
    present: Vec<bool>,
    seen: Vec<usize>,
}

impl WeakWords {
    #[cfg(test)]
    fn new(weak: &[(String, Vec<Vec<String>>)]) -> WeakWords {
        Self::with_dfa_after(weak, DFA_AFTER, false)
    }

    /// [`WeakWords::new`] that searches with a quick-to-build automaton (a contiguous NFA) for
    /// its first `dfa_after` lines, then with a DFA (faster to run: a few instructions a byte, but
    /// 33 M instructions to build). `shapes`: the words are masked and checked on line shapes,
    /// whose hex tokens may hide some of them (`risky_items`).
    fn with_dfa_after<'w>(
        weak: &'w [(String, Vec<Vec<String>>)],
        dfa_after: usize,
        shapes: bool,
    ) -> WeakWords {
        // Keyed by the cover's own strings (allocating a key per word was most of this
        // function's 18 M instructions at every start).
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut items: Vec<String> = Vec::new();
        // The item of a text, numbered at its first sight; `usize::MAX` for an empty one (in
        // every line).
        let mut item = |s: &'w str, items: &mut Vec<String>| -> usize {
            if s.is_empty() {
                return usize::MAX;
            }
            *ids.entry(s).or_insert_with(|| {
                items.push(s.to_string());
                items.len() - 1
            })
        };
        let mut keys = Vec::new();
        // One finder a short word (`to`, `the`, `is` are in hundreds of patterns).
        let mut finder_ids: HashMap<&str, usize> = HashMap::new();
        let mut finders: Vec<LazyFinder> = Vec::new();
        let mut quick = Vec::new();
        for (x, pats) in weak {
            quick.push((pats.len() <= FEW).then(|| {
                pats.iter()
                    .map(|ws| {
                        let mut ws: Vec<&String> = ws.iter().filter(|w| !w.is_empty()).collect();
                        ws.sort_by_key(|w| std::cmp::Reverse(w.len()));
                        ws.iter()
                            .map(|&w| {
                                *finder_ids.entry(w.as_str()).or_insert_with(|| {
                                    finders.push(LazyFinder::new(w));
                                    finders.len() - 1
                                })
                            })
                            .collect()
                    })
                    .collect()
            }));
            let literal = item(x, &mut items);
            for ws in pats {
                let (long, short): (Vec<&String>, Vec<&String>) = ws
                    .iter()
                    .filter(|w| !w.is_empty())
                    .partition(|w| w.len() >= LONG_WORD);
                let key = long.iter().max_by_key(|w| w.len()).copied().unwrap_or(x);
                let key = if key.len() >= LONG_WORD || key == x {
                    item(key, &mut items)
                } else {
                    literal
                };
                let pattern = WeakPattern {
                    literal,
                    words: long.iter().map(|&w| item(w, &mut items)).collect(),
                    short: short
                        .iter()
                        .map(|&w| {
                            *finder_ids.entry(w.as_str()).or_insert_with(|| {
                                finders.push(LazyFinder::new(w));
                                finders.len() - 1
                            })
                        })
                        .collect(),
                };
                keys.push((key, pattern));
            }
        }
        let mut keyed: Vec<Vec<WeakPattern>> = (0..=items.len()).map(|_| Vec::new()).collect();
        let always = items.len();
        for (k, pattern) in keys {
            if let Some(v) = keyed.get_mut(if k == usize::MAX { always } else { k }) {
                v.push(pattern);
            }
        }
        // A pattern checked whatever the line holds (no word, an empty literal) is seen only by
        // the whole check.
        if keyed.get(always).is_some_and(|v| !v.is_empty()) {
            quick.iter_mut().for_each(|q| *q = None);
        }
        let (risky_items, risky_finders) = if shapes {
            risky(&items, &finders)
        } else {
            (Vec::new(), Vec::new())
        };
        WeakWords {
            items,
            nfa: std::sync::OnceLock::new(),
            dfa: std::sync::OnceLock::new(),
            uses: std::sync::atomic::AtomicUsize::new(0),
            dfa_after,
            keyed,
            finders,
            quick,
            risky_items,
            risky_finders,
        }
    }

    /// For weak literal `lit` (known to be in `line`), whether `line` (lowercased) holds every
    /// word of one of its patterns: `None` when the literal stands for more than [`FEW`]
    /// patterns (then [`WeakWords::holds`] decides). The same answer as `holds` gives for a line
    /// whose only weak literal is `lit`.
    fn quick(&self, lit: usize, line: &[u8]) -> Option<bool> {
        let pats = self.quick.get(lit)?.as_ref()?;
        Some(pats.iter().any(|ws| {
            ws.iter()
                .all(|&f| self.finders.get(f).is_some_and(|f| f.is_in(line)))
        }))
    }

    /// Whether `line` (lowercased) holds a weak literal and every word of one of its patterns.
    fn holds(&self, line: &[u8], s: &mut WeakScratch) -> bool {
        let (cell, kind) =
            if self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < self.dfa_after {
                (&self.nfa, aho_corasick::AhoCorasickKind::ContiguousNFA)
            } else {
                (&self.dfa, aho_corasick::AhoCorasickKind::DFA)
            };
        let ac = cell.get_or_init(|| {
            AhoCorasick::builder()
                .kind(Some(kind))
                .build(&self.items)
                .ok()
        });
        s.present.resize(self.items.len(), false);
        s.seen.clear();
        let mark = |i: usize, s: &mut WeakScratch| {
            if let Some(p) = s.present.get_mut(i) {
                if !*p {
                    *p = true;
                    s.seen.push(i);
                }
            }
        };
        match ac {
            Some(ac) => {
                for m in ac.find_overlapping_iter(line) {
                    mark(m.pattern().as_usize(), s);
                }
            }
            // No automaton (none is built of no items): each item looked for alone.
            None => {
                for (i, x) in self.items.iter().enumerate() {
                    if memchr::memmem::find(line, x.as_bytes()).is_some() {
                        mark(i, s);
                    }
                }
            }
        }
        // A line shape holding a hex token may hide the risky items there: they count as present
        // (and the patterns they key are checked).
        let token = (!self.risky_items.is_empty() || !self.risky_finders.is_empty())
            && line.contains(&shapes::TOKEN);
        if token {
            for &i in &self.risky_items {
                mark(i, s);
            }
        }
        let has = |i: usize| i == usize::MAX || s.present.get(i).copied().unwrap_or(false);
        let yes = s
            .seen
            .iter()
            .chain(std::iter::once(&self.items.len()))
            .flat_map(|&i| self.keyed.get(i).into_iter().flatten())
            .any(|p| {
                has(p.literal)
                    && p.words.iter().all(|&w| has(w))
                    && p.short.iter().all(|&f| {
                        (token && self.risky_finders.get(f).copied().unwrap_or(true))
                            || self.finders.get(f).is_some_and(|f| f.is_in(line))
                    })
            });
        for &i in &s.seen {
            if let Some(p) = s.present.get_mut(i) {
                *p = false;
            }
        }
        yes
    }
}

/// Finds the lines that may match: one pass of a bigram-fingerprint filter over the catalog's
/// cover literals ([`Bigrams`]), its candidates verified.
struct Prefilter {
    bigrams: Bigrams,
    /// How many of the filter's literals are strong (a weak literal's number in [`Bigrams`] is
    /// this plus its number in the cover).
    strong: usize,
    weak: LazyWeak,
    /// What lowercasing ASCII does not see through: an ANSI escape (normalising drops the
    /// sequence, which may join the pieces of a literal) and the Kelvin sign and capital dotted
    /// I (they lowercase to the ASCII `k` and `i`). A line holding one is checked again,
    /// normalised.
    hidden: AhoCorasick,
    /// The same cover masked ([`shapes`]), to find the line shapes that hold nothing to look
    /// for; `None` when a literal or word holds a line break (a literal across lines would
    /// break the line-by-line argument).
    shapes: Option<ShapeCheck>,
}

/// The cover with every literal and word masked ([`shapes::mask`]): a line shape that this finds
/// nothing in holds nothing that the real cover would find in any line of that shape.
struct ShapeCheck {
    /// The masked strong literals, then their hex-token variants ([`shapes::token_variants`]);
    /// the masked weak literals.
    bigrams: Bigrams,
    weak: LazyWeak,
    /// Per strong literal of `bigrams`: whether its mask holds a `0` or a token byte (a line of a
    /// shape holding it may not hold the literal).
    digits: Vec<bool>,
    /// Per strong literal of `bigrams`: the cover's literal it stands for.
    origin: Vec<u32>,
    /// The strong literals made only of hex digits (lowercase): one may be inside a hex token,
    /// so the tokens of a line of a shape holding one are checked for them.
    inside: Vec<Vec<u8>>,
    /// A weak literal a hex token may hide: a shape holding a token has its weak words checked.
    weak_risky: bool,
    /// A literal with too many token-able runs to list its variants: a shape holding a token
    /// is dirty.
    token_dirty: bool,
}

/// What [`Prefilter::look`] says of a line.
enum Look {
    Skip,
    Filter,
    /// A shape not in the cache, with its hash: filter the line, remember the shape as seen.
    /// `true`: a token shape ([`shapes::mask_tokens`]), kept in its own cache.
    First(u64, bool),
    /// A shape seen once (in the scratch's `shape`), with its hash: filter the line alone, and
    /// judge the shape if the line holds nothing.
    New(u64, bool),
}

/// Most places of masked strong literals a shape's verdict keeps; a shape with more is dirty.
const MAYBE_MAX: usize = 16;

/// Scratch space of a scanning thread: the filter's, and a lowercased line for the weak
/// literals' words.
#[derive(Default)]
struct Scratch {
    filter: bigrams::Scratch,
    line: Vec<u8>,
    weak: WeakScratch,
    shapes: ShapeCache,
    /// The token shapes ([`shapes::mask_tokens`]) of lines whose shape was new.
    token_shapes: ShapeCache,
    /// [`shapes::mask_tokens`]' scratch space.
    runs: Vec<(usize, usize)>,
    /// The shape (or token shape) of the line being looked at.
    shape: Vec<u8>,
    /// The places of masked strong literals in that shape ([`Verdict::Maybe`]).
    at: Vec<(u32, u32)>,
}

impl Scratch {
    /// The cache of shapes, or (`tokens`) of token shapes, with the shape and places of the line
    /// being looked at.
    fn cache_of(&mut self, tokens: bool) -> (&mut ShapeCache, &[u8], &[(u32, u32)]) {
        let cache = if tokens {
            &mut self.token_shapes
        } else {
            &mut self.shapes
        };
        (cache, &self.shape, &self.at)
    }
}

/// [`cover_of`] the patterns of `cat`.
pub(crate) fn cover(cat: &Catalog) -> Cover {
    cover_of(&cover_patterns(cat))
}

/// The patterns the cover must find: every signature's, and each mined message family's anchor
/// (a pattern of its signature, explain::catalog).
fn cover_patterns(cat: &Catalog) -> Vec<&str> {
    cat.signatures
        .iter()
        .flat_map(|s| s.patterns.iter().map(String::as_str))
        .chain(cat.families.iter().filter_map(|(_, f)| f.anchor()))
        .collect()
}

/// The committed cover, when `cat`'s patterns are the ones it was computed from (the built-in
/// catalog, or a copy of it given with `--catalog`).
fn built_cover(cat: &Catalog) -> Option<Cover> {
    if super::cover::patterns_hash(&cover_patterns(cat)) != super::catalog::built::PATTERNS_HASH {
        return None;
    }
    Some(committed_cover())
}

/// The committed cover (src/explain/cover_built.rs).
fn committed_cover() -> Cover {
    use super::catalog::built;
    let owned = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    Cover {
        strong: owned(built::STRONG),
        weak: built::WEAK
            .iter()
            .map(|(x, of)| (x.to_string(), of.iter().map(|w| owned(w)).collect()))
            .collect(),
    }
}

/// The catalog a scan matches its candidate lines with: one at hand ([`Catalog`]), or the
/// built-in one, loaded at the first candidate line ([`EmbeddedCatalog`]).
pub trait CatalogSource: Sync {
    /// `None`: it cannot be loaded.
    fn catalog(&self) -> Option<&Catalog>;

    /// Whether the prefilter's cover is the committed one (src/explain/cover_built.rs), known
    /// without loading the catalog.
    fn has_committed_cover(&self) -> bool {
        false
    }
}

impl CatalogSource for Catalog {
    fn catalog(&self) -> Option<&Catalog> {
        Some(self)
    }
}

/// The built-in catalog, loaded when a line first needs it: loading it (the signatures, the
/// knowledge's patterns, the message families) was most of `explain --log`'s start-up, and a log
/// without a candidate line needs none of it. Its cover is the committed one when that was
/// computed from the files this binary embeds ([`super::catalog::built_cover_is_current`]);
/// otherwise the catalog is loaded at the start, as any other, and the cover checked against it.
pub struct EmbeddedCatalog;

impl CatalogSource for EmbeddedCatalog {
    fn catalog(&self) -> Option<&Catalog> {
        super::embedded_catalog()
    }

    fn has_committed_cover(&self) -> bool {
        super::catalog::built_cover_is_current()
    }
}

/// The error of a scan whose catalog could not be loaded.
fn no_catalog() -> std::io::Error {
    std::io::Error::other(
        "internal error: the built-in explain catalog does not load; please report it",
    )
}

impl Prefilter {
    fn new(source: &dyn CatalogSource) -> std::io::Result<Prefilter> {
        if source.has_committed_cover() {
            return Self::of_owned_cover(committed_cover());
        }
        let cat = source.catalog().ok_or_else(no_catalog)?;
        // The built-in catalog's cover is the committed one (catalog::built); any other's is
        // computed, once a process for the built-in one (the fuzzers scan thousands of times).
        static EMBEDDED: std::sync::OnceLock<Cover> = std::sync::OnceLock::new();
        let cover = match super::embedded_catalog() {
            Some(e) if std::ptr::eq(e, cat) => EMBEDDED
                .get_or_init(|| built_cover(cat).unwrap_or_else(|| cover(cat)))
                .clone(),
            _ => built_cover(cat).unwrap_or_else(|| cover(cat)),
        };
        Self::of_cover(&cover)
    }

    fn of_cover(cover: &Cover) -> std::io::Result<Prefilter> {
        Self::of_owned_cover(cover.clone())
    }

    fn of_owned_cover(cover: Cover) -> std::io::Result<Prefilter> {
        let Cover { strong, weak } = cover;
        let weak = std::sync::Arc::new(weak);
        let strong_lits: Vec<&str> = strong.iter().map(String::as_str).collect();
        let weak_lits: Vec<&str> = weak.iter().map(|(x, _)| x.as_str()).collect();
        let hidden = AhoCorasick::new(["\u{1b}", "\u{212a}", "\u{130}"])
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Prefilter {
            bigrams: Bigrams::new(&strong_lits, &weak_lits),
            strong: strong.len(),
            shapes: ShapeCheck::of_cover(&strong, &weak),
            weak: LazyWeak::new(weak, DFA_AFTER, false),
            hidden,
        })
    }

    /// [`Prefilter::of_cover`] without the line-shape cache: every line is filtered (the
    /// reference the cache is tested against).
    #[cfg(test)]
    fn without_shapes(cover: &Cover) -> std::io::Result<Prefilter> {
        let mut p = Self::of_cover(cover)?;
        p.shapes = None;
        Ok(p)
    }

    /// What to do with `line` (without its newline), from its shape (or, for a long line of
    /// `\r`-separated redraws, each redraw's): skip it, filter it, or (a shape not in the cache,
    /// left in `s.shape`, with its hash) filter it and then judge the shape if the line holds
    /// nothing.
    fn look(&self, sc: &ShapeCheck, line: &[u8], s: &mut Scratch) -> Look {
        if line.len() <= SHAPE_MAX {
            let h = shapes::shape_of(line, &mut s.shape);
            if let Some(look) = self.cached(sc, line, s, h, false) {
                return look;
            }
            // A new shape: where it holds hex tokens (a request id), the line's token shape is
            // looked up instead.
            if !shapes::mask_tokens(&mut s.shape, &mut s.runs) {
                return Look::First(h, false);
            }
            let h = shapes::hash(&s.shape);
            return self
                .cached(sc, line, s, h, true)
                .unwrap_or(Look::First(h, true));
        }
        if memchr::memchr(b'\r', line).is_none() {
            return Look::Filter;
        }
        let clean = line.split(|&b| b == b'\r').all(|piece| {
            if piece.len() > SHAPE_MAX {
                return false;
            }
            let h = shapes::shape_of(piece, &mut s.shape);
            let v = match s.shapes.get(h, &s.shape) {
                Some((v, _)) if v != Verdict::Seen => v,
                _ => {
                    let v = self.judge(sc, s);
                    s.shapes.put(h, &s.shape, v, &s.at);
                    v
                }
            };
            v == Verdict::NoLiteral
        });
        if clean {
            Look::Skip
        } else {
            Look::Filter
        }
    }

    /// What the cache of shapes (or, `tokens`, of token shapes) says of `line`, whose shape (of
    /// hash `h`) is in `s.shape`: `None` when the shape is not in it.
    fn cached(
        &self,
        sc: &ShapeCheck,
        line: &[u8],
        s: &mut Scratch,
        h: u64,
        tokens: bool,
    ) -> Option<Look> {
        let (cache, shape, _) = s.cache_of(tokens);
        Some(match cache.get(h, shape)? {
            (Verdict::Seen, _) => Look::New(h, tokens),
            (v, at) if self.clean(sc, v, at, line, tokens.then_some(shape)) => Look::Skip,
            _ => Look::Filter,
        })
    }

    /// Whether a line of a shape with verdict `v` (and, for [`Verdict::Maybe`], the places `at`
    /// of the masked strong literals; `token_shape`: the line's token shape when `v` is a token
    /// shape's, whose tokens are checked for the literals made only of hex digits) holds nothing
    /// the first stage looks for: none of those
    /// literals is really at its place.
    fn clean(
        &self,
        sc: &ShapeCheck,
        v: Verdict,
        at: &[(u32, u32)],
        line: &[u8],
        token_shape: Option<&[u8]>,
    ) -> bool {
        match v {
            Verdict::Dirty | Verdict::Seen => false,
            Verdict::NoLiteral => true,
            Verdict::Maybe => {
                !at.iter()
                    .any(|&(p, i)| self.bigrams.is_at(i as usize, line, p as usize))
                    && token_shape.is_none_or(|t| !Self::inside_tokens(sc, line, t))
            }
        }
    }

    /// Whether a strong literal made only of hex digits is inside one of the hex tokens of
    /// `line` (its shape `shape`).
    fn inside_tokens(sc: &ShapeCheck, line: &[u8], shape: &[u8]) -> bool {
        shapes::token_spans(shape).any(|(a, b)| {
            let span = line.get(a..b).unwrap_or(&[]);
            sc.inside
                .iter()
                .any(|x| !x.is_empty() && span.windows(x.len()).any(|w| w.eq_ignore_ascii_case(x)))
        })
    }

    /// What the masked cover finds in the shape in `s.shape` (the places of its strong
    /// literals, for [`Verdict::Maybe`], in `s.at`).
    fn judge(&self, sc: &ShapeCheck, s: &mut Scratch) -> Verdict {
        s.at.clear();
        let shape = &s.shape;
        if self.hidden.is_match(shape.as_slice()) {
            return Verdict::Dirty;
        }
        let token = shape.contains(&shapes::TOKEN);
        if token && sc.token_dirty {
            return Verdict::Dirty;
        }
        let (mut sure, mut weak) = (false, token && sc.weak_risky);
        let at = &mut s.at;
        sc.bigrams.candidates(shape, &mut s.filter, |p, buckets| {
            if sure {
                return;
            }
            sc.bigrams.each_at(shape, p, buckets, |i, is_weak| {
                if is_weak {
                    weak = true;
                } else if !sc.digits.get(i).copied().unwrap_or(true) || at.len() >= MAYBE_MAX {
                    // A literal without a digit's or a token's mask is in every line of this
                    // shape (or too many places to check).
                    sure = true;
                } else {
                    let o = sc.origin.get(i).copied().unwrap_or(u32::MAX);
                    if !at.contains(&(p as u32, o)) {
                        at.push((p as u32, o));
                    }
                }
            });
        });
        if sure {
            return Verdict::Dirty;
        }
        if weak {
            s.line.clear();
            s.line.extend(shape.iter().map(u8::to_ascii_lowercase));
            if sc.weak.get().holds(&s.line, &mut s.weak) {
                return Verdict::Dirty;
            }
        }
        if s.at.is_empty() && !weak && (!token || sc.inside.is_empty()) {
            Verdict::NoLiteral
        } else {
            Verdict::Maybe
        }
    }

    /// Whether a line, normalised as the catalog matches it, holds a literal (a weak one with
    /// the words of one of its patterns).
    fn holds_normalised(&self, line: &[u8], s: &mut Scratch) -> bool {
        let n = super::catalog::normalise(&String::from_utf8_lossy(line));
        let n = n.as_bytes();
        self.bigrams.holds_strong(n, &mut s.filter) || self.weak.get().holds(n, &mut s.weak)
    }

    /// The start of every line of `text` (whole lines) that holds a literal, ascending, each
    /// once (of a line longer than [`MAX_LINE`], the start of the window around each hit).
    fn candidates(&self, text: &[u8], s: &mut Scratch, starts: &mut Vec<usize>) {
        let mut from = 0usize;
        while from < text.len() {
            // A block of whole lines (or a cut where one line is longer than the block).
            let mut to = (from + BLOCK).min(text.len());
            if to < text.len() {
                if let Some(i) = memchr::memrchr(b'\n', text.get(from..to).unwrap_or(&[])) {
                    to = from + i + 1;
                }
            }
            let block = text.get(from..to).unwrap_or(&[]);
            let first = starts.len();
            match &self.shapes {
                // The lines whose shape is clean are skipped; each run of the others is
                // filtered as the whole block would be (what the filter finds in a line
                // depends only on the line: no literal holds a line break).
                Some(sc) => {
                    let mut run: Option<usize> = None;
                    let mut at = 0usize;
                    let mut ends = memchr::memchr_iter(b'\n', block);
                    while at < block.len() {
                        let (body, next) = match ends.next() {
                            Some(i) => (block.get(at..i).unwrap_or(&[]), i + 1),
                            None => (block.get(at..).unwrap_or(&[]), block.len()),
                        };
                        let look = self.look(sc, body, s);
                        if let Look::First(h, tokens) = look {
                            s.cache_of(tokens).0.put(h, &[], Verdict::Seen, &[]);
                        }
                        if matches!(look, Look::Filter | Look::First(..)) {
                            run.get_or_insert(at);
                            at = next;
                            continue;
                        }
                        if let Some(r) = run.take() {
                            self.filter_run(block.get(r..at).unwrap_or(&[]), from + r, s, starts);
                        }
                        if let Look::New(h, tokens) = look {
                            // The line is filtered alone; its shape is judged (and cached) only
                            // when the line holds nothing: a shape of lines that hold literals
                            // (a prompt holding `low` of "following") costs no judging.
                            let had = starts.len();
                            self.filter_run(
                                block.get(at..next).unwrap_or(&[]),
                                from + at,
                                s,
                                starts,
                            );
                            if starts.len() == had {
                                let v = self.judge(sc, s);
                                let (cache, shape, at) = s.cache_of(tokens);
                                cache.put(h, shape, v, at);
                            }
                        }
                        at = next;
                    }
                    if let Some(r) = run {
                        self.filter_run(block.get(r..).unwrap_or(&[]), from + r, s, starts);
                    }
                }
                None => self.filter_run(block, from, s, starts),
            }
            if let Some(new) = starts.get_mut(first..) {
                new.sort_unstable();
            }
            if starts.len() > first {
                // Dedup only the new ones: earlier blocks end before this one starts.
                let mut tail: Vec<usize> = starts.drain(first..).collect();
                tail.dedup();
                starts.extend(tail);
            }
            from = to;
        }
    }

    /// Pushes to `starts` the start (plus `from`) of every line of `block` (whole lines, or a
    /// cut of a line longer than a block) that holds a literal, in no order, maybe twice.
    fn filter_run(&self, block: &[u8], from: usize, s: &mut Scratch, starts: &mut Vec<usize>) {
        {
            // The window of MAX_LINE around a hit: its start (the line's, in a shorter line) and
            // its end (the line's end).
            let window = |hit: usize| -> (usize, usize) {
                let start = memchr::memrchr(b'\n', block.get(..hit).unwrap_or(&[]))
                    .map(|i| i + 1)
                    .unwrap_or(0)
                    .max(hit.saturating_sub(MAX_LINE / 2));
                let stop = memchr::memchr(b'\n', block.get(hit..).unwrap_or(&[]))
                    .map(|i| hit + i)
                    .unwrap_or(block.len())
                    .min(start + MAX_LINE);
                (start, stop)
            };
            // Where the next strong and weak hits count from: one hit a line is enough (in a
            // longer line, one a half window).
            let (mut strong_from, mut weak_from) = (0usize, 0usize);
            let (bigrams, weak, n_strong) = (&self.bigrams, &self.weak, self.strong);
            let (line, ws) = (&mut s.line, &mut s.weak);
            // The window `line` holds lowercased (its start and stop in `block`).
            let mut lowered: Option<(usize, usize)> = None;
            bigrams.candidates(block, &mut s.filter, |p, buckets| {
                if p < strong_from && p < weak_from {
                    return;
                }
                let k = bigrams.kinds_at(block, p, buckets);
                if k.strong && p >= strong_from {
                    let (start, stop) = window(p);
                    starts.push(from + start);
                    strong_from = (stop + 1).min(p + MAX_LINE / 2);
                }
                if k.weak && p >= weak_from {
                    // The line of the hit (or in a longer one the window around it): a candidate
                    // when, for a weak literal it holds, it holds every word of one of that
                    // literal's patterns.
                    let (start, stop) = window(p);
                    if lowered != Some((start, stop)) {
                        line.clear();
                        line.extend(
                            block
                                .get(start..stop)
                                .unwrap_or(&[])
                                .iter()
                                .map(u8::to_ascii_lowercase),
                        );
                        lowered = Some((start, stop));
                    }
                    // The literals at this hit, checked alone when each stands for few
                    // patterns: the line's later hits are then checked too (not skipped), so
                    // that every weak literal it holds is looked at, as `holds` would.
                    let mut alone = Some(false);
                    bigrams.each_at(block, p, buckets, |i, is_weak| {
                        if is_weak {
                            let q = weak.get().quick(i.saturating_sub(n_strong), line);
                            alone = match (alone, q) {
                                (Some(a), Some(b)) => Some(a || b),
                                _ => None,
                            };
                        }
                    });
                    match alone {
                        Some(true) => {
                            starts.push(from + start);
                            weak_from = (stop + 1).min(p + MAX_LINE / 2).max(p + 1);
                        }
                        Some(false) => weak_from = p + 1,
                        None => {
                            if weak.get().holds(line, ws) {
                                starts.push(from + start);
                            }
                            weak_from = (stop + 1).min(p + MAX_LINE / 2).max(p + 1);
                        }
                    }
                }
            });
            let mut pos = 0usize;
            while let Some(h) = self.hidden.find(Input::new(block).range(pos..)) {
                let (start, stop) = window(h.start());
                if self.holds_normalised(block.get(start..stop).unwrap_or(&[]), s) {
                    starts.push(from + start);
                }
                pos = (stop + 1).min(block.len()).max(h.end());
            }
        }
    }
}

impl ShapeCheck {
    /// The masked cover's filter; `None` when a literal or a word holds `\n` or `\r`.
    fn of_cover(strong: &[String], weak: &std::sync::Arc<WeakList>) -> Option<ShapeCheck> {
        let masked = mask_text;
        let breaks = |x: &String| x.bytes().any(|b| b == b'\n' || b == b'\r');
        if strong.iter().any(breaks)
            || weak
                .iter()
                .any(|(x, of)| breaks(x) || of.iter().flatten().any(breaks))
        {
            return None;
        }
        let masked_strong: Vec<Vec<u8>> = strong
            .iter()
            .map(|x| masked(x).to_ascii_lowercase().into_bytes())
            .collect();
        let weak_lits: Vec<Vec<u8>> = weak
            .iter()
            .map(|(x, _)| masked(x).to_ascii_lowercase().into_bytes())
            .collect();
        let mut lits: Vec<Vec<u8>> = Vec::new();
        let mut digits = Vec::new();
        let mut origin = Vec::new();
        let mut inside = Vec::new();
        let mut token_dirty = false;
        for (i, m) in masked_strong.iter().enumerate() {
            lits.push(m.clone());
            digits.push(m.contains(&b'0'));
            origin.push(i as u32);
            match shapes::token_variants(m) {
                Some(vs) => {
                    for v in vs {
                        lits.push(v);
                        digits.push(true);
                        origin.push(i as u32);
                    }
                }
                None => token_dirty = true,
            }
            if !m.is_empty() && m.iter().all(u8::is_ascii_hexdigit) {
                if let Some(x) = strong.get(i) {
                    inside.push(x.to_ascii_lowercase().into_bytes());
                }
            }
        }
        let weak_risky = weak_lits.iter().any(|x| shapes::token_risky(x));
        token_dirty |= weak_lits
            .iter()
            .any(|x| shapes::token_variants(x).is_none());
        Some(ShapeCheck {
            bigrams: Bigrams::new(&lits, &weak_lits),
            // Checked once a shape: an automaton quick to build (the DFA took 33 M instructions);
            // the words masked when it is built.
            weak: LazyWeak::new(std::sync::Arc::clone(weak), usize::MAX, true),
            digits,
            origin,
            inside,
            weak_risky,
            token_dirty,
        })
    }
}
/// What one thread found in its segment: the lines that match (the newlines before each, its
/// text, the signatures), the newlines, the last byte.
type Segment = (Vec<(u64, String, Vec<usize>)>, u64, Option<u8>);

/// Hands each candidate line of whole lines `text` (cut to [`MAX_LINE`]) to `found`, with the
/// newlines before it in `text`; returns the newlines of all `text`.
fn candidate_lines(
    pre: &Prefilter,
    text: &[u8],
    scratch: &mut Scratch,
    mut found: impl FnMut(u64, &[u8]),
) -> u64 {
    let mut starts = Vec::new();
    pre.candidates(text, scratch, &mut starts);
    let mut counted_to = 0usize;
    let mut before = 0u64;
    for start in starts {
        let stop = memchr::memchr(b'\n', text.get(start..).unwrap_or(&[]))
            .map(|i| start + i)
            .unwrap_or(text.len());
        before +=
            memchr::memchr_iter(b'\n', text.get(counted_to..start).unwrap_or(&[])).count() as u64;
        counted_to = start;
        found(
            before,
            text.get(start..stop.min(start + MAX_LINE)).unwrap_or(&[]),
        );
    }
    before + memchr::memchr_iter(b'\n', text.get(counted_to..).unwrap_or(&[])).count() as u64
}

/// The signatures a line matches ([`Catalog::matches`]); none when the catalog cannot be loaded
/// (the collector then says so).
fn matches(cat: &dyn CatalogSource, line: &str) -> Vec<usize> {
    cat.catalog().map(|c| c.matches(line)).unwrap_or_default()
}

/// A matrix source that remembers whether it failed to give the matrix (an enricher that reads
/// it then has no matrix; the scan reports that as an internal error).
struct Watched<'a> {
    inner: &'a dyn MatrixSource,
    failed: std::cell::Cell<bool>,
}

impl MatrixSource for Watched<'_> {
    fn matrix(&self) -> Option<&Matrix> {
        let m = self.inner.matrix();
        if m.is_none() {
            self.failed.set(true);
        }
        m
    }
}

/// Matches candidate lines in their order (the kernel-log parser keeps state across lines) and
/// merges what they show: each distinct match once, with its count and first line.
struct Collector<'a> {
    cat: &'a dyn CatalogSource,
    /// A candidate line came and the catalog could not be loaded.
    no_catalog: bool,
    /// Loaded by the enrichers that read it, at their first line.
    matrix: Watched<'a>,
    parser: LogParser,
    found: HashMap<String, usize>,
    out: Vec<Match>,
}

impl<'a> Collector<'a> {
    fn new(cat: &'a dyn CatalogSource, matrix: &'a dyn MatrixSource) -> Self {
        Collector {
            cat,
            no_catalog: false,
            matrix: Watched {
                inner: matrix,
                failed: std::cell::Cell::new(false),
            },
            parser: LogParser::new(),
            found: HashMap::new(),
            out: Vec::new(),
        }
    }

    fn line(&mut self, line_no: u64, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw);
        let hits = matches(self.cat, &text);
        self.line_of(line_no, &text, hits);
    }

    /// A line whose matching signatures are known (`hits`, none skipped).
    fn line_of(&mut self, line_no: u64, text: &str, hits: Vec<usize>) {
        let Some(cat) = self.cat.catalog() else {
            self.no_catalog = true;
            return;
        };
        for mut x in line_matches_of(cat, text, hits, &self.matrix, &mut self.parser) {
            match self.found.get(&x.key) {
                Some(&i) => {
                    if let Some(e) = self.out.get_mut(i) {
                        e.count = Some(e.count.unwrap_or(1) + 1);
                    }
                }
                None => {
                    x.count = Some(1);
                    x.first_line = Some(line_no);
                    self.found.insert(x.key.clone(), self.out.len());
                    self.out.push(x);
                }
            }
        }
    }

    fn finish(mut self, lines: u64, bytes: u64, not_text: bool) -> std::io::Result<ScanResult> {
        if self.no_catalog {
            return Err(no_catalog());
        }
        if self.matrix.failed.get() {
            return Err(std::io::Error::other(
                "internal error: the built-in compatibility matrix does not load; please report it",
            ));
        }
        rank(&mut self.out);
        Ok(ScanResult {
            matches: self.out,
            lines,
            bytes,
            not_text,
        })
    }
}

/// [`scan`] with a given catalog, one thread, from any reader (a pipe, standard input).
pub fn scan_with<R: Read>(
    r: R,
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
) -> std::io::Result<ScanResult> {
    let pre = Prefilter::new(cat)?;
    let mut col = Collector::new(cat, m);
    let mut r = Head {
        r,
        head: Vec::new(),
    };
    let (newlines, bytes, last) =
        stream_candidates(&mut r, &pre, |before, raw| col.line(before + 1, raw))?;
    let lines = newlines + u64::from(bytes > 0 && last != Some(b'\n'));
    col.finish(lines, bytes, head_not_text(&r.head))
}

/// What a scanning thread reads of a pipe at a time: whole lines (a line longer than this
/// is cut, as a segment of a file is).
const PIPE_BLOCK: usize = 1 << 20;

/// What one scanning thread found in one block of a stream: its number, the lines that match
/// (the newlines before each in the block, the text, the signatures), its newlines.
type Scanned = (usize, Found, u64);

/// The lines of a block that match: the newlines before each in the block, the text, the
/// signatures.
type Found = Vec<(u64, String, Vec<usize>)>;

/// Scanning threads for a stream (`threads` 0 = one per CPU, `GPUDOCTOR_SCAN_THREADS` overrides).
fn scan_threads(threads: usize) -> usize {
    match threads {
        0 => std::env::var("GPUDOCTOR_SCAN_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        n => n,
    }
    .min(16)
}

/// [`scan_with`] on several threads, for a stream that cannot be read at an offset (a pipe,
/// standard input): `threads` scanning threads take turns reading the next block of whole lines
/// ([`PIPE_BLOCK`]) and each searches and matches its own block; this thread matches
/// what they found in the log's order. One block a thread is held at once. One thread, or
/// `threads` < 2, is [`scan_with`].
pub fn scan_stream<R: Read + Send>(
    r: R,
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
    threads: usize,
) -> std::io::Result<ScanResult> {
    scan_stream_in(r, m, cat, scan_threads(threads), PIPE_BLOCK)
}

/// [`scan_stream`] with blocks of `block` bytes.
fn scan_stream_in<R: Read + Send>(
    r: R,
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
    threads: usize,
    block: usize,
) -> std::io::Result<ScanResult> {
    if threads < 2 {
        return scan_with(r, m, cat);
    }
    let pre = Prefilter::new(cat)?;
    let mut col = Collector::new(cat, m);
    let src = std::sync::Mutex::new(Source {
        r: Head {
            r,
            head: Vec::new(),
        },
        carry: Vec::new(),
        next: 0,
        bytes: 0,
        last: None,
        eof: false,
    });
    let (done_tx, done_rx) = std::sync::mpsc::channel::<std::io::Result<Scanned>>();
    let mut order = InOrder {
        col: &mut col,
        waiting: std::collections::BTreeMap::new(),
        next: 0,
        newlines: 0,
    };
    let mut failed = None;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (pre, src, done_tx) = (&pre, &src, done_tx.clone());
            s.spawn(move || read_and_scan(pre, cat, src, &done_tx, block));
        }
        drop(done_tx);
        for x in done_rx {
            match x {
                Ok(x) => order.take(x),
                Err(e) => {
                    if failed.is_none() {
                        failed = Some(e);
                    }
                }
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let newlines = order.newlines;
    let src = src
        .into_inner()
        .map_err(|_| std::io::Error::other("a scanning thread failed"))?;
    if order.next < src.next {
        return Err(std::io::Error::other("a scanning thread failed"));
    }
    let lines = newlines + u64::from(src.bytes > 0 && src.last != Some(b'\n'));
    col.finish(lines, src.bytes, head_not_text(&src.r.head))
}

/// The stream [`scan_stream`]'s threads share: each takes the next block under the lock and
/// scans it itself, so that the block is in its own core's cache when it is filtered and
/// searched, and no thread only waits on the pipe. (A reading thread handing blocks to the
/// scanning threads took the same time on an 88 MB log, and held two blocks a thread.)
struct Source<R> {
    r: Head<R>,
    /// The partial last line of the block read last.
    carry: Vec<u8>,
    /// The number of the next block.
    next: usize,
    bytes: u64,
    last: Option<u8>,
    eof: bool,
}

/// A scanning thread of [`scan_stream`]: reads the next block (in turn with the others), scans
/// it, and sends what it holds (the lines that match), until the stream ends.
fn read_and_scan<R: Read>(
    pre: &Prefilter,
    cat: &dyn CatalogSource,
    src: &std::sync::Mutex<Source<R>>,
    done: &std::sync::mpsc::Sender<std::io::Result<Scanned>>,
    block: usize,
) {
    let mut scratch = Scratch::default();
    let mut buf = Vec::new();
    loop {
        let n = {
            let Ok(mut g) = src.lock() else { return };
            let s = &mut *g;
            if s.eof {
                return;
            }
            match read_block(&mut s.r, &mut s.carry, std::mem::take(&mut buf), block) {
                Ok((b, got, eof)) => {
                    buf = b;
                    s.bytes += got;
                    s.eof = eof;
                }
                Err(e) => {
                    s.eof = true;
                    let _ = done.send(Err(e));
                    return;
                }
            }
            if buf.is_empty() {
                continue;
            }
            s.last = buf.last().copied();
            s.next += 1;
            s.next - 1
        };
        let mut cands = Vec::new();
        let nl = candidate_lines(pre, &buf, &mut scratch, |before, raw| {
            let text = String::from_utf8_lossy(raw);
            let hits = matches(cat, &text);
            if !hits.is_empty() {
                cands.push((before, text.into_owned(), hits));
            }
        });
        if done.send(Ok((n, cands, nl))).is_err() {
            return;
        }
    }
}

/// The blocks of [`scan_stream`] as the threads finish them, matched in the log's order.
struct InOrder<'c, 'a> {
    col: &'c mut Collector<'a>,
    /// Blocks scanned but not yet matched (one before them is still being scanned).
    waiting: std::collections::BTreeMap<usize, (Found, u64)>,
    /// The next block to match.
    next: usize,
    /// The newlines of the blocks matched.
    newlines: u64,
}

impl InOrder<'_, '_> {
    fn take(&mut self, (n, cands, nl): Scanned) {
        self.waiting.insert(n, (cands, nl));
        while let Some((cands, nl)) = self.waiting.remove(&self.next) {
            for (before, text, hits) in cands {
                self.col.line_of(self.newlines + before + 1, &text, hits);
            }
            self.newlines += nl;
            self.next += 1;
        }
    }
}

/// Fills `buf` (a buffer back from a thread keeps its length: no new zeroing) with `carry`, the
/// partial last line of the block before, and what `r` gives, up to `block` bytes; leaves the
/// new partial last line in `carry` (but for the end of the stream, or a line longer than a
/// block, which is cut). Returns the block, the bytes read, and whether the stream ended.
fn read_block<R: Read>(
    r: &mut R,
    carry: &mut Vec<u8>,
    mut buf: Vec<u8>,
    block: usize,
) -> std::io::Result<(Vec<u8>, u64, bool)> {
    let have = carry.len();
    if buf.len() < have.max(block) {
        buf.resize(have.max(block), 0);
    }
    if let Some(front) = buf.get_mut(..have) {
        front.copy_from_slice(carry);
    }
    carry.clear();
    let mut filled = have;
    let mut eof = false;
    while filled < buf.len() {
        match r.read(buf.get_mut(filled..).unwrap_or(&mut [])) {
            Ok(0) => {
                eof = true;
                break;
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    buf.truncate(filled);
    if !eof {
        if let Some(i) = memchr::memrchr(b'\n', &buf) {
            carry.extend_from_slice(buf.get(i + 1..).unwrap_or(&[]));
            buf.truncate(i + 1);
        }
    }
    Ok((buf, (filled - have) as u64, eof))
}

/// Reads `r` a chunk at a time (small enough to stay in the core's cache while it is searched)
/// and hands each candidate line to `found`, with the newlines before it. Returns the newlines,
/// the bytes and the last byte.
fn stream_candidates<R: Read>(
    mut r: R,
    pre: &Prefilter,
    mut found: impl FnMut(u64, &[u8]),
) -> std::io::Result<(u64, u64, Option<u8>)> {
    // Bytes read but not yet scanned (a partial last line) stay at the front of `buf`; each read
    // appends straight after them, so nothing is copied twice.
    let mut buf: Vec<u8> = vec![0u8; CHUNK + MAX_LINE];
    let mut scratch = Scratch::default();
    let mut have = 0usize;
    let mut newlines: u64 = 0; // before `buf`
    let mut bytes: u64 = 0;
    let mut last = None;
    let mut eof = false;
    while !eof {
        if buf.len() < have + CHUNK {
            buf.resize(have + CHUNK, 0);
        }
        let n = match r.read(buf.get_mut(have..have + CHUNK).unwrap_or(&mut [])) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            eof = true;
        } else {
            bytes += n as u64;
            have += n;
        }
        let filled = buf.get(..have).unwrap_or(&[]);
        // Process complete lines only (everything at EOF).
        let end = if eof {
            have
        } else {
            match memchr::memrchr(b'\n', filled) {
                Some(i) => i + 1,
                None if have > MAX_LINE => have,
                None => continue,
            }
        };
        let (done, _) = filled.split_at(end);
        if let Some(&b) = done.last() {
            last = Some(b);
        }
        newlines += candidate_lines(pre, done, &mut scratch, |before, raw| {
            found(newlines + before, raw)
        });
        buf.copy_within(end..have, 0);
        have -= end;
    }
    Ok((newlines, bytes, last))
}

/// A part of a file, read with `pread` (threads share the file without a shared offset).
struct Range<'a> {
    f: &'a std::fs::File,
    at: u64,
    end: u64,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end.saturating_sub(self.at)).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(self.f, buf.get_mut(..want).unwrap_or(&mut []), self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// A log file: a regular file of some size is scanned by several threads at once (each a
/// segment of whole lines, read with `pread`), its candidate lines then matched in order on this
/// thread; anything else (a pipe, a small file) as [`scan_with`] does. `threads` 0 = one per
/// CPU (`GPUDOCTOR_SCAN_THREADS` overrides).
pub fn scan_file(
    f: std::fs::File,
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
    threads: usize,
) -> std::io::Result<ScanResult> {
    let meta = f.metadata()?;
    let threads = scan_threads(threads);
    if !meta.is_file() {
        // A named pipe, a device: read as a stream, scanned by the threads.
        return scan_stream(f, m, cat, threads);
    }
    if meta.len() < PARALLEL_FROM || threads < 2 {
        return scan_with(f, m, cat);
    }
    scan_parallel(&f, meta.len(), m, cat, threads, SEGMENT)
}

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

#[cfg(windows)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, at)
}

/// Fills `buf` from `at`, short only at the end of the file.
fn read_full_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut got = 0usize;
    while got < buf.len() {
        match read_at(f, buf.get_mut(got..).unwrap_or(&mut []), at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The first line start at or after `at` (the byte after a newline), looking at most
/// [`MAX_LINE`] ahead; `at` itself when no newline is that near (the long line is cut there:
/// its hits still count, on two candidate lines at most).
fn line_start_from(
    f: &std::fs::File,
    at: u64,
    len: u64,
    window: &mut Vec<u8>,
) -> std::io::Result<u64> {
    if at == 0 || at >= len {
        return Ok(at.min(len));
    }
    window.resize(MAX_LINE, 0);
    let n = read_full_at(f, window, at - 1)?;
    Ok(
        match memchr::memchr(b'\n', window.get(..n).unwrap_or(&[])) {
            Some(i) => at + i as u64,
            None => at,
        },
    )
}

fn scan_parallel(
    f: &std::fs::File,
    len: u64,
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
    threads: usize,
    segment: u64,
) -> std::io::Result<ScanResult> {
    let pre = Prefilter::new(cat)?;
    let mut col = Collector::new(cat, m);
    let mut line_no = 0u64;
    let mut bytes = 0u64;
    let mut at = 0u64;
    let mut ends_with_newline = true;
    let mut window = Vec::new();
    while at < len {
        // This round's segments, each of whole lines.
        let mut bounds = vec![at];
        for i in 1..=threads {
            let want = (at + segment * i as u64).min(len);
            let prev = bounds.last().copied().unwrap_or(at);
            bounds.push(line_start_from(f, want, len, &mut window)?.max(prev));
        }
        let results: Vec<std::io::Result<Segment>> = std::thread::scope(|s| {
            let pre = &pre;
            let handles: Vec<_> = bounds
                .windows(2)
                .map(|w| {
                    let (a, b) = (
                        w.first().copied().unwrap_or(0),
                        w.get(1).copied().unwrap_or(0),
                    );
                    s.spawn(move || {
                        let mut cands = Vec::new();
                        let range = Range { f, at: a, end: b };
                        // Lines the prefilter let through but no signature matches (its
                        // short literals are in ordinary words) are dropped here, on every
                        // thread, not in the one-thread matching after.
                        let (nl, _, last) = stream_candidates(range, pre, |before, raw| {
                            let text = String::from_utf8_lossy(raw);
                            let hits = matches(cat, &text);
                            if !hits.is_empty() {
                                cands.push((before, text.into_owned(), hits))
                            }
                        })?;
                        Ok((cands, nl, last))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(std::io::Error::other("a scanning thread failed")))
                })
                .collect()
        });
        for r in results {
            let (cands, newlines, last) = r?;
            for (before, text, hits) in cands {
                col.line_of(line_no + before + 1, &text, hits);
            }
            line_no += newlines;
            if let Some(l) = last {
                ends_with_newline = l == b'\n';
            }
        }
        let next = bounds.last().copied().unwrap_or(len);
        bytes += next - at;
        if next <= at {
            break;
        }
        at = next;
    }
    if bytes > 0 && !ends_with_newline {
        line_no += 1;
    }
    let mut head = vec![0u8; HEAD];
    let n = read_full_at(f, &mut head, 0)?;
    head.truncate(n);
    col.finish(line_no, bytes, head_not_text(&head))
}

/// Standard input up to this size is a paste, explained as a whole (a bare code, lines read
/// together); past it, a log, scanned as it streams.
pub const PASTE_MAX: usize = 1 << 20;

/// What `explain` read on standard input.
pub enum Stdin {
    /// A paste: all of it, at most [`PASTE_MAX`] bytes.
    Paste(Vec<u8>),
    /// More than a paste: scanned as a log, all of it, in bounded memory.
    Log(ScanResult),
}

/// Reads standard input as `explain` does: a paste whole, anything longer scanned as a log to
/// its end (no cap). A regular file on standard input (`explain < FILE`) is scanned as
/// [`scan_file`] scans it, by several threads, when it is read from its start.
pub fn read_stdin(m: &dyn MatrixSource, cat: &dyn CatalogSource) -> std::io::Result<Stdin> {
    if let Some(r) = stdin_as_file(m, cat, PASTE_MAX as u64)? {
        return Ok(Stdin::Log(r));
    }
    let mut first = Vec::new();
    // `Stdin`, not its lock, which no other thread may hold (the scanning threads read it).
    let mut input = std::io::stdin();
    (&mut input)
        .take(PASTE_MAX as u64 + 1)
        .read_to_end(&mut first)?;
    if first.len() <= PASTE_MAX {
        return Ok(Stdin::Paste(first));
    }
    Ok(Stdin::Log(scan_stream(
        std::io::Cursor::new(first).chain(input),
        m,
        cat,
        0,
    )?))
}

/// `explain --log -`: standard input scanned as a log, whatever its size.
pub fn scan_stdin(m: &dyn MatrixSource, cat: &dyn CatalogSource) -> std::io::Result<ScanResult> {
    match stdin_as_file(m, cat, 0)? {
        Some(r) => Ok(r),
        None => scan_stream(std::io::stdin(), m, cat, 0),
    }
}

/// Standard input that is a regular file with more than `over` bytes left: scanned (threads
/// where it is read from its start, else from where it stands); `None` for anything else.
#[cfg(unix)]
fn stdin_as_file(
    m: &dyn MatrixSource,
    cat: &dyn CatalogSource,
    over: u64,
) -> std::io::Result<Option<ScanResult>> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() else {
        return Ok(None);
    };
    let f = std::fs::File::from(fd);
    let Ok(meta) = f.metadata() else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    let Ok(pos) = (&f).stream_position() else {
        return Ok(None);
    };
    if meta.len().saturating_sub(pos) <= over {
        return Ok(None);
    }
    if pos == 0 {
        scan_file(f, m, cat, 0).map(Some)
    } else {
        scan_with(f, m, cat).map(Some)
    }
}

#[cfg(not(unix))]
fn stdin_as_file(
    _: &dyn MatrixSource,
    _: &dyn CatalogSource,
    _: u64,
) -> std::io::Result<Option<ScanResult>> {
    Ok(None)
}

#[cfg(test)]
#[path = "logscan_tests.rs"]
mod tests;
