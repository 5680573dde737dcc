//! `gpudoctor explain`: crash codes, error messages and whole logs mapped to causes and fixes.
//! Codes in every form users paste (`-1073740791`, `3221226505`, `0xC0000409`, `C0000409`, 137,
//! CUDA/NVML error numbers and names, Xids), messages by their known signatures (with the
//! numbers in them turned into facts), and `--log` files scanned in one streaming pass.

pub mod api_codes;
pub(crate) mod bigrams;
pub mod catalog;
pub mod codes;
pub(crate) mod cover;
pub mod logscan;
pub(crate) mod shapes;
pub mod signatures;
pub mod tables;

use serde::Serialize;

use crate::vocab::{Category, Fix, Severity};

pub const EXPLAIN_SCHEMA: &str = "gpudoctor.explain/1";

/// One reading of the input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// "ntstatus", "signal", "exit_code", "cuda_error", "nvml_error", "xid", "signature", "rule".
    pub kind: &'static str,
    pub code: serde_json::Value,
    pub name: String,
    pub category: Category,
    pub meaning: String,
    pub likely_causes: Vec<String>,
    pub fix: Fix,
    /// "high", "medium" or "low".
    pub confidence: &'static str,
    /// `--log`: how often it occurred and where first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_line: Option<u64>,
    /// The text it was found in (sanitised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For an ambiguous symptom: how to tell its causes apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tell_apart: Vec<String>,
    /// A kernel-log event: the program that printed the message and where in its source
    /// (knowledge/kernel-events.yaml).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emitter: Option<String>,
    /// "description" when the reading comes from prose that quotes no error message (the
    /// catalog's evidence signatures); absent for a message or a code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_from: Option<&'static str>,
    /// `--with-check`: what this machine shows about it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub machine: Vec<String>,
    /// How far up the chain of cause and consequence (higher leads; the catalog's `rank`; 0 for
    /// a bare code, which stands alone).
    #[serde(skip)]
    pub rank: u8,
    /// How serious, for ordering (not part of the JSON contract).
    #[serde(skip)]
    pub severity: Severity,
    /// Identifies repeats in a log.
    #[serde(skip)]
    pub key: String,
    /// What the error text says the failing process itself held, in bytes (PyTorch's OOM text:
    /// "this process has X memory in use"); `run` sets it beside what its samples saw. Not part
    /// of the JSON contract.
    #[serde(skip)]
    pub held_by_process_bytes: Option<f64>,
}

impl Match {
    pub fn new(
        kind: &'static str,
        code: serde_json::Value,
        name: impl Into<String>,
        category: Category,
        meaning: impl Into<String>,
    ) -> Match {
        let name = name.into();
        Match {
            kind,
            key: format!("{kind}:{code}:{name}"),
            code,
            name,
            category,
            meaning: meaning.into(),
            likely_causes: Vec::new(),
            fix: Fix::default(),
            confidence: "high",
            count: None,
            first_line: None,
            text: None,
            tell_apart: Vec::new(),
            emitter: None,
            read_from: None,
            machine: Vec::new(),
            rank: 0,
            severity: Severity::Error,
            held_by_process_bytes: None,
        }
    }
    pub fn causes<S: AsRef<str>>(mut self, c: &[S]) -> Match {
        self.likely_causes = c.iter().map(|s| s.as_ref().to_string()).collect();
        self
    }
    pub fn causes_owned(mut self, c: Vec<String>) -> Match {
        self.likely_causes = c;
        self
    }
    pub fn fix<S: AsRef<str>>(mut self, text: impl Into<String>, commands: &[S]) -> Match {
        self.fix = Fix {
            text: text.into(),
            commands: commands.iter().map(|s| s.as_ref().to_string()).collect(),
            ..Default::default()
        };
        self
    }
    pub fn fix_owned(mut self, text: impl Into<String>, commands: Vec<String>) -> Match {
        self.fix = Fix {
            text: text.into(),
            commands,
            ..Default::default()
        };
        self
    }
    pub fn severity(mut self, s: Severity) -> Match {
        self.severity = s;
        self
    }
    pub fn key(mut self, k: impl Into<String>) -> Match {
        self.key = k.into();
        self
    }
}

