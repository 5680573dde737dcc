//! The explain catalog: known error signatures as data (`explain-catalog/*.yaml`, embedded at
//! build time like `compat-matrix/`, replaceable with `--catalog` or `GPUDOCTOR_CATALOG`).
//!
//! A signature is recognised by any of its `patterns`: literal fragments matched
//! case-insensitively and whitespace-tolerantly (both the line and the pattern are lowercased,
//! every run of whitespace becomes one space and ANSI colour codes are dropped), as words
//! ([`word_bounds`]: `psu` is not in `psutil`), after a log collector's prefix
//! ([`strip_log_prefix`]), on lines that are text ([`is_text`]); optionally narrowed by a `regex`
//! (on the same normalised line) and vetoed by `unless` fragments. An `evidence` signature reads
//! prose that quotes no message ("my PC restarts when training"): its answer is of low
//! confidence and says it was read from a description. What an `enrich`er extracts (sizes,
//! versions, sm_XX, codes) sharpens the answer when present and is never required: without it
//! the catalog's own text stands. `rank` orders causes in a pasted text: a root cause (an Xid, a
//! driver mismatch) leads its consequences (a CUDA error, "CUDA kernel errors might be
//! asynchronously reported").

use std::collections::HashSet;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

use crate::vocab::{Category, Fix, Severity};

pub const CATALOG_SCHEMA: &str = "gpudoctor.explain-catalog/1";

/// The catalog files built into the binary.
const EMBEDDED: &[(&str, &str)] = &[
    (
        "explain-catalog/kernel-knowledge.yaml",
        include_str!("../../explain-catalog/kernel-knowledge.yaml"),
    ),
    (
        "explain-catalog/signatures.yaml",
        include_str!("../../explain-catalog/signatures.yaml"),
    ),
];

/// The same files as build.rs wrote them (JSON, each signature with its line; `null` for a file
/// it could not read, which [`Catalog::embedded`] then reads as YAML to say why).
const EMBEDDED_JSON: &[(&str, &str)] = &[
    (
        "explain-catalog/kernel-knowledge.yaml",
        include_str!(concat!(
            env!("OUT_DIR"),
            "/explain-catalog/kernel-knowledge.json"
        )),
    ),
    (
        "explain-catalog/signatures.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/explain-catalog/signatures.json")),
    ),
];

/// The signature the kernel-log knowledge's own messages join (explain-catalog/
/// kernel-knowledge.yaml): each message's anchor is one more of its patterns, and its enricher
/// reads the line with the knowledge, which alone decides what the line is.
pub const KERNEL_KNOWLEDGE: &str = "kernel-knowledge";

/// The enrichers a signature may name (the Rust that computes: src/explain/signatures.rs).
pub const ENRICHERS: &[&str] = &[
    "torch_oom",
    "oom_bytes",
    "driver_too_old",
    "sm_incompatible",
    "cudnn_loaded",
    "missing_library",
    "nccl",
    "exit_code",
    "cuda_text",
    "cuda_code",
    "kernel_log",
    "kernel_knowledge",
    "xid",
    "nvml_code",
    "library_status",
    "checked_status",
    "cc_range",
    "api_code",
];

/// Every occurrence of the patterns without an automaton (for the first lines matched).
#[path = "pattern_index.rs"]
mod pattern_index;
use pattern_index::PatternIndex;

/// The files as written, before validation (shared with build.rs).
#[path = "catalog_spec.rs"]
mod spec;
pub use spec::Example;
use spec::{BuiltFile, CatalogFile, SignatureSpec};

/// A signature's regex, compiled when a line first needs it: compiling the built-in catalog's
/// regexes at every start was 33 M instructions (a fifth of `explain --log`'s start-up), and most
/// runs need none. A catalog given by the user is compiled as it is loaded (its errors are said
/// then); the built-in one's are compiled by a test.
#[derive(Debug)]
pub struct LazyRegex {
    src: String,
    re: std::sync::OnceLock<Option<Regex>>,
}

impl LazyRegex {
    /// Compiled now: an error is the catalog's.
    fn compiled(src: &str) -> Result<LazyRegex, regex::Error> {
        let re = Regex::new(src)?;
        Ok(LazyRegex {
            src: src.to_string(),
            re: std::sync::OnceLock::from(Some(re)),
        })
    }

    /// Compiled at its first use (a regex that does not compile matches nothing).
    fn lazy(src: &str) -> LazyRegex {
        LazyRegex {
            src: src.to_string(),
            re: std::sync::OnceLock::new(),
        }
    }

    /// The compiled regex (`None`: it does not compile).
    pub fn get(&self) -> Option<&Regex> {
        self.re.get_or_init(|| Regex::new(&self.src).ok()).as_ref()
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.get().is_some_and(|r| r.is_match(s))
    }
}

