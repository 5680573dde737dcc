//! `explain --log FILE`: scans a log of any size in one streaming pass. An Aho-Corasick automaton
//! over every signature's needle finds candidate lines in 1 MiB chunks (no per-line regex loop);
//! only lines with a hit are decoded and matched. Line numbers come from counting newlines with
//! memchr. Each distinct match is reported once, with its count and first line.

use std::collections::HashMap;
use std::io::Read;

use aho_corasick::{AhoCorasick, MatchKind};

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
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&pats)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut parser = LogParser::new();
    let mut found: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Match> = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + MAX_LINE);
    let mut chunk = vec![0u8; CHUNK];
    let mut line_no: u64 = 0; // lines before `buf`
    let mut bytes: u64 = 0;
    let mut eof = false;
    while !eof {
        let n = r.read(&mut chunk)?;
        if n == 0 {
            eof = true;
        } else {
            bytes += n as u64;
            buf.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
        }
        // Process complete lines only (everything at EOF).
        let end = if eof {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                None if buf.len() > MAX_LINE => buf.len(),
                None => continue,
            }
        };
        let (done, _) = buf.split_at(end);
        let mut counted_to = 0usize;
        let mut counted_lines = line_no;
        let mut last_line_start = usize::MAX;
        for hit in ac.find_overlapping_iter(done) {
            let start = memchr::memrchr(b'\n', done.get(..hit.start()).unwrap_or(&[]))
                .map(|i| i + 1)
                .unwrap_or(0);
            if start == last_line_start {
                continue;
            }
            last_line_start = start;
            let stop = memchr::memchr(b'\n', done.get(hit.start()..).unwrap_or(&[]))
                .map(|i| hit.start() + i)
                .unwrap_or(done.len());
            counted_lines += memchr::memchr_iter(b'\n', done.get(counted_to..start).unwrap_or(&[]))
                .count() as u64;
            counted_to = start;
            let this_line = counted_lines + 1;
            let raw = done.get(start..stop.min(start + MAX_LINE)).unwrap_or(&[]);
            let text = String::from_utf8_lossy(raw);
            // Every needle this line contains, so one signature per line is tried once.
            let ids: Vec<usize> = ac
                .find_overlapping_iter(raw)
                .map(|h| h.pattern().as_usize())
                .collect();
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
        buf.drain(..end);
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