/// The catalog built into the binary (loaded once; a broken embedded catalog is caught by the
/// tests, and here gives no signatures rather than a panic).
pub fn embedded_catalog() -> Option<&'static catalog::Catalog> {
    static C: std::sync::OnceLock<Option<catalog::Catalog>> = std::sync::OnceLock::new();
    C.get_or_init(|| catalog::Catalog::embedded().ok()).as_ref()
}

/// Explains a code, a message or a whole pasted text (a traceback, a log tail, Event Viewer
/// text) with the built-in catalog.
pub fn explain_text(input: &str, m: &crate::matrix::Matrix) -> Vec<Match> {
    match embedded_catalog() {
        Some(c) => explain_with(input, m, c),
        None => codes::parse(input, m).unwrap_or_default(),
    }
}

/// [`explain_text`] with a given catalog: a bare code is read as a code; otherwise every line is
/// matched, matches are merged by cause (counted, with their first line), and ranked: root
/// causes before their consequences.
pub fn explain_with(input: &str, m: &crate::matrix::Matrix, cat: &catalog::Catalog) -> Vec<Match> {
    if let Some(v) = codes::parse(input, m) {
        return v;
    }
    let mut out: Vec<Match> = Vec::new();
    // Random or binary bytes are not a message: nothing in them is a finding.
    if catalog::mostly_binary(input) {
        return out;
    }
    let mut parser = crate::faults::logparse::LogParser::new();
    let all: Vec<&str> = input.lines().collect();
    let lines = all.len();
    let all_hits: Vec<Vec<usize>> = all.iter().map(|l| cat.matches(l)).collect();
    // The lines a wrapped message took in (up to, not including, `joined_until`) and the
    // signatures it read there: those lines are not that message again.
    let (mut joined_until, mut joined_hits) = (0usize, Vec::new());
    for (i, line) in all.iter().enumerate() {
        let line_hits = all_hits.get(i).cloned().unwrap_or_default();
        let mut hits = line_hits.clone();
        let mut spanning = spanning_match(cat, &all, &all_hits, i, &line_hits);
        if i < joined_until {
            hits.retain(|h| !joined_hits.contains(h));
            if let Some((_, new)) = &mut spanning {
                new.retain(|h| !joined_hits.contains(h));
            }
            spanning = spanning.filter(|(_, new)| !new.is_empty());
        }
        let context = wrapped_context(cat, &all, &all_hits, i, &hits);
        if let Some((_, n)) = &context {
            joined_until = i + 1 + n;
            joined_hits = hits
                .iter()
                .copied()
                .filter(|&h| reads_context(cat, h))
                .collect();
        }
        let found = match &context {
            Some((joined, _)) => wrapped_matches(cat, line, joined, &hits, m, &mut parser),
            None => line_matches_of(cat, line, hits, m, &mut parser),
        };
        merge(&mut out, found, i);
        if let Some((joined, new)) = spanning {
            let mut fresh = crate::faults::logparse::LogParser::new();
            let found = line_matches_of(cat, &joined, new, m, &mut fresh);
            merge(&mut out, found, i);
        }
    }
    // A message wrapped across two lines (a terminal, an issue form): the families whose pieces
    // only the two lines together show.
    for (i, pair) in all.windows(2).enumerate() {
        let [a, b] = pair else { continue };
        let hits = cat.family_matches_across(a, b);
        if hits.is_empty() {
            continue;
        }
        let joined = format!("{} {}", a.trim_end(), b.trim_start());
        for mut x in line_matches_of(cat, &joined, hits, m, &mut parser) {
            if !out.iter().any(|o| o.key == x.key) {
                x.first_line = Some(i as u64 + 1);
                out.push(x);
            }
        }
    }
    // A short text that nothing matched: a family said in other words (its key words).
    if out.is_empty() {
        let n = catalog::normalise(input);
        let hits = cat.keyed_families(&n);
        if !hits.is_empty() {
            out = line_matches_of(cat, input.trim(), hits, m, &mut parser);
            // Said in other words: less sure than the emitter's own text.
            for x in &mut out {
                x.confidence = "medium";
            }
        }
    }
    if let Some(x) = combine(input) {
        if !out.iter().any(|o| o.category == x.category) {
            out.push(x);
        }
    }
    rank(&mut out);
    // A one-line paste needs no counts or line numbers.
    if lines <= 1 {
        for x in &mut out {
            x.count = None;
            x.first_line = None;
        }
    }
    out
}