/// One signature, validated.
#[derive(Debug)]
pub struct Signature {
    pub id: String,
    pub category: Category,
    pub name: String,
    pub rank: u8,
    pub severity: Severity,
    pub ambiguous: bool,
    /// Prose evidence, not an error message ("my PC restarts when training"): read at low
    /// confidence, and said to be read from a description.
    pub evidence: bool,
    /// For an ambiguous symptom: the categories of its less common causes.
    pub also: Vec<Category>,
    pub patterns: Vec<String>,
    /// Pattern i must start (`.0`) / end (`.1`) at a word boundary ([`word_bounds`]).
    pub bounds: Vec<(bool, bool)>,
    pub regex: Option<LazyRegex>,
    pub unless: Vec<String>,
    pub enrich: Option<String>,
    pub meaning: String,
    pub causes: Vec<String>,
    pub tell_apart: Vec<String>,
    pub fix: Fix,
    pub sources: Vec<String>,
    pub examples: Vec<Example>,
    /// A signal's reading, for the families that name a signal and no signature (a shell's
    /// "Aborted (core dumped)"): its meaning, category and fix are the signal's in
    /// explain-catalog/codes.yaml, read from there when it matches.
    pub signal: Option<u32>,
    /// Where it was read ("explain-catalog/signatures.yaml:120").
    pub at: String,
}

/// The whole catalog with its matcher.
#[derive(Debug)]
pub struct Catalog {
    pub version: String,
    pub source: String,
    pub signatures: Vec<Signature>,
    /// Every normalised pattern; `owner[i]` is pattern i's signature.
    pats: Vec<String>,
    /// The patterns filed by their first bytes: finds them in the first [`INDEX_BYTES`] of text
    /// matched (`None` when a pattern is empty).
    index: Option<PatternIndex>,
    /// Bytes of text matched with the index so far.
    indexed: std::sync::atomic::AtomicUsize,
    /// The patterns' automaton, for the text after that: built then, for the built-in catalog
    /// (42 M instructions; a test builds it), as the catalog is read for one given by the user
    /// (its errors are the catalog's). `None`: it could not be built (the index serves).
    automaton: std::sync::OnceLock<Option<AhoCorasick>>,
    owner: Vec<usize>,
    /// Pattern i must start (`.0`) / end (`.1`) at a word boundary ([`word_bounds`]).
    bounds: Vec<(bool, bool)>,
    /// `family_of[i]`: for a pattern that is a message family's anchor, that family (an index
    /// into `families`); the line then matches only with all the family's pieces in order.
    family_of: Vec<Option<usize>>,
    /// The message families (`knowledge/messages/`) whose signature this catalog has, each with
    /// that signature's index.
    pub families: Vec<(usize, &'static crate::knowledge::messages::Family)>,
    /// The index of the [`KERNEL_KNOWLEDGE`] signature, if the catalog has it.
    kernel_knowledge: Option<usize>,
}

#[path = "normalise.rs"]
mod normalise_text;
pub use normalise_text::normalise;

/// A weak literal of the committed cover, with the words of the patterns it stands for.
pub(crate) type BuiltWeak = (&'static str, &'static [&'static [&'static str]]);

/// The prefilter's cover of the built-in catalog (computed by `explain::cover::cover_of`,
/// committed: computing it at each start took about 50 M instructions) with the fingerprint of
/// the patterns it was computed from, and the kernel-log knowledge's anchors (parsing the
/// knowledge for them took about 33 M). `logscan` uses the cover only for those patterns; the test
/// `the_built_cover_is_the_computed_one` holds the file to what the code computes now.
#[rustfmt::skip]
#[path = "cover_built.rs"]
pub(crate) mod built;

/// build.rs's fingerprint of the files the built-in catalog's patterns are read from
/// (`GPUDOCTOR_COVER_INPUTS`).
pub(crate) fn cover_inputs() -> u64 {
    let hex = env!("GPUDOCTOR_COVER_INPUTS");
    u64::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap_or(0)
}

/// Whether the committed cover was computed from the files this binary's catalog is read from:
/// then it is the built-in catalog's cover without the catalog being loaded (the test
/// `the_built_cover_is_the_computed_one` holds the file to the code that computes it).
pub(crate) fn built_cover_is_current() -> bool {
    built::INPUTS_HASH == cover_inputs()
}

fn category(s: &str) -> Option<Category> {
    Category::ALL
        .into_iter()
        .find(|c| c.as_str() == s && *c != Category::MatrixStale)
}

