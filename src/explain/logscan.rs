//! `explain --log FILE`: scans a log of any size in one streaming pass. Each 1 MiB chunk is
//! lowercased into a second buffer, and vectorised (Teddy) searches over a small cover of the
//! catalog's patterns ([`Catalog::prefilter_groups`], about a hundred literals in groups of 64)
//! find the candidate lines; a byte-at-a-time automaton over the catalog's few hundred patterns
//! ran at a fifth of the speed. Only a candidate line is decoded and matched against the whole
//! catalog (normalised, as pasted text is). Line numbers come from counting newlines with memchr.
//! Each distinct match is reported once, with its count and first line.

use std::collections::HashMap;
use std::io::Read;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::catalog::Catalog;
use super::{line_matches, rank, Match};
use crate::faults::logparse::LogParser;
use crate::matrix::Matrix;

const CHUNK: usize = 1 << 20;
/// Longest line kept whole; longer lines are cut (their hits still count).
const MAX_LINE: usize = 64 * 1024;

pub struct ScanResult {
    pub matches: Vec<Match>,
    pub lines: u64,
    pub bytes: u64,
}

pub fn scan<R: Read>(r: R, m: &Matrix) -> std::io::Result<ScanResult> {
    let cat = super::embedded_catalog()
        .ok_or_else(|| std::io::Error::other("the built-in explain catalog is broken"))?;
    scan_with(r, m, cat)
}

/// [`scan`] with a given catalog.
pub fn scan_with<R: Read>(mut r: R, m: &Matrix, cat: &Catalog) -> std::io::Result<ScanResult> {
    let groups = cat.prefilter_groups();
    let mut searchers = Vec::new();
    for g in groups {
        match aho_corasick::packed::Config::new()
            .builder()
            .extend(g)
            .build()
        {
            Some(s) => searchers.push(s),
            None => {
                searchers.clear();
                break;
            }
        }
    }
    // Where no vectorised search is available: one automaton over every literal.
    let fallback = if searchers.is_empty() {
        Some(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(groups.iter().flatten())
                .map_err(|e| std::io::Error::other(e.to_string()))?,
        )
    } else {
        None
    };
    let mut parser = LogParser::new();
    let mut found: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Match> = Vec::new();
    // Bytes read but not yet scanned (a partial last line) stay at the front of `buf`; each read
    // appends straight after them, so nothing is copied twice.
    let mut buf: Vec<u8> = vec![0u8; CHUNK + MAX_LINE];
    let mut lower: Vec<u8> = Vec::with_capacity(CHUNK + MAX_LINE);
    let mut have = 0usize;
    let mut line_no: u64 = 0; // lines before `buf`
    let mut bytes: u64 = 0;
    let mut eof = false;
    while !eof {
        if buf.len() < have + CHUNK {
            buf.resize(have + CHUNK, 0);
        }
        let n = match r.read(buf.get_mut(have..).unwrap_or(&mut [])) {
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
        // The prefilter words are lowercase: search a lowercased copy (same offsets).
        lower.clear();
        lower.extend_from_slice(done);
        lower.make_ascii_lowercase();
        // The start of every line with a literal of any group, in order, each once.
        let mut starts: Vec<usize> = Vec::new();
        let note = |hit: usize, starts: &mut Vec<usize>| -> usize {
            let start = memchr::memrchr(b'\n', lower.get(..hit).unwrap_or(&[]))
                .map(|i| i + 1)
                .unwrap_or(0);
            starts.push(start);
            // Go on from the next line: one hit a line is enough.
            memchr::memchr(b'\n', lower.get(hit..).unwrap_or(&[]))
                .map(|i| hit + i + 1)
                .unwrap_or(lower.len())
        };
        for sr in &searchers {
            let mut pos = 0usize;
            while let Some(h) = sr.find_in(&lower, aho_corasick::Span::from(pos..lower.len())) {
                pos = note(h.start(), &mut starts);
            }
        }
        if let Some(ac) = &fallback {
            let mut pos = 0usize;
            while let Some(h) = ac.find(Input::new(&lower[..]).range(pos..)) {
                pos = note(h.start(), &mut starts);
            }
        }
        starts.sort_unstable();
        starts.dedup();
        let mut counted_to = 0usize;
        let mut counted_lines = line_no;
        for start in starts {
            let stop = memchr::memchr(b'\n', done.get(start..).unwrap_or(&[]))
                .map(|i| start + i)
                .unwrap_or(done.len());
            counted_lines += memchr::memchr_iter(b'\n', done.get(counted_to..start).unwrap_or(&[]))
                .count() as u64;
            counted_to = start;
            let this_line = counted_lines + 1;
            let raw = done.get(start..stop.min(start + MAX_LINE)).unwrap_or(&[]);
            let text = String::from_utf8_lossy(raw);
            for mut x in line_matches(cat, &text, m, &mut parser) {
                match found.get(&x.key) {
                    Some(&i) => {
                        if let Some(e) = out.get_mut(i) {
                            e.count = Some(e.count.unwrap_or(1) + 1);
                        }
                    }
                    None => {
                        x.count = Some(1);
                        x.first_line = Some(this_line);
                        found.insert(x.key.clone(), out.len());
                        out.push(x);
                    }
                }
            }
        }
        line_no += memchr::memchr_iter(b'\n', done).count() as u64;
        if eof && !done.is_empty() && done.last() != Some(&b'\n') {
            line_no += 1;
        }
        buf.copy_within(end..have, 0);
        have -= end;
    }
    rank(&mut out);
    Ok(ScanResult {
        matches: out,
        lines: line_no,
        bytes,
    })
}

#[cfg(test)]
#[path = "logscan_tests.rs"]
mod tests;