/// The matches of a line whose message wraps onto the next ones (`joined`): the signatures that
/// read figures read the joined text, the others the line; one reading per category.
fn wrapped_matches(
    cat: &catalog::Catalog,
    line: &str,
    joined: &str,
    hits: &[usize],
    m: &crate::matrix::Matrix,
    parser: &mut crate::faults::logparse::LogParser,
) -> Vec<Match> {
    let (ctx, plain): (Vec<usize>, Vec<usize>) = hits.iter().partition(|&&h| reads_context(cat, h));
    let mut v = line_matches_of(cat, line, plain, m, parser);
    let mut fresh = crate::faults::logparse::LogParser::new();
    v.extend(line_matches_of(cat, joined, ctx, m, &mut fresh));
    // One line, one reading per category, as line_matches_of keeps it.
    v.sort_by_key(|x| std::cmp::Reverse(x.rank));
    let mut seen = Vec::new();
    v.retain(|x| {
        let new = !seen.contains(&x.category);
        seen.push(x.category);
        new
    });
    v
}

/// Adds the matches of line `i`: one already there (by cause) is counted again, a new one
/// keeps its first line.
fn merge(out: &mut Vec<Match>, found: Vec<Match>, i: usize) {
    for mut x in found {
        match out.iter_mut().find(|o| o.key == x.key) {
            // The same cause read again keeps the highest place a line gave it (a line that a
            // specific signature names ranks it higher than a line only its family knows).
            Some(o) => {
                o.count = Some(o.count.unwrap_or(1) + 1);
                o.rank = o.rank.max(x.rank);
            }
            None => {
                x.first_line = Some(i as u64 + 1);
                out.push(x);
            }
        }
    }
}

/// A message wrapped by a terminal or an editor onto the next line: what only lines `i` and
/// `i + 1` together show (a pattern across the break), read from the joined text.
fn spanning_match(
    cat: &catalog::Catalog,
    all: &[&str],
    all_hits: &[Vec<usize>],
    i: usize,
    hits: &[usize],
) -> Option<(String, Vec<usize>)> {
    let line = all.get(i)?;
    if let (Some(next), Some(nh)) = (all.get(i + 1), all_hits.get(i + 1)) {
        for joined in wrapped_joins(line, next) {
            let new: Vec<usize> = cat
                .matches(&joined)
                .into_iter()
                .filter(|j| !hits.contains(j) && !nh.contains(j))
                .collect();
            if !new.is_empty() {
                return Some((joined, new));
            }
        }
    }
    None
}

/// An enricher reads the figures of a message wrapped onto the next lines that are no message
/// of their own ("...4.00 GiB total" / "capacity; 2.50 GiB already allocated..."): line `i`
/// joined with them, when it has a hit that reads them and they exist, and how many lines it
/// took in.
fn wrapped_context(
    cat: &catalog::Catalog,
    all: &[&str],
    all_hits: &[Vec<usize>],
    i: usize,
    hits: &[usize],
) -> Option<(String, usize)> {
    let line = all.get(i)?;
    if !hits.iter().any(|&h| reads_context(cat, h)) {
        return None;
    }
    let mut joined = line.trim_end().to_string();
    let mut n = 0;
    for (next, nh) in all.iter().zip(all_hits).skip(i + 1).take(8) {
        // A line with a message of its own ends the wrapped one; a later piece of the same
        // message (PyTorch's "...is reserved by PyTorch but unallocated.") does not.
        if nh.iter().any(|h| !hits.contains(h)) || next.trim().is_empty() {
            break;
        }
        match wrapped_joins(&joined, next).into_iter().next() {
            Some(j) => joined = j,
            None => break,
        }
        n += 1;
    }
    (n > 0).then_some((joined, n))
}

/// A line and the next as one message, as a terminal or an editor may have broken it: joined
/// with a space (a break at a space), and also without one when the first line is as long as a
/// common terminal width (a hard wrap inside a word). The next line's log prefix is left out.
fn wrapped_joins(line: &str, next: &str) -> Vec<String> {
    let a = line.trim_end();
    let b = catalog::strip_log_prefix(next.trim());
    if a.trim().is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut v = vec![format!("{a} {b}")];
    if [80, 100, 120, 132, 160, 200].contains(&line.chars().count()) {
        v.push(format!("{a}{b}"));
    }
    v
}