impl Catalog {
    /// The catalog built into the binary.
    ///
    /// Read from the JSON build.rs wrote of the YAML (parsing the YAML here was 56 M
    /// instructions, a third of `explain --log`'s start-up); when a file's JSON is missing or
    /// does not read (build.rs could not parse the YAML), from the YAML, which says why.
    pub fn embedded() -> Result<Catalog, Vec<String>> {
        let built: Option<Vec<(String, BuiltFile)>> = EMBEDDED_JSON
            .iter()
            .map(|(n, j)| Some((n.to_string(), serde_json::from_str::<BuiltFile>(j).ok()?)))
            .collect();
        match built {
            Some(files) => Catalog::from_files("embedded", files.into_iter().map(Ok), true),
            None => Catalog::embedded_yaml(),
        }
    }

    /// The catalog built into the binary, read from its YAML.
    pub(crate) fn embedded_yaml() -> Result<Catalog, Vec<String>> {
        Catalog::from_texts(
            "embedded",
            EMBEDDED.iter().map(|(n, t)| (n.to_string(), t.to_string())),
            true,
        )
    }

    /// A catalog file (or a directory of `*.yaml` files) given by the user.
    pub fn load(path: &std::path::Path) -> Result<Catalog, Vec<String>> {
        let mut files = Vec::new();
        if path.is_dir() {
            let rd =
                std::fs::read_dir(path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
            let mut names: Vec<_> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            names.sort();
            for p in names {
                let t = crate::userfile::read(&p, "the explain catalog").map_err(|e| vec![e])?;
                // A copy of explain-catalog/ holds the code tables too: they are built in.
                let codes = |l: &str| {
                    l.trim()
                        .strip_prefix("schema:")
                        .is_some_and(|v| v.trim() == super::tables::CODES_SCHEMA)
                };
                if t.lines().any(codes) {
                    continue;
                }
                files.push((p.display().to_string(), t));
            }
            if files.is_empty() {
                return Err(vec![format!(
                    "{}: no .yaml files in this directory",
                    path.display()
                )]);
            }
        } else {
            let t = crate::userfile::read(path, "the explain catalog").map_err(|e| vec![e])?;
            files.push((path.display().to_string(), t));
        }
        Catalog::from_texts(&path.display().to_string(), files.into_iter(), false)
    }

    /// `lazy_regex`: the built-in catalog ([`LazyRegex`]).
    fn from_texts(
        source: &str,
        files: impl Iterator<Item = (String, String)>,
        lazy_regex: bool,
    ) -> Result<Catalog, Vec<String>> {
        let parsed = files.map(
            |(name, text)| match serde_saphyr::from_str::<CatalogFile>(&text) {
                Ok(f) => Ok((name, BuiltFile::from(f))),
                Err(e) => {
                    let (at, message) = crate::userfile::yaml_error(&name, &text, &e);
                    Err(format!("{at}: {message}"))
                }
            },
        );
        Catalog::from_files(source, parsed, lazy_regex)
    }

    /// The catalog of files read (each with its name), or every error found in them (a file that
    /// could not be read: its error, in the files' order).
    fn from_files(
        source: &str,
        files: impl Iterator<Item = Result<(String, BuiltFile), String>>,
        lazy_regex: bool,
    ) -> Result<Catalog, Vec<String>> {
        let (version, mut sigs) = read_signatures(files, lazy_regex)?;
        add_knowledge_patterns(&mut sigs);
        let mut pats = Vec::new();
        let mut owner = Vec::new();
        let mut bounds = Vec::new();
        let mut family_of = Vec::new();
        for (i, s) in sigs.iter().enumerate() {
            for (j, p) in s.patterns.iter().enumerate() {
                bounds.push(s.bounds.get(j).copied().unwrap_or_default());
                pats.push(p.clone());
                owner.push(i);
                family_of.push(None);
            }
        }
        // The mined message families join the signature they name (a catalog without that
        // signature, given with --catalog, leaves them out): their anchor is one more pattern of
        // the signature, checked with the family's other pieces when it hits.
        let mut families = Vec::new();
        for f in crate::knowledge::messages::families() {
            let named = f
                .signature
                .as_deref()
                .and_then(|id| sigs.iter().position(|s| s.id == id));
            let Some(sig) = named.or_else(|| {
                f.signature
                    .is_none()
                    .then(|| {
                        f.signal
                            .as_deref()
                            .and_then(|n| signal_signature(&mut sigs, n))
                    })
                    .flatten()
            }) else {
                continue;
            };
            if let Some(a) = f.anchor() {
                bounds.push(word_bounds(a));
                pats.push(a.to_string());
                owner.push(sig);
                family_of.push(Some(families.len()));
            }
            families.push((sig, f));
        }
        let automaton = std::sync::OnceLock::new();
        if !lazy_regex {
            let ac = automaton_of(&pats).map_err(|e| vec![format!("{source}: {e}")])?;
            let _ = automaton.set(Some(ac));
        }
        Ok(Catalog {
            index: PatternIndex::new(&pats),
            indexed: std::sync::atomic::AtomicUsize::new(0),
            pats,
            version,
            source: source.to_string(),
            kernel_knowledge: sigs.iter().position(|s| s.id == KERNEL_KNOWLEDGE),
            signatures: sigs,
            automaton,
            owner,
            bounds,
            family_of,
            families,
        })
    }

    /// The signatures a line matches (indexes into `signatures`), in catalog order.
    pub fn matches(&self, line: &str) -> Vec<usize> {
        let n = normalise(line);
        self.matches_normalised(&n)
    }

    /// [`Catalog::matches`] of a line already normalised.
    ///
    /// A line that is not text (mostly control bytes or undecodable bytes, as random or binary
    /// data gives) matches nothing; a log prefix ([`strip_log_prefix`]) is left out; a pattern
    /// that starts or ends with a word character matches only at a word boundary there.
    pub fn matches_normalised(&self, n: &str) -> Vec<usize> {
        if !is_text(n) {
            return Vec::new();
        }
        let n = strip_log_prefix(n);
        let bytes = n.as_bytes();
        let mut hit: Vec<usize> = Vec::new();
        // Signatures reached through a message family: its pieces stand for the signature's
        // regex (they are the emitter's own text), its `unless` still applies.
        let mut by_family: Vec<usize> = Vec::new();
        self.for_each_pattern(n, |p, start, end| {
            let (left, right) = self.bounds.get(p).copied().unwrap_or((false, false));
            let before = start.checked_sub(1).and_then(|i| bytes.get(i)).copied();
            let after = bytes.get(end).copied();
            if (left && before.is_some_and(word_byte)) || (right && after.is_some_and(word_byte)) {
                return;
            }
            let Some(&sig) = self.owner.get(p) else {
                return;
            };
            match self.family_of.get(p).copied().flatten() {
                None => hit.push(sig),
                Some(f) => {
                    if self
                        .families
                        .get(f)
                        .is_some_and(|(_, f)| f.matches_pieces(n))
                    {
                        by_family.push(sig);
                    }
                }
            }
        });
        hit.sort_unstable();
        hit.dedup();
        hit.retain(|&i| {
            let Some(s) = self.signatures.get(i) else {
                return false;
            };
            if s.unless.iter().any(|u| n.contains(u.as_str())) {
                return false;
            }
            s.regex.as_ref().is_none_or(|r| r.is_match(n))
        });
        for i in by_family {
            let vetoed = self
                .signatures
                .get(i)
                .is_none_or(|s| s.unless.iter().any(|u| n.contains(u.as_str())));
            if !vetoed && !hit.contains(&i) {
                hit.push(i);
            }
        }
        hit.sort_unstable();
        // A line a kernel-log signature of the catalog names is read by that one: the knowledge's
        // own signature would feed the same line to the same parser a second time.
        if let Some(k) = self.kernel_knowledge {
            let named = hit.iter().any(|&i| {
                i != k
                    && self
                        .signatures
                        .get(i)
                        .is_some_and(|s| s.enrich.as_deref() == Some("kernel_log"))
            });
            if named {
                hit.retain(|&i| i != k);
            }
        }
        hit
    }

    /// Calls `f(pattern, start, end)` for every occurrence of every pattern in `n` (in no
    /// particular order): with the index for the first [`INDEX_BYTES`] of text matched, then with
    /// the automaton (the same occurrences; the index's are cheaper to start with, the
    /// automaton's to go on with).
    fn for_each_pattern(&self, n: &str, mut f: impl FnMut(usize, usize, usize)) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(ix) = &self.index {
            let done = self.indexed.fetch_add(n.len(), Relaxed);
            if done < INDEX_BYTES || self.automaton().is_none() {
                ix.for_each_match(n.as_bytes(), f);
                return;
            }
        }
        if let Some(ac) = self.automaton() {
            for m in ac.find_overlapping_iter(n) {
                f(m.pattern().as_usize(), m.start(), m.end());
            }
        }
    }

