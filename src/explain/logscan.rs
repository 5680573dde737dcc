//! `explain --log FILE`: scans a log of any size in one streaming pass. A leftmost-first
//! Aho-Corasick automaton over every signature's needle finds candidate lines in 1 MiB chunks (no
//! per-line regex loop); leftmost-first rather than overlapping because only that search uses the
//! vectorised (Teddy) prefilter, about ten times faster here (3.2 vs 0.3 GB/s). Only a line with
//! a hit is decoded, and an overlapping automaton then lists every needle in that line alone. Line numbers come from counting newlines with
//! memchr. Each distinct match is reported once, with its count and first line.

use std::collections::HashMap;
use std::io::Read;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::signatures::{match_signatures, needles};
use super::{sort, Match};
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

pub fn scan<R: Read>(mut r: R, m: &Matrix) -> std::io::Result<ScanResult> {
    let pats = needles();
    let build = |kind| {
        AhoCorasick::builder()
            .match_kind(kind)
            .build(&pats)
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    // Finds the next line with any needle, fast; then every needle of that one line.
    let finder = build(MatchKind::LeftmostFirst)?;
    let per_line = build(MatchKind::Standard)?;
    let mut parser = LogParser::new();
    let mut found: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Match> = Vec::new();
    // Bytes read but not yet scanned (a partial last line) stay at the front of `buf`; each read
    // appends straight after them, so nothing is copied twice.
    let mut buf: Vec<u8> = vec![0u8; CHUNK + MAX_LINE];
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
        let mut counted_to = 0usize;
        let mut counted_lines = line_no;
        let mut pos = 0usize;
        while let Some(hit) = finder.find(Input::new(done).range(pos..)) {
            let start = memchr::memrchr(b'\n', done.get(..hit.start()).unwrap_or(&[]))
                .map(|i| i + 1)
                .unwrap_or(0);
            let stop = memchr::memchr(b'\n', done.get(hit.start()..).unwrap_or(&[]))
                .map(|i| hit.start() + i)
                .unwrap_or(done.len());
            // The next search starts on the next line: each line is matched once.
            pos = (stop + 1).min(done.len());
            counted_lines += memchr::memchr_iter(b'\n', done.get(counted_to..start).unwrap_or(&[]))
                .count() as u64;
            counted_to = start;
            let this_line = counted_lines + 1;
            let raw = done.get(start..stop.min(start + MAX_LINE)).unwrap_or(&[]);
            let text = String::from_utf8_lossy(raw);
            // Every needle this line contains, so one signature per line is tried once.
            let mut ids: Vec<usize> = per_line
                .find_overlapping_iter(raw)
                .map(|h| h.pattern().as_usize())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            for mut x in match_signatures(&text, Some(&ids), m, &mut parser) {
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
    sort(&mut out);
    Ok(ScanResult {
        matches: out,
        lines: line_no,
        bytes,
    })
}

#[cfg(test)]
#[path = "logscan_tests.rs"]
mod tests;