/// Whether a signature's enricher may read a message's continuation line (the numbers of an
/// out-of-memory message, the range of compute capabilities a build supports); the kernel-log
/// readers keep their one line each.
fn reads_context(cat: &catalog::Catalog, i: usize) -> bool {
    cat.signatures
        .get(i)
        .and_then(|s| s.enrich.as_deref())
        .is_some_and(|e| matches!(e, "torch_oom" | "oom_bytes" | "cc_range"))
}

/// Every catalog signature one line shows, enriched where its enricher finds facts.
pub fn line_matches(
    cat: &catalog::Catalog,
    line: &str,
    m: &crate::matrix::Matrix,
    parser: &mut crate::faults::logparse::LogParser,
) -> Vec<Match> {
    line_matches_of(cat, line, cat.matches(line), m, parser)
}

/// [`line_matches`] where the signatures that match the line ([`catalog::Catalog::matches`])
/// are known already (a log scan's threads find them).
pub fn line_matches_of(
    cat: &catalog::Catalog,
    line: &str,
    hits: Vec<usize>,
    m: &dyn logscan::MatrixSource,
    parser: &mut crate::faults::logparse::LogParser,
) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    for i in hits {
        let Some(sig) = cat.signatures.get(i) else {
            continue;
        };
        let enriched = enriched_reading(sig, line, m, parser);
        let found = match enriched {
            Some(v) => v
                .into_iter()
                .map(|mut x| {
                    // An enricher that reads figures only: the signature names the reading.
                    if x.code.is_null() {
                        x.code = serde_json::json!(sig.id);
                        x.name = sig.name.clone();
                        x.key = format!("sig:{}:{}", sig.id, x.key);
                        x.severity = sig.severity;
                    }
                    if x.likely_causes.is_empty() {
                        x.likely_causes = sig.causes.clone();
                    }
                    if x.fix.text.is_empty() {
                        x.fix = sig.fix.clone();
                    }
                    x
                })
                .collect(),
            None => vec![base_match(sig)],
        };
        for mut x in found {
            // An enricher may place its reading lower (an Xid that follows another).
            if x.rank == 0 {
                x.rank = sig.rank;
            }
            if x.tell_apart.is_empty() {
                x.tell_apart = sig.tell_apart.clone();
            }
            if sig.ambiguous {
                x.confidence = "medium";
            }
            if sig.evidence {
                x.confidence = "low";
                x.read_from = Some("description");
            }
            x.text = Some(crate::sanitize::clean_line(line.trim(), 300));
            if !out.iter().any(|o| o.key == x.key) {
                out.push(x);
            }
        }
        // The less common causes of an ambiguous symptom, after the common one.
        for alt in &sig.also {
            let mut x = less_often(sig, *alt);
            x.text = Some(crate::sanitize::clean_line(line.trim(), 300));
            if !out.iter().any(|o| o.key == x.key) {
                out.push(x);
            }
        }
    }
    // One line, one reading per category: the most specific (highest-ranked) signature stands
    // ("NVRM: Xid 79, GPU has fallen off the bus" is the Xid, not also a second fallen-off-bus).
    // An Xid line is always reported as its Xid: "Xid 63, Row Remapper: New row marked for
    // remapping" is Xid 63 (a remap was recorded), not the generic uncorrectable-ECC reading
    // whose words it also holds.
    out.sort_by_key(|x| (x.kind != "xid", std::cmp::Reverse(x.rank)));
    let mut seen = Vec::new();
    out.retain(|x| {
        if seen.contains(&x.category) {
            return false;
        }
        seen.push(x.category);
        true
    });
    out
}

/// What a signature's enricher reads in a line; for a signal's family, the signal's own reading
/// (explain-catalog/codes.yaml).
fn enriched_reading(
    sig: &catalog::Signature,
    line: &str,
    m: &dyn logscan::MatrixSource,
    parser: &mut crate::faults::logparse::LogParser,
) -> Option<Vec<Match>> {
    match sig.signal {
        Some(n) => codes::signal_reading(n).map(|x| vec![x]),
        None => sig
            .enrich
            .as_deref()
            .and_then(|e| signatures::enrich(e, line, m, parser)),
    }
}