    /// The patterns' automaton, built at its first use.
    pub(crate) fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton
            .get_or_init(|| automaton_of(&self.pats).ok())
            .as_ref()
    }

    /// Every normalised pattern the catalog looks for (its signatures', the knowledge's and the
    /// message families' anchors), as [`Catalog::automaton`] is built of them.
    #[cfg(test)]
    pub(crate) fn all_patterns(&self) -> &[String] {
        &self.pats
    }

    /// Signatures whose family a short text says in other words (its key words, see
    /// [`crate::knowledge::messages::Family::matches_keys`]): for a whole pasted text of a few
    /// words that nothing else matched (a reworded title, a bare "out of memory"), never for a
    /// line of a log.
    pub fn keyed_families(&self, n: &str) -> Vec<usize> {
        const MAX_WORDS: usize = 16;
        if n.len() > 200 || n.split(' ').count() > MAX_WORDS {
            return Vec::new();
        }
        let mut out: Vec<usize> = self
            .families
            .iter()
            .filter(|(_, f)| f.matches_keys(n))
            .map(|(s, _)| *s)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The signatures a message family shows only across two adjacent lines of a pasted text
    /// (a message wrapped by a terminal, an issue form or a log viewer): those whose pieces are
    /// in order in the two lines joined (by a space, or by nothing for a word cut in two) and in
    /// neither line alone.
    pub fn family_matches_across(&self, a: &str, b: &str) -> Vec<usize> {
        let (na, nb) = (normalise(a), normalise(b));
        if na.is_empty() || nb.is_empty() {
            return Vec::new();
        }
        // Wrapped at a word (an issue form) or in the middle of one (a terminal's hard wrap).
        let joined = format!("{na} {nb}");
        let glued = format!("{na}{nb}");
        let mut out: Vec<usize> = self
            .families
            .iter()
            .filter(|(_, f)| {
                (f.matches_pieces(&joined) || f.matches_pieces(&glued))
                    && !f.matches_pieces(&na)
                    && !f.matches_pieces(&nb)
            })
            .map(|(s, _)| *s)
            .filter(|&s| {
                self.signatures
                    .get(s)
                    .is_some_and(|sig| !sig.unless.iter().any(|u| joined.contains(u.as_str())))
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The signatures of the files read (each with its name), validated, and the catalog's version,
/// or every error found in them (a file that could not be read: its error, in the files' order).
fn read_signatures(
    files: impl Iterator<Item = Result<(String, BuiltFile), String>>,
    lazy_regex: bool,
) -> Result<(String, Vec<Signature>), Vec<String>> {
    let mut errors = Vec::new();
    let mut sigs = Vec::new();
    let mut version = String::new();
    let mut ids = HashSet::new();
    for file in files {
        let (name, file) = match file {
            Ok(f) => f,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if file.schema != CATALOG_SCHEMA {
            errors.push(format!(
                "{name}: schema is {:?}; this gpudoctor reads {CATALOG_SCHEMA:?}",
                file.schema
            ));
            continue;
        }
        version = file.version;
        for s in file.signatures {
            let at = format!("{name}:{}", s.line);
            match validate(s.spec, &at, lazy_regex) {
                Ok(sig) => {
                    if !ids.insert(sig.id.clone()) {
                        errors.push(format!("{at}: signature id {:?} is used twice", sig.id));
                    }
                    sigs.push(sig);
                }
                Err(e) => errors.extend(e),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok((version, sigs))
}

/// Text a catalog matches with its [`PatternIndex`] before it builds its automaton: about what
/// the index's search costs (some 20 instructions a byte) in the time the automaton takes to
/// build.
const INDEX_BYTES: usize = 1 << 20;

/// The automaton of a catalog's patterns (every occurrence, overlapping).
fn automaton_of(pats: &[String]) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(pats)
}

/// The anchors of the kernel-log knowledge's messages: every Linux kernel message's longest
/// piece (knowledge/linux-messages.yaml), each event family's (knowledge/kernel-events.yaml), and
/// the longest piece of each NVIDIA driver message
/// that is a cause (knowledge/kernel-messages.yaml) where that piece is specific enough to be
/// looked for in every line of a log ([`NVRM_ANCHOR`] characters or more).
#[cfg(test)]
fn kernel_anchors() -> Vec<String> {
    let mut v: Vec<String> = crate::knowledge::linux::anchors()
        .into_iter()
        .map(str::to_string)
        .collect();
    // The events' message families (knowledge/kernel-events.yaml: the driver's, kmod's,
    // nouveau's, Fabric Manager's lines) that say what went wrong.
    if let Some(ev) = crate::knowledge::kernel::events_file() {
        for e in ev
            .entries
            .iter()
            .filter(|e| e.role == crate::knowledge::kernel::Role::Cause)
        {
            for f in &e.families {
                if let Some(a) = f.pieces.iter().max_by_key(|p| p.len()) {
                    if a.len() >= 12 {
                        v.push(a.clone());
                    }
                }
            }
        }
    }
    if let Some(m) = crate::knowledge::kernel::messages_file() {
        for e in &m.entries {
            if e.role != crate::knowledge::kernel::Role::Cause || e.level != "error" {
                continue;
            }
            if let Some(a) = e.pieces.iter().skip(1).max_by_key(|p| p.len()) {
                if a.len() >= NVRM_ANCHOR {
                    v.push(a.clone());
                }
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The kernel anchors as the catalog looks for them: normalised, at least 4 bytes, each once.
/// No word bounds: a piece ends where a conversion begins ("currently in D" of "...in D%d"); the
/// enricher checks the message's pieces in order. Committed in src/explain/cover_built.rs (parsing
/// the knowledge for them took about 33 M instructions at every start); the test
/// `the_built_cover_is_the_computed_one` holds that list to this one.
#[cfg(test)]
pub(crate) fn kernel_anchors_normalised() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in kernel_anchors() {
        let n = normalise(&a);
        if n.len() >= 4 && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The patterns the knowledge gives signatures beside their own: the kernel log's anchors and
/// the CUDA runtime's error texts.
fn add_knowledge_patterns(sigs: &mut [Signature]) {
    add_kernel_anchors(sigs);
    add_cuda_texts(sigs);
}

/// The kernel-log knowledge's signature (when the catalog has it) looks for every kernel anchor
/// (committed: [`built::KERNEL_ANCHORS`]).
fn add_kernel_anchors(sigs: &mut [Signature]) {
    if let Some(s) = sigs.iter_mut().find(|s| s.id == KERNEL_KNOWLEDGE) {
        for a in built::KERNEL_ANCHORS {
            if !s.patterns.iter().any(|p| p == a) {
                s.bounds.push((false, false));
                s.patterns.push((*a).to_string());
            }
        }
    }
}

/// Every CUDA code (runtime and driver) with a message text of 8 bytes or more, that text
/// normalised as explain reads lines (its final period left out); computed once.
pub(crate) fn cuda_texts() -> &'static [(String, &'static crate::knowledge::codes::Code)] {
    static T: std::sync::OnceLock<Vec<(String, &'static crate::knowledge::codes::Code)>> =
        std::sync::OnceLock::new();
    T.get_or_init(|| {
        crate::knowledge::codes::all()
            .iter()
            .filter(|e| e.family == "cuda")
            .flat_map(|e| e.entries.iter())
            .filter(|c| c.text.len() >= 8)
            .map(|c| (normalise(c.text.trim_end_matches('.')), c))
            .collect()
    })
}

/// The signature whose `cuda_text` enrichment names a CUDA error by its message.
const CUDA_ERROR: &str = "cuda-error";

/// The CUDA runtime's own error texts (what cudaGetErrorString prints, knowledge/cuda-runtime.yaml
/// `text`, read from the libraries) that are recognised alone (`alone`) join the `cuda-error`
/// signature as patterns: a line that quotes one names its error even without "CUDA error"
/// beside it ("cudaCheckError(): too many resources requested for launch").
fn add_cuda_texts(sigs: &mut [Signature]) {
    let Some(s) = sigs.iter_mut().find(|s| s.id == CUDA_ERROR) else {
        return;
    };
    for (p, _) in cuda_texts().iter().filter(|(_, c)| c.alone) {
        if !s.patterns.contains(p) {
            s.bounds.push(word_bounds(p));
            s.patterns.push(p.clone());
        }
    }
}

/// The shortest piece of a driver message that is looked for on its own.
#[cfg(test)]
const NVRM_ANCHOR: usize = 24;

/// The signature standing for a signal of explain-catalog/codes.yaml (by name, "SIGABRT"),
/// added once: a family that names a signal and no signature is that signal's reading.
fn signal_signature(sigs: &mut Vec<Signature>, name: &str) -> Option<usize> {
    let id = format!("signal-{}", name.to_ascii_lowercase());
    if let Some(i) = sigs.iter().position(|s| s.id == id) {
        return Some(i);
    }
    let t = super::tables::tables()?;
    let s = t.signals.codes.iter().find(|s| s.name == name)?;
    sigs.push(Signature {
        id,
        category: s.category,
        name: format!("Killed by {name}"),
        // Below the messages that say why (a CUDA error, an assertion) that usually precede it.
        rank: 40,
        severity: s.severity,
        ambiguous: false,
        evidence: false,
        also: Vec::new(),
        patterns: Vec::new(),
        bounds: Vec::new(),
        regex: None,
        unless: Vec::new(),
        enrich: None,
        meaning: s.meaning.clone(),
        causes: s.causes.clone(),
        tell_apart: Vec::new(),
        fix: Fix {
            text: s.fix.clone(),
            commands: s.commands.clone(),
            ..Default::default()
        },
        sources: t.signals.sources.clone(),
        examples: Vec::new(),
        signal: Some(s.num),
        at: format!("explain-catalog/codes.yaml (signal {})", s.num),
    });
    Some(sigs.len() - 1)
}

/// A word character for word-bounded matching: an ASCII letter or digit. Other bytes are
/// boundaries: UTF-8 ones, and `_`, which joins words in identifiers (`cudnn_cnn_infer64_8.dll`
/// is a cuDNN library; a pattern `cudnn_status_` is a stem).
pub fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Where a pattern must meet a word boundary, `(start, end)`. A pattern is matched as words:
/// `psu` is not found in `capsule`, `ipsum` or `psutil`, `xid` not in `oxide`. Its start must be a
/// word's start when it begins with a word of fewer than 6 characters (a short word inside a
/// longer one is usually another word; a long one is the same token: `nvjitlink` in
/// `libnvJitLink.so`, `c0000409` in `0xC0000409`). Its end must be a word's end when it ends
/// with a word of 3 characters or fewer (`psu`, `xid`, `oom`); a longer word takes its
/// inflections (`kill` → `killed`, `hang` → `hangs`). A trailing `*` makes the end a stem
/// (`exception code: 0xc*` for `0xC0000409`).
pub fn word_bounds(pattern: &str) -> (bool, bool) {
    let stem = pattern.ends_with('*');
    let p = normalise(pattern.trim_end_matches('*'));
    let b = p.as_bytes();
    let lead = b.iter().take_while(|&&c| word_byte(c)).count();
    let tail = b.iter().rev().take_while(|&&c| word_byte(c)).count();
    (lead > 0 && lead < 6, !stem && tail > 0 && tail <= 3)
}

/// Whether a (normalised) line is text: at most one character in eight is a control character
/// or U+FFFD (what a lossy UTF-8 decoding makes of bytes that are not UTF-8). Random bytes give
/// about half of each; a log line, even one with tabs, colours (already stripped) and a stray
/// control byte, gives almost none.
pub fn is_text(n: &str) -> bool {
    let (mut all, mut bad) = (0usize, 0usize);
    for c in n.chars() {
        all += 1;
        if c == '\u{fffd}' || (c.is_control() && c != '\t') {
            bad += 1;
        }
    }
    bad * 8 <= all
}

/// Whether a whole input is mostly not text (a binary file, random bytes): more than one line in
/// four of its non-empty lines (or, for an input of one line, the line itself) is not
/// [`is_text`].
pub fn mostly_binary(input: &str) -> bool {
    let (mut all, mut bad) = (0usize, 0usize);
    for l in input.split('\n') {
        if l.trim().is_empty() {
            continue;
        }
        all += 1;
        if !is_text(l) {
            bad += 1;
        }
    }
    all > 0 && bad * 4 > all
}

/// The prefixes log collectors put before a message (on a raw or a normalised line): ISO
/// 8601 and syslog timestamps with the host and program (`nov 25 10:00:01 node7 kernel: `,
/// journald), dmesg's `[  12.345678] `, kubectl's `node/…: ` / `[pod/…] `, talosctl's
/// `10.0.0.2: kern: warning: [2024-…]: `, Windows Event Viewer list rows (`error 11/25/2026
/// 10:00:00 am `), Python logging's `error:root:`. Removed before matching so that a message
/// reads the same wherever it was collected (and anchored regexes such as `^killed$` hold).
///
/// The regex is searched by the engines that need no reverse automaton (the backtracker and the
/// Pike VM, as `regex` itself uses on short texts): with its Unicode classes, building the lazy
/// DFA's reverse automaton made compiling it 34 M instructions at a log's first candidate line.
/// The matches are the same (every engine of `regex_automata::meta` gives the leftmost-first
/// match); a test holds this search to `regex::Regex`'s.
pub fn strip_log_prefix(n: &str) -> &str {
    static RE: std::sync::OnceLock<Option<regex_automata::meta::Regex>> =
        std::sync::OnceLock::new();
    let Some(re) = RE
        .get_or_init(|| {
            regex_automata::meta::Regex::builder()
                .configure(quick_to_build())
                .build(LOG_PREFIX)
                .ok()
        })
        .as_ref()
    else {
        return n;
    };
    match re.find(n) {
        Some(m) if m.end() < n.len() => n.get(m.end()..).unwrap_or(n),
        _ => n,
    }
}

/// A configuration of `regex_automata::meta` that builds no DFA (no reverse automaton) and
/// records no group but the match: for a regex searched in a few short lines.
fn quick_to_build() -> regex_automata::meta::Config {
    regex_automata::meta::Config::new()
        .hybrid(false)
        .dfa(false)
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit)
}

/// [`strip_log_prefix`]'s regex.
const LOG_PREFIX: &str = concat!(
    r"(?i)^(?:",
    // ISO 8601 / RFC 3339 (journalctl -o short-iso, most loggers), then host + program.
    r"\[?\d{4}-\d\d-\d\d[t ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:z|[+-]\d\d:?\d\d)?\]?:?\s*",
    r"(?:[\w.-]+\s+(?:kernel|[\w./-]+\[\d+\]):\s*)?",
    // syslog / journald: "nov 25 10:00:01 host kernel: " / "host prog[pid]: ".
    r"|[a-z]{3}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+",
    r"(?:[\w.-]+\s+(?:kernel|[\w./-]+(?:\[\d+\])?):\s*)?",
    // dmesg.
    r"|\[\s*\d+\.\d+\]\s*",
    // kubectl logs --prefix, kubectl/talosctl per-node output.
    r"|\[(?:pod|node)/[^\]]+\]\s*|(?:node|pod)s?/[\w.-]+:\s*",
    r"|\d{1,3}(?:\.\d{1,3}){3}:\s+(?:kern|user|daemon|auth|syslog):\s+[a-z]+:\s+",
    // Python logging's default format.
    r"|(?:critical|error|warning|info|debug):[\w.]+:",
    // Windows Event Viewer list rows: level, date and time.
    r"|(?:error|warning|information|critical)\s+\d{1,2}[/.]\d{1,2}[/.]\d{4}\s+\d{1,2}:\d\d:\d\d(?:\s+[ap]m)?\s+",
    r")+",
);

/// `lazy_regex`: the built-in catalog, whose regexes are compiled when first used (a test
/// compiles them all).
fn validate(s: SignatureSpec, at: &str, lazy_regex: bool) -> Result<Signature, Vec<String>> {
    let mut errors = Vec::new();
    let id = s.id.clone();
    let here = |what: String| format!("{at}: signature {id:?}: {what}");
    let cat = category(&s.category);
    if cat.is_none() {
        errors.push(here(format!(
            "unknown category {:?} (design.md lists them)",
            s.category
        )));
    }
    let mut also = Vec::new();
    for a in &s.also {
        match category(a) {
            Some(c) => also.push(c),
            None => errors.push(here(format!("unknown category {a:?} in also"))),
        }
    }
    if !also.is_empty() && (!s.ambiguous || s.tell_apart.is_empty()) {
        errors.push(here(
            "`also` is for ambiguous signatures with `tell_apart`".into(),
        ));
    }
    let severity = match s.severity.as_deref() {
        None | Some("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        Some("info") => Severity::Info,
        Some(o) => {
            errors.push(here(format!(
                "severity {o:?} is not error, warning or info"
            )));
            Severity::Error
        }
    };
    let patterns: Vec<String> = s
        .patterns
        .iter()
        .map(|p| normalise(p.trim_end_matches('*')))
        .collect();
    let bounds: Vec<(bool, bool)> = s.patterns.iter().map(|p| word_bounds(p)).collect();
    if patterns.is_empty() || patterns.iter().any(|p| p.len() < 3) {
        errors.push(here(
            "needs at least one pattern, each of 3 characters or more".into(),
        ));
    }
    let regex = match s.regex.as_deref() {
        None => None,
        Some(r) if lazy_regex => Some(Ok(LazyRegex::lazy(r))),
        Some(r) => Some(LazyRegex::compiled(r)),
    };
    let regex = match regex {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            errors.push(here(format!(
                "bad regex: {}",
                crate::sanitize::clean_line(&e.to_string(), 200)
            )));
            None
        }
    };
    errors.extend(missing_parts(&s).into_iter().map(here));
    let Some(category) = cat else {
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Signature {
        id: s.id,
        category,
        name: s.name,
        rank: s.rank,
        severity,
        ambiguous: s.ambiguous,
        evidence: s.evidence,
        also,
        patterns,
        bounds,
        regex,
        unless: s.unless.iter().map(|u| normalise(u)).collect(),
        enrich: s.enrich,
        meaning: s.meaning,
        causes: s.causes,
        tell_apart: s.tell_apart,
        fix: Fix {
            text: s.fix.text,
            commands: s.fix.commands,
            ..Default::default()
        },
        sources: s.sources,
        examples: s.examples,
        signal: None,
        at: at.to_string(),
    })
}

/// What a signature must cite and say: a known enricher, https:// sources, real examples with
/// their sources, a meaning and a fix. The problems, each in words.
fn missing_parts(s: &SignatureSpec) -> Vec<String> {
    let mut errors = Vec::new();
    if let Some(e) = &s.enrich {
        if !ENRICHERS.contains(&e.as_str()) {
            errors.push(format!(
                "unknown enricher {e:?} (known: {})",
                ENRICHERS.join(", ")
            ));
        }
    }
    if s.sources.is_empty() || s.sources.iter().any(|u| !u.starts_with("https://")) {
        errors.push("needs at least one https:// source".into());
    }
    if s.examples.is_empty() {
        errors.push("needs at least one real example text with its source".into());
    }
    for e in &s.examples {
        if !e.source.starts_with("https://") {
            errors.push(format!(
                "example source {:?} is not an https:// URL",
                e.source
            ));
        }
    }
    if s.meaning.trim().is_empty() || s.fix.text.trim().is_empty() {
        errors.push("needs a meaning and a fix".into());
    }
    errors
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