/// Facts that only a whole paste shows, one line each: the kernel module's driver version on
/// one line and the user-space driver's on another (`cat /proc/driver/nvidia/version` next to
/// `nvidia-smi`, TensorFlow's cuda_diagnostics) differ → a driver/library mismatch.
pub fn combine(input: &str) -> Option<Match> {
    use std::sync::OnceLock;
    const V: &str = r"(\d{3}\.\d+(?:\.\d+)?)";
    static KERNEL: OnceLock<Option<regex::Regex>> = OnceLock::new();
    static USER: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let kernel_re = KERNEL
        .get_or_init(|| {
            regex::Regex::new(&format!(
                r"(?:kernel module\s+|kernel reported version is:? |this kernel module has the version ){V}"
            ))
            .ok()
        })
        .as_ref()?;
    let user_re = USER
        .get_or_init(|| {
            regex::Regex::new(&format!(
                r"(?:libcuda reported version is:? |nvml library version:? |client has the version ){V}|nvidia-smi\s+{V}-\d"
            ))
            .ok()
        })
        .as_ref()?;
    let lines: Vec<String> = input.lines().map(catalog::normalise).collect();
    let find = |re: &regex::Regex| -> Option<String> {
        lines.iter().find_map(|n| {
            let c = re.captures(n)?;
            let v = c.get(1).or_else(|| c.get(2))?;
            Some(v.as_str().trim_end_matches(".0").to_string())
        })
    };
    let kernel = find(kernel_re)?;
    let user = find(user_re)?;
    if kernel == user {
        return None;
    }
    let mut x = Match::new(
        "signature",
        serde_json::json!("driver-versions-differ"),
        "Kernel module and driver libraries are different versions",
        crate::vocab::Category::DriverLibraryMismatch,
        format!("The pasted text shows the NVIDIA kernel module at {kernel} and the user-space driver (libcuda / NVML / nvidia-smi) at {user}: they must be the same version."),
    )
    .causes(&["the driver packages were upgraded and the machine was not rebooted, so the old module is still loaded", "packages from two driver versions are installed"])
    .fix("Reboot so the module of the installed version loads; if it persists, install one driver version everywhere:", &["cat /proc/driver/nvidia/version", "sudo reboot"])
    .key("combine:driver-versions");
    x.rank = 95;
    Some(x)
}

/// A signature's own explanation, with nothing extracted.
fn base_match(sig: &catalog::Signature) -> Match {
    let mut x = Match::new(
        "signature",
        serde_json::json!(sig.id),
        sig.name.clone(),
        sig.category,
        sig.meaning.clone(),
    )
    .causes_owned(sig.causes.clone())
    .severity(sig.severity)
    .key(format!("sig:{}", sig.id));
    x.fix = sig.fix.clone();
    x
}

/// Root causes first (the catalog's rank), then the more severe, the more frequent, the
/// earlier; the first is the most likely, the others likely or possible.
pub fn rank(v: &mut Vec<Match>) {
    sort(v);
    // A less common cause of an ambiguous symptom adds nothing when a match of its category
    // already stands above it (an Xid 79 before "an illegal memory access").
    let mut cats = Vec::new();
    v.retain(|x| {
        let keep = !(x.key.starts_with("alt:") && cats.contains(&x.category));
        cats.push(x.category);
        keep
    });
    for (i, x) in v.iter_mut().enumerate() {
        if i > 0 && x.confidence == "high" {
            x.confidence = if x.rank >= 60 { "medium" } else { "low" };
        }
    }
}

/// Root causes first (the catalog's rank), then the more severe, the more frequent, the earlier.
pub fn sort(v: &mut [Match]) {
    v.sort_by(|a, b| {
        b.rank
            .cmp(&a.rank)
            .then(b.severity.cmp(&a.severity))
            .then(b.count.unwrap_or(0).cmp(&a.count.unwrap_or(0)))
            .then(a.first_line.unwrap_or(0).cmp(&b.first_line.unwrap_or(0)))
    });
}

/// Categories that the same underlying problem shows under in `check`.
pub fn related(c: crate::vocab::Category) -> Vec<crate::vocab::Category> {
    use crate::vocab::Category as C;
    match c {
        C::DriverTooOld | C::ArchUnsupported => vec![C::DriverTooOld, C::ArchUnsupported],
        C::CudnnMismatch | C::CudaRuntimeMismatch | C::LibraryPathConflict => vec![
            C::CudnnMismatch,
            C::CudaRuntimeMismatch,
            C::LibraryPathConflict,
        ],
        C::DriverMissing | C::ContainerNoGpu => vec![C::DriverMissing, C::ContainerNoGpu],
        C::WindowsCrashCode => vec![
            C::CudnnMismatch,
            C::CudaRuntimeMismatch,
            C::DriverTooOld,
            C::GpuMemoryExhausted,
            C::CpuOnlyBuild,
        ],
        other => vec![other],
    }
}

/// Human output.
pub fn render(input_label: &str, matches: &[Match], lines: Option<u64>) -> String {
    let mut s = String::new();
    if matches.is_empty() {
        s.push_str(&format!(
            "No known code or message matched {input_label}. gpudoctor knows Windows NTSTATUS codes, exit statuses (128+signal), CUDA, NVML and Xid codes, and framework error messages; `gpudoctor check` looks at the machine itself.\n"
        ));
        return s;
    }
    if let Some(n) = lines {
        s.push_str(&format!(
            "{} known problem(s) in {n} lines of {input_label}:\n\n",
            matches.len()
        ));
    }
    for (i, m) in matches.iter().enumerate() {
        let code = match &m.code {
            serde_json::Value::String(c) => c.clone(),
            other => other.to_string(),
        };
        let seen = match (m.count, m.first_line) {
            (Some(c), Some(l)) => format!(" — {c} time(s), first at line {l}"),
            _ => String::new(),
        };
        // A code leads its name ("0xC0000409 STATUS_STACK_BUFFER_OVERRUN"); a message
        // signature's code is the catalog's id, which says nothing a name does not: the name
        // alone heads it (the id stays in --json).
        let head = if m.kind == "signature" {
            crate::sanitize::clean(&m.name)
        } else {
            format!(
                "{} {}",
                crate::sanitize::clean(&code),
                crate::sanitize::clean(&m.name)
            )
        };
        s.push_str(&format!(
            "{}. {head} ({}, {}){seen}\n",
            i + 1,
            m.category.as_str(),
            match m.confidence {
                "high" => "most likely",
                "medium" => "likely",
                _ => "possible",
            }
        ));
        if let Some(t) = &m.text {
            s.push_str(&format!(
                "   Seen: {}\n",
                crate::sanitize::clean_line(t, 300)
            ));
        }
        if m.read_from == Some("description") {
            s.push_str("   Read from a description, not an error message: low confidence; the error text or the kernel log would tell more.\n");
        }
        s.push_str(&format!(
            "   What it is: {}\n",
            crate::sanitize::clean(&m.meaning)
        ));
        if let Some(e) = &m.emitter {
            s.push_str(&format!("   Printed by: {}\n", crate::sanitize::clean(e)));
        }
        if !m.likely_causes.is_empty() {
            s.push_str("   Likely causes:\n");
            for c in &m.likely_causes {
                s.push_str(&format!("     - {}\n", crate::sanitize::clean(c)));
            }
        }
        if !m.tell_apart.is_empty() {
            s.push_str("   To tell them apart:\n");
            for c in &m.tell_apart {
                s.push_str(&format!("     - {}\n", crate::sanitize::clean(c)));
            }
        }
        if !m.fix.text.is_empty() {
            s.push_str(&format!(
                "   Fix: {}\n",
                crate::sanitize::clean(&m.fix.text)
            ));
        }
        for c in &m.fix.commands {
            s.push_str(&format!("     $ {}\n", crate::sanitize::clean(c)));
        }
        for l in &m.machine {
            s.push_str(&format!("   This machine: {}\n", crate::sanitize::clean(l)));
        }
        s.push('\n');
    }
    s
}

/// The reading of an ambiguous signature's less common cause `alt`, after its common one: low
/// confidence, ranked below it, with the signature's fix and how to tell the causes apart.
pub(crate) fn less_often(sig: &catalog::Signature, alt: Category) -> Match {
    let mut x = Match::new(
        "signature",
        serde_json::json!(sig.id),
        format!("{} (less often: {})", sig.name, alt.as_str()),
        alt,
        format!(
            "{} can also come from {}; to tell them apart: {}",
            sig.name,
            alt.as_str(),
            sig.tell_apart.join("; ")
        ),
    )
    .severity(sig.severity)
    .key(format!("alt:{}:{}", sig.id, alt.as_str()));
    x.fix = sig.fix.clone();
    x.rank = sig.rank.saturating_sub(30);
    x.confidence = "low";
    x
}
