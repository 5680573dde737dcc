//! Unit tests of `logscan`.
use super::*;

#[test]
fn counts_first_lines_and_handles_chunk_edges() {
    let m = Matrix::embedded().unwrap();
    let mut log = String::new();
    for i in 0..50_000 {
        log.push_str(&format!(
            "step {i} loss 0.123 lr 3e-4 throughput 1234.5 samples/s\n"
        ));
        if i == 10 || i == 40_000 {
            log.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
        }
        if i == 20_000 {
            log.push_str("[ 9.1] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n");
        }
    }
    let r = scan(log.as_bytes(), &m).unwrap();
    assert_eq!(r.lines, 50_003);
    // The Xid, the illegal access (and Xid 79's less common cause, power or heat).
    let causes: Vec<_> = r
        .matches
        .iter()
        .filter(|x| !x.key.starts_with("alt:"))
        .collect();
    assert_eq!(causes.len(), 2, "{:#?}", r.matches);
    let x79 = r.matches.iter().find(|x| x.kind == "xid").unwrap();
    assert_eq!((x79.count, x79.first_line), (Some(1), Some(20_003)));
    let ill = r
        .matches
        .iter()
        .find(|x| x.name.contains("illegal memory access"))
        .unwrap();
    assert_eq!((ill.count, ill.first_line), (Some(2), Some(12)));
    // The hardware fault (critical Xid) comes before the application error.
    assert_eq!(r.matches[0].kind, "xid");
}

#[test]
fn no_trailing_newline_and_empty_input() {
    let m = Matrix::embedded().unwrap();
    let r = scan("a\nTorch not compiled with CUDA enabled".as_bytes(), &m).unwrap();
    assert_eq!(r.lines, 2);
    assert_eq!(r.matches.len(), 1);
    assert_eq!(r.matches[0].first_line, Some(2));
    let r = scan(&b""[..], &m).unwrap();
    assert_eq!((r.lines, r.matches.len()), (0, 0));
}

/// The threaded scan of a file gives what the one-thread scan of the same bytes gives: the same
/// matches, counts, first lines and line count, with segments far smaller than the lines'
/// spread (so boundaries fall inside lines, inside a long line and at the end).
#[test]
fn threaded_file_scan_equals_the_stream_scan() {
    let m = Matrix::embedded().unwrap();
    let cat = crate::explain::embedded_catalog().unwrap();
    let mut log = String::new();
    for i in 0..20_000 {
        log.push_str(&format!(
            "step {i} loss 0.123 lr 3e-4 throughput 1234.5 samples/s\n"
        ));
        match i % 997 {
            5 => {
                log.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n")
            }
            300 => {
                log.push_str("[ 9.1] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n")
            }
            600 => log.push_str(
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
            ),
            _ => {}
        }
        if i == 7_000 {
            // A line longer than the look-ahead for a line start, with a hit at its start.
            log.push_str("CUDA_ERROR_ILLEGAL_ADDRESS ");
            log.push_str(&"x".repeat(70_000));
            log.push('\n');
        }
    }
    log.push_str("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"); // no newline at the end
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.log");
    std::fs::write(&path, &log).unwrap();
    let one = scan_with(log.as_bytes(), &m, cat).unwrap();
    assert!(one.matches.len() >= 4, "{:#?}", one.matches);
    for (threads, segment) in [(2, 4096), (3, 10_000), (2, 1 << 20), (5, 777)] {
        let f = std::fs::File::open(&path).unwrap();
        let len = f.metadata().unwrap().len();
        let many = scan_parallel(&f, len, &m, cat, threads, segment).unwrap();
        assert_eq!(
            (many.lines, many.bytes),
            (one.lines, one.bytes),
            "{threads} {segment}"
        );
        assert_eq!(
            key(&many),
            key(&one),
            "{threads} threads, segments of {segment}"
        );
        // A stream (a pipe) read in small pieces, handed to the threads in blocks.
        let piped =
            scan_stream_in(Trickle(log.as_bytes()), &m, cat, threads, segment as usize).unwrap();
        assert_eq!(
            (piped.lines, piped.bytes, piped.not_text),
            (one.lines, one.bytes, one.not_text),
            "{threads} {segment}"
        );
        assert_eq!(
            key(&piped),
            key(&one),
            "stream: {threads} threads, blocks of {segment}"
        );
    }
}

fn key(r: &ScanResult) -> Vec<(String, Option<u64>, Option<u64>)> {
    r.matches
        .iter()
        .map(|x| (x.key.clone(), x.count, x.first_line))
        .collect()
}

/// A reader that gives at most 1000 bytes a read, as a pipe may.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len()).min(1000);
        let (a, b) = self.0.split_at(n);
        buf[..n].copy_from_slice(a);
        self.0 = b;
        Ok(n)
    }
}

/// Lines shaped like real GPU-job output (the shapes of scripts/bench-explain-gen.py: PyTorch
/// with `cuda:0` everywhere, NCCL INFO, tqdm redraws, vLLM, the HF Trainer, `journalctl -k`
/// with NVRM lines), with real error lines among them, some with tabs, doubled spaces and
/// capitals that the normalised matching tolerates.
fn realistic_log() -> String {
    let mut s = String::new();
    for i in 0..3000u32 {
        let dev = i % 8;
        s.push_str(&format!("[2026-11-25 10:00:01,123][train][INFO] - epoch 3 step {i} loss=tensor(0.6931, device='cuda:0', grad_fn=<NllLossBackward0>) lr=3.0e-04\n"));
        s.push_str(&format!(
            "[rank0] step {i} max memory allocated on cuda:0: 22.{i} GiB, reserved 32.00 GiB\n"
        ));
        s.push_str(&format!("gpu-node-07:4123{dev}:4128{dev} [{dev}] NCCL INFO Channel {:02}/0 : {dev}[{dev}] -> 1[1] via P2P/CUMEM/read\n", i % 32));
        s.push_str(&format!("gpu-node-07:4123{dev}:4128{dev} [{dev}] NCCL INFO Allocated 4194310 bytes of device memory for NVLink buffers on GPU {dev}\n"));
        s.push_str(&format!("Epoch 3:  45%|████▌     | {i}/1000 [01:23<01:42,  5.37it/s, loss=0.234]\rEpoch 3:  46%|████▌     | {i}/1000 [01:23<01:42,  5.37it/s, loss=0.233]\n"));
        s.push_str(&format!("INFO 11-25 14:02:11 metrics.py:351] Avg prompt throughput: 512.3 tokens/s, Running: {i} reqs, GPU KV cache usage: 34.5%, CPU KV cache usage: 0.0%.\n"));
        s.push_str(&format!(
            "{{'loss': 0.4321, 'grad_norm': 1.234, 'learning_rate': 4.5e-05, 'epoch': 0.{i}}}\n"
        ));
        s.push_str(&format!("Nov 25 10:00:01 gpu-node-07 kernel: NVRM: GPU at PCI:0000:{:02x}:00: GPU-8a013fda-1b2c-3d4e-5f60-4a08cede2442\n", 24 + dev * 16));
        s.push_str("Nov 25 10:00:01 gpu-node-07 kernel: nvidia-nvlink: Nvlink Core is being initialized, major device number 509\n");
        match i % 500 {
            7 => s.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.12 GiB is free.\n"),
            77 => s.push_str("gpu-node-07:41231:41288 [1] transport/p2p.cc:275 (p2pMap) NCCL WARN Cuda failure 'out of memory'\n"),
            177 => s.push_str("Nov 25 23:59:58 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"),
            277 => s.push_str("ERROR 11-25 15:02:11 async_llm_engine.py:65] RuntimeError: CUDA  error:\tan ILLEGAL memory   access was encountered\n"),
            377 => s.push_str("Epoch 3:  47%|████▋     | 470/1000 [01:23<01:42]\rRuntimeError: CUDA error: device-side assert triggered\n"),
            477 => s.push_str("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n"),
            _ => {}
        }
    }
    s
}

/// The lines the plain matcher finds: every line (cut as the scanner cuts it) matched in full.
fn plain_matches(log: &str, cat: &Catalog) -> Vec<(u64, Vec<usize>)> {
    log.split('\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.get(..l.len().min(MAX_LINE)).unwrap_or(l);
            let hits = cat.matches(l);
            (!hits.is_empty()).then_some((i as u64 + 1, hits))
        })
        .collect()
}

/// The prefilter (literals chosen to be rare in ordinary output) finds every line the plain
/// per-line matcher finds, on realistic logs, in one stream and in the threaded file scan.
#[test]
fn the_fast_path_finds_the_lines_the_plain_matcher_finds() {
    let m = Matrix::embedded().unwrap();
    let cat = crate::explain::embedded_catalog().unwrap();
    let log = realistic_log();
    let want = plain_matches(&log, cat);
    assert_eq!(want.len(), 6 * 6, "{want:?}");
    let pre = Prefilter::new(cat).unwrap();
    let mut got = Vec::new();
    stream_candidates(log.as_bytes(), &pre, |before, raw| {
        let hits = cat.matches(&String::from_utf8_lossy(raw));
        if !hits.is_empty() {
            got.push((before + 1, hits));
        }
    })
    .unwrap();
    assert_eq!(got, want);
    // The whole scan, threaded or not, gives what explaining every line gives.
    let one = scan_with(log.as_bytes(), &m, cat).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("real.log");
    std::fs::write(&path, &log).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let many = scan_parallel(&f, log.len() as u64, &m, cat, 2, 100_000).unwrap();
    let key = |v: &[Match]| -> Vec<(String, Option<u64>, Option<u64>)> {
        v.iter()
            .map(|x| (x.key.clone(), x.count, x.first_line))
            .collect()
    };
    let whole = crate::explain::explain_with(&log, &m, cat);
    assert_eq!(key(&one.matches), key(&whole));
    assert_eq!(key(&many.matches), key(&whole));
    let piped = scan_stream_in(log.as_bytes(), &m, cat, 2, 100_000).unwrap();
    assert_eq!(key(&piped.matches), key(&whole));
    assert_eq!(piped.lines, one.lines);
}

/// Ordinary lines of GPU jobs are not candidates: a PyTorch log says `cuda:0` on every line, NCCL
/// says NVLink, GPU and memory, the kernel log NVRM; none of these may be a literal (the old
/// cover's `cuda` made every line of such a log a candidate).
#[test]
fn ordinary_gpu_job_lines_are_not_candidates() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let pre = Prefilter::new(cat).unwrap();
    let log = realistic_log();
    let ordinary: String = log
        .lines()
        .filter(|l| cat.matches(l).is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let mut scratch = Scratch::default();
    let mut starts = Vec::new();
    pre.candidates(ordinary.as_bytes(), &mut scratch, &mut starts);
    let lines = ordinary.lines().count();
    assert!(lines > 20_000);
    let c = cover(cat);
    let literals = &c.strong;
    let why: std::collections::BTreeSet<&String> = starts
        .iter()
        .filter_map(|&s| {
            let line = ordinary.get(s..)?.lines().next()?.to_ascii_lowercase();
            literals.iter().find(|x| line.contains(x.as_str()))
        })
        .collect();
    assert!(
        starts.len() * 100 < lines,
        "{} of {lines} ordinary lines are candidates, through {why:?} ({} weak literals: {:?})",
        starts.len(),
        c.weak.len(),
        c.weak
            .iter()
            .map(|(x, of)| (x, of.len()))
            .collect::<Vec<_>>(),
    );
}

/// A line far longer than a read (a tqdm bar redrawn with `\r` for a whole epoch) is scanned in
/// bounded memory, and the error after it is found.
#[test]
fn a_huge_line_is_scanned_and_the_error_after_it_found() {
    let m = Matrix::embedded().unwrap();
    let mut log = Vec::new();
    for n in 0..200_000u32 {
        log.extend_from_slice(
            format!("\rEpoch 3:  45%|████▌     | {n}/1000000 [01:23<01:42,  5.37it/s]").as_bytes(),
        );
    }
    assert!(log.len() > 10 << 20);
    log.extend_from_slice(b"Traceback (most recent call last):\nRuntimeError: CUDA error: device-side assert triggered\n");
    let r = scan(log.as_slice(), &m).unwrap();
    assert_eq!(r.lines, 2);
    let x = r
        .matches
        .iter()
        .find(|x| x.name.to_lowercase().contains("device-side assert"))
        .unwrap_or_else(|| panic!("{:#?}", r.matches));
    assert_eq!(x.first_line, Some(2));
}

/// [`cover`] as it was first written (every window of the background hashed, every piece
/// rescored each round): the reference the faster one must equal.
fn cover_reference(cat: &Catalog) -> Cover {
    use std::collections::{HashMap, HashSet};
    let mut pats: Vec<&str> = cat
        .signatures
        .iter()
        .flat_map(|s| s.patterns.iter().map(String::as_str))
        .chain(cat.families.iter().filter_map(|(_, f)| f.anchor()))
        .collect();
    pats.sort_unstable();
    pats.dedup();
    // How many background lines hold each 4- to 6-byte piece.
    let mut seen: HashMap<&[u8], u32> = HashMap::new();
    let lowered: Vec<Vec<u8>> = BACKGROUND
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.as_bytes().to_ascii_lowercase())
        .collect();
    for l in &lowered {
        let mut mine: HashSet<&[u8]> = HashSet::new();
        for n in 3..=6 {
            for w in l.windows(n) {
                mine.insert(w);
            }
        }
        for w in mine {
            *seen.entry(w).or_default() += 1;
        }
    }
    let fit = |x: &str| x.is_ascii() && !x.contains(['\'', '"']);
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut pieces: Vec<String> = Vec::new();
    let mut of_pattern: Vec<Vec<usize>> = Vec::new();
    for p in &pats {
        let mut g: Vec<String> = Vec::new();
        for w in p.split(' ') {
            let chars: Vec<(usize, char)> = w.char_indices().collect();
            // A word of three ("xid", "nan", "old") is a piece too, weighed as rarer ones are.
            if chars.len() == 3 && fit(w) && !w.chars().all(|c| c.is_ascii_digit()) {
                g.push(w.to_string());
            }
            for n in 4..=6 {
                for i in 0..chars.len().saturating_sub(n - 1) {
                    let (Some(&(a, _)), end) = (chars.get(i), chars.get(i + n)) else {
                        continue;
                    };
                    let b = end.map_or(w.len(), |&(b, _)| b);
                    let x = w.get(a..b).unwrap_or("");
                    let numeric = x.chars().all(|c| c.is_ascii_digit() || c == '.');
                    if !x.is_empty() && !numeric && fit(x) {
                        g.push(x.to_string());
                    }
                }
            }
        }
        if g.is_empty() {
            let longest = p
                .split(' ')
                .filter(|w| fit(w))
                .max_by_key(|w| (!w.chars().all(|c| c.is_ascii_digit()), w.len()))
                .unwrap_or(p);
            g.push(longest.to_string());
        }
        g.sort_unstable();
        g.dedup();
        of_pattern.push(
            g.into_iter()
                .map(|x| {
                    let n = pieces.len();
                    *ids.entry(x.clone()).or_insert_with(|| {
                        pieces.push(x);
                        n
                    })
                })
                .collect(),
        );
    }
    let cost: Vec<f64> = pieces
        .iter()
        .map(|x| {
            // Three bytes are in more words than any sample shows.
            let short = if x.len() < 4 { SHORT_WEIGHT } else { 0.0 };
            1.0 + short + BACKGROUND_WEIGHT * f64::from(*seen.get(x.as_bytes()).unwrap_or(&0))
        })
        .collect();
    let mut covers = vec![0usize; pieces.len()];
    for g in &of_pattern {
        for &i in g {
            if let Some(c) = covers.get_mut(i) {
                *c += 1;
            }
        }
    }
    let mut covered = vec![false; pats.len()];
    let mut chosen: Vec<String> = Vec::new();
    loop {
        // Most patterns covered for the weight; then the longer piece; then the first in order.
        let best = (0..pieces.len())
            .filter(|&i| covers.get(i).is_some_and(|&c| c > 0))
            .max_by(|&a, &b| {
                let score = |i: usize| {
                    covers.get(i).copied().unwrap_or(0) as f64 / cost.get(i).copied().unwrap_or(1.0)
                };
                let (pa, pb) = (
                    pieces.get(a).map_or("", String::as_str),
                    pieces.get(b).map_or("", String::as_str),
                );
                score(a)
                    .total_cmp(&score(b))
                    .then(pa.len().cmp(&pb.len()))
                    .then(pb.cmp(pa))
            });
        let Some(best) = best else { break };
        for (j, g) in of_pattern.iter().enumerate() {
            if covered.get(j).copied().unwrap_or(true) || !g.contains(&best) {
                continue;
            }
            if let Some(c) = covered.get_mut(j) {
                *c = true;
            }
            for &i in g {
                if let Some(c) = covers.get_mut(i) {
                    *c = c.saturating_sub(1);
                }
            }
        }
        if let Some(x) = pieces.get(best) {
            chosen.push(x.clone());
        }
    }
    chosen.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    let (weak, strong): (Vec<String>, Vec<String>) = chosen
        .into_iter()
        .partition(|x| seen.get(x.as_bytes()).is_some_and(|&n| n > 0));
    // Each weak literal with the words of every pattern it is a piece of, rarest first.
    let rarity = |w: &str| seen.get(w.as_bytes()).copied().unwrap_or(0);
    let weak = weak
        .into_iter()
        .map(|x| {
            let id = ids.get(&x).copied();
            let mut of: Vec<Vec<String>> = pats
                .iter()
                .zip(&of_pattern)
                .filter(|(_, g)| id.is_some_and(|i| g.contains(&i)))
                .map(|(p, _)| {
                    let mut words: Vec<String> = p
                        .split(' ')
                        .filter(|w| !w.is_empty() && fit(w))
                        .map(str::to_string)
                        .collect();
                    words.sort_by_key(|w| (rarity(w), std::cmp::Reverse(w.len())));
                    words.dedup();
                    words
                })
                .collect();
            of.sort();
            of.dedup();
            (x, of)
        })
        .collect();
    Cover { strong, weak }
}

/// The cover computed at startup (counting only the pieces' windows, a lazy greedy) is the one
/// the plain greedy chooses: the same literals, in the same groups, the same weak ones with the
/// same words.
#[test]
fn the_fast_cover_equals_the_reference() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let fast = cover(cat);
    let slow = cover_reference(cat);
    assert!(fast.strong.len() > 50);
    assert_eq!(fast.strong, slow.strong);
    assert_eq!(fast.weak, slow.weak);
}

/// The committed cover (src/explain/cover_built.rs) is the built-in catalog's, and the one the
/// scan uses: the same literals, groups and weak words as computing it now (a copy of the
/// catalog with one pattern more is computed at run time). With GPUDOCTOR_WRITE_COVER=1 it
/// writes the file anew.
#[test]
fn the_built_cover_is_the_computed_one() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let now = cover(cat);
    let text = crate::explain::cover::render_rust(
        &now,
        crate::explain::cover::patterns_hash(&cover_patterns(cat)),
        crate::explain::catalog::cover_inputs(),
        &crate::explain::catalog::kernel_anchors_normalised(),
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/explain/cover_built.rs");
    if std::env::var_os("GPUDOCTOR_WRITE_COVER").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap().replace("\r\n", "\n");
    assert!(
        committed == text,
        "src/explain/cover_built.rs is stale: run GPUDOCTOR_WRITE_COVER=1 cargo test --lib explain::logscan::tests::the_built_cover_is_the_computed_one"
    );
    let built =
        built_cover(cat).expect("the committed cover is for the built-in catalog's patterns");
    assert!(built.strong.len() > 50);
    assert_eq!(built.strong, now.strong);
    assert_eq!(built.weak, now.weak);
    // The built-in catalog's scan uses it without loading the catalog.
    assert!(
        EmbeddedCatalog.has_committed_cover(),
        "the committed cover is for the files this binary embeds"
    );
    let known = committed_cover();
    assert_eq!(known.strong, now.strong);
    assert_eq!(known.weak, now.weak);
    let mut other = Catalog::embedded().unwrap();
    other.signatures[0]
        .patterns
        .push("zqxj frobnicated".to_string());
    assert!(built_cover(&other).is_none());
    assert!(cover(&other)
        .strong
        .iter()
        .any(|x| "zqxj frobnicated".contains(x.as_str())));
}

/// A hit deep in a line longer than MAX_LINE is matched in the window around it: an error
/// printed after a progress bar on the same line (no newline between) at 100 KB and another at
/// 180 KB of a 500 KB line are both found (the whole line's first 64 KiB held neither).
#[test]
fn hits_deep_in_a_long_line_are_matched() {
    let m = Matrix::embedded().unwrap();
    let bar = |n: usize| -> Vec<u8> {
        let mut v = Vec::new();
        let mut i = 0u32;
        while v.len() < n {
            v.extend_from_slice(
                format!("\rEpoch 3:  45%|####      | {i}/1000000 [01:23<01:42,  5.37it/s]")
                    .as_bytes(),
            );
            i += 1;
        }
        v.truncate(n);
        v
    };
    let mut log = bar(100_000);
    log.extend_from_slice(b" RuntimeError: CUDA error: device-side assert triggered ");
    log.extend_from_slice(&bar(80_000));
    log.extend_from_slice(
        b" NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus. ",
    );
    log.extend_from_slice(&bar(320_000));
    log.extend_from_slice(b"\nlast line\n");
    let r = scan(log.as_slice(), &m).unwrap();
    assert_eq!(r.lines, 2);
    let names: Vec<String> = r.matches.iter().map(|x| x.name.to_lowercase()).collect();
    assert!(
        names.iter().any(|n| n.contains("device-side assert")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.contains("fallen")), "{names:?}");
    assert!(r.matches.iter().all(|x| x.first_line == Some(1)));
    assert!(!r.not_text);
}

/// Binary data read as a stream (standard input) says it is not text, as a binary file does;
/// a log does not.
#[test]
fn a_binary_stream_is_not_text() {
    let m = Matrix::embedded().unwrap();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut bytes = Vec::new();
    while bytes.len() < 2 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let r = scan(bytes.as_slice(), &m).unwrap();
    assert!(r.matches.is_empty());
    assert!(r.not_text);
    let r = scan(realistic_log().as_bytes(), &m).unwrap();
    assert!(!r.not_text);
    assert!(!r.matches.is_empty());
}

/// Lines whose literal only lowercasing beyond ASCII or dropping an ANSI escape shows (a colour
/// sequence inside a word, a Kelvin sign, a capital dotted I) are candidates: the scan finds
/// what the per-line matcher finds in them.
#[test]
fn literals_behind_colours_and_unicode_case_are_found() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let mut log = realistic_log();
    // Patterns whose literal a colour sequence cuts, or whose literal's `k` is a Kelvin sign.
    let strong = cover(cat).strong;
    let mut cut = 0;
    for sig in &cat.signatures {
        for p in &sig.patterns {
            let Some((at, x)) = strong
                .iter()
                .filter(|x| x.is_ascii())
                .find_map(|x| p.find(x.as_str()).map(|i| (i, x)))
            else {
                continue;
            };
            for line in [
                format!("{}\u{1b}[0m{}", &p[..at + 1], &p[at + 1..]),
                format!("{}{}", &p[..at], p[at..].replacen('k', "\u{212a}", 1)),
            ] {
                if line != *p && !line.contains(x.as_str()) && !cat.matches(&line).is_empty() {
                    log.push_str(&line);
                    log.push('\n');
                    cut += 1;
                }
            }
        }
    }
    assert!(cut > 20, "{cut}");
    log.push_str(
        "RuntimeError: CUDA error: an illegal mem\u{1b}[0mory acc\u{1b}[1mess was encountered\n",
    );
    log.push_str("[  12.3] Out of memory: \u{212a}illed process 4242 (python) total-vm:1234kB\n");
    log.push_str("gpu-node-07:41231:41288 [1] NCCL WARN Cuda failure 'out of memory' \u{1b}[0m\n");
    let want = plain_matches(&log, cat);
    let pre = Prefilter::new(cat).unwrap();
    let mut got = Vec::new();
    stream_candidates(log.as_bytes(), &pre, |before, raw| {
        let hits = cat.matches(&String::from_utf8_lossy(raw));
        if !hits.is_empty() {
            got.push((before + 1, hits));
        }
    })
    .unwrap();
    assert_eq!(got, want);
    // The coloured and Kelvin lines match something (else the test would prove nothing).
    let n = log.lines().count() as u64;
    assert!(want.iter().any(|(l, _)| *l == n - 2), "{:?}", want.last());
    assert!(want.iter().any(|(l, _)| *l == n - 1), "{:?}", want.last());
}

/// The mined message families' anchors are patterns of the catalog's automaton but not of its
/// signatures, from which [`cover`] is computed: a line that only an anchor matches is found by
/// the log scan only if the anchor holds a literal of the cover. Every one does (40 today); an
/// anchor added without one fails here (then the cover must take the anchors too).
#[test]
fn every_family_anchor_holds_a_literal_of_the_cover() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let c = cover(cat);
    let strong = &c.strong;
    let mut n = 0;
    let mut missed = Vec::new();
    for (_, f) in &cat.families {
        let Some(a) = f.anchor() else { continue };
        let a = crate::explain::catalog::normalise(a);
        n += 1;
        let held = strong.iter().any(|x| a.contains(x.as_str()))
            || c.weak.iter().any(|(x, of)| {
                a.contains(x.as_str())
                    && of
                        .iter()
                        .any(|ws| ws.iter().all(|w| a.contains(w.as_str())))
            });
        if !held {
            missed.push(a);
        }
    }
    assert!(n >= 20, "{n}");
    assert!(
        missed.is_empty(),
        "anchors the log scan would not see: {missed:?}"
    );
}

/// The plain weak-literal check: `line` holds a weak literal and every word of one of its
/// patterns (a substring search each).
fn plain_weak(weak: &[(String, Vec<Vec<String>>)], line: &[u8]) -> bool {
    let has = |w: &str| memchr::memmem::find(line, w.as_bytes()).is_some();
    weak.iter()
        .any(|(x, of)| has(x) && of.iter().any(|ws| ws.iter().all(|w| has(w))))
}

/// The weak literals and their patterns' words, each once, sorted: the pieces test lines are
/// made of.
fn weak_pieces(weak: &[(String, Vec<Vec<String>>)]) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    for (x, of) in weak {
        pieces.push(x.clone());
        for ws in of {
            pieces.extend(ws.iter().cloned());
        }
    }
    pieces.sort();
    pieces.dedup();
    pieces
}

/// The weak literals' check by one automaton equals the plain one (a substring search for the
/// literal and for each word of its patterns), on lines made of the built-in cover's weak
/// literals and words, whole or cut, with other text between them.
#[test]
fn the_weak_words_check_equals_the_plain_one() {
    use proptest::prelude::*;
    let cat = crate::explain::embedded_catalog().unwrap();
    let weak = cover(cat).weak;
    let ww = WeakWords::new(&weak);
    let mut wsc = WeakScratch::default();
    let plain = |line: &[u8]| plain_weak(&weak, line);
    let pieces = weak_pieces(&weak);
    // Every pattern's words, with its literal: each such line holds.
    let mut held = 0;
    for (x, of) in &weak {
        for ws in of {
            let line = format!("{x} {}", ws.join(" "));
            assert!(ww.holds(line.as_bytes(), &mut wsc), "{line}");
            held += 1;
        }
    }
    assert!(held > 100);
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 2000,
        ..Default::default()
    });
    let line = proptest::collection::vec(
        (
            prop::sample::select(pieces),
            0usize..3,
            prop::sample::select(vec![" ", "", "x", "_"]),
        ),
        0..12,
    );
    // One scratch for every case, as a scanning thread keeps it between lines.
    let kept = std::cell::RefCell::new(wsc);
    runner
        .run(&line, |parts| {
            let mut s = String::new();
            for (w, cut, sep) in &parts {
                s.push_str(w.get(*cut..).unwrap_or(w));
                s.push_str(sep);
            }
            prop_assert_eq!(
                ww.holds(s.as_bytes(), &mut kept.borrow_mut()),
                plain(s.as_bytes()),
                "{}",
                s
            );
            Ok(())
        })
        .unwrap();
}

/// The filter's check of a weak hit by its literal alone (a literal of few patterns, checked at
/// its hit, the line's later hits then checked too) lets through every line the whole check
/// lets through: lines made of the built-in cover's weak literals and words (a literal of few
/// patterns first, then others), each one line of a text, against the plain check.
#[test]
fn a_weak_literal_checked_alone_misses_no_line() {
    use proptest::prelude::*;
    let cat = crate::explain::embedded_catalog().unwrap();
    let cover = cover(cat);
    let weak = cover.weak.clone();
    let pre = Prefilter::without_shapes(&cover).unwrap();
    let few: Vec<String> = weak
        .iter()
        .filter(|(_, of)| of.len() <= FEW)
        .map(|(x, _)| x.clone())
        .collect();
    assert!(few.len() >= 5, "{few:?}");
    let plain = |line: &[u8]| plain_weak(&weak, line);
    let pieces = weak_pieces(&weak);
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 2000,
        ..Default::default()
    });
    let line = (
        prop::sample::select(few),
        proptest::collection::vec(
            (
                prop::sample::select(pieces),
                prop::sample::select(vec![" ", "x", "_"]),
            ),
            0..10,
        ),
    );
    let s = std::cell::RefCell::new(Scratch::default());
    let held = std::cell::Cell::new(0usize);
    runner
        .run(&line, |(first, parts)| {
            let mut l = format!("q {first} ");
            for (w, sep) in &parts {
                l.push_str(w);
                l.push_str(sep);
            }
            if plain(l.as_bytes()) {
                held.set(held.get() + 1);
                let text = format!("ordinary line\n{l}\nanother ordinary line\n");
                let starts = starts_of(&pre, text.as_bytes(), &mut s.borrow_mut());
                prop_assert!(starts.contains(&14), "{}", l);
            }
            Ok(())
        })
        .unwrap();
    assert!(held.get() >= 100, "{} lines held a pattern", held.get());
}

/// No kernel-log line of the committed ordinary output (explain-catalog/log-background.txt: the
/// driver's banner, its persistence and UVM lines, PCI and audit lines) passes the first stage
/// unless the catalog matches it. A pattern whose words all occur in such a line (DKMS's "Module
/// build for kernel" in "NVRM: loading NVIDIA UNIX Open Kernel Module ... Release Build") sent
/// every such line of a journal through normalisation and the whole catalog (the journal shape
/// 0.21 -> 0.36 s, docs/benchmarks.md).
#[test]
fn no_ordinary_kernel_log_line_is_a_candidate() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let pre = Prefilter::new(cat).unwrap();
    let lines: Vec<&str> = BACKGROUND
        .lines()
        .filter(|l| l.contains(" kernel: ") && cat.matches(l).is_empty())
        .collect();
    assert!(lines.len() >= 10, "{}", lines.len());
    let mut passed = Vec::new();
    for line in &lines {
        let text = format!("{line}\n");
        let mut scratch = Scratch::default();
        let mut starts = Vec::new();
        pre.candidates(text.as_bytes(), &mut scratch, &mut starts);
        if !starts.is_empty() {
            passed.push(*line);
        }
    }
    assert!(passed.is_empty(), "{passed:#?}");
}

/// The candidate starts of `text` by `pre`, with the scratch `s` (kept between calls, as a
/// scanning thread keeps it, so that the shape cache is warm).
fn starts_of(pre: &Prefilter, text: &[u8], s: &mut Scratch) -> Vec<usize> {
    let mut v = Vec::new();
    pre.candidates(text, s, &mut v);
    v
}

/// Lines that differ only in digits, one holding a literal of the cover that has a digit and the
/// other not (`[8, 2048]` and `[0, 2048]`, `bar1` and `bar0`, `Xid 13` beside `Xid 79`): the
/// line-shape cache learns the shape from the clean one and must still let the other through,
/// in either order, and the skipped lines are exactly those the filter finds nothing in.
#[test]
fn lines_that_differ_only_in_digits_are_not_skipped_wrongly() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let cover = cover(cat);
    let with = Prefilter::of_cover(&cover).unwrap();
    assert!(with.shapes.is_some());
    let without = Prefilter::without_shapes(&cover).unwrap();
    let digit_lits: Vec<&String> = cover
        .strong
        .iter()
        .filter(|x| x.bytes().any(|b| b.is_ascii_digit()))
        .collect();
    assert!(digit_lits.len() >= 3, "{digit_lits:?}");
    let mut log = String::new();
    let mut pairs = 0;
    for (i, x) in digit_lits.iter().enumerate() {
        // The literal with each digit moved on by one (another literal only by chance).
        let other: String = x
            .chars()
            .map(|c| match c.to_digit(10) {
                Some(d) => char::from_digit((d + 1) % 10, 10).unwrap_or(c),
                None => c,
            })
            .collect();
        let (a, b) = (
            format!("step {i} batch torch.Size(x{other}y 2048) ok"),
            format!("step {i} batch torch.Size(x{x}y 2048) ok"),
        );
        push_both_orders(&mut log, &a, &b);
        pairs += 1;
    }
    assert!(pairs >= 3);
    for _ in 0..50 {
        log.push_str(
            "[  1.0] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=python, Graphics Exception\n",
        );
        log.push_str("[  1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n");
        log.push_str(
            "[rank0] step 12 max memory allocated on cuda:0: 22.31 GiB, reserved 32.00 GiB\n",
        );
    }
    let want = same_starts(&with, &without, &log);
    // Every line with a digit literal is a candidate, and some lines were skipped.
    assert!(want.len() >= 2 * pairs, "{} {pairs}", want.len());
    assert!(want.len() < log.lines().count());
}

/// The line-shape cache changes nothing: the first stage with it finds the same lines as
/// without it, on random text made of the cover's literals and words (whole, cut, with their
/// digits changed, in capitals), digits, CR, ESC, the Kelvin sign and other UTF-8, in lines of
/// every length (longer than the cached ones too, with `\r` redraws), in one scratch kept across
/// cases so that shapes seen in one case are hits in the next.
#[test]
fn the_shape_cache_finds_what_the_filter_finds() {
    use proptest::prelude::*;
    let cat = crate::explain::embedded_catalog().unwrap();
    let cover = cover(cat);
    let with = Prefilter::of_cover(&cover).unwrap();
    let without = Prefilter::without_shapes(&cover).unwrap();
    let mut pieces: Vec<String> = cover.strong.clone();
    for (x, of) in &cover.weak {
        pieces.push(x.clone());
        for ws in of {
            pieces.extend(ws.iter().cloned());
        }
    }
    pieces.extend(
        [
            "0",
            "7",
            "42",
            "2048",
            "\r",
            "\u{1b}[0m",
            "\u{212a}",
            "\u{130}",
            "é",
            " ",
            "  ",
            "INFO ",
            "step ",
            "cuda:0",
            "[8, ",
            "Xid 79",
            "Xid 13",
            // Hex tokens, whole and cut, beside the literals (a token hides what it covers).
            "-",
            "cmpl-",
            "0x",
            "0x7ffd5a3c",
            "9c6a4a08c720",
            "cede24428a013fda",
            "dead1",
            "0bad1",
            "c0000005",
            "a1b2",
            "ffff",
        ]
        .map(String::from),
    );
    pieces.sort();
    pieces.dedup();
    let part = (
        prop::sample::select(pieces),
        0usize..3,
        0u8..4,
        prop::sample::select(vec!["", " ", "\n", "x", "\r", "\n", "\n"]),
    );
    let text = proptest::collection::vec(part, 0..60);
    let kept = std::cell::RefCell::new((Scratch::default(), Scratch::default()));
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 1500,
        ..Default::default()
    });
    runner
        .run(&text, |parts| {
            let mut t = String::new();
            for (w, cut, how, sep) in &parts {
                let w = w.get(*cut..).unwrap_or(w);
                match how {
                    0 => t.push_str(w),
                    1 => t.push_str(&w.to_ascii_uppercase()),
                    // Its digits changed: the same shape, maybe no literal.
                    2 => t.extend(w.chars().map(|c| if c.is_ascii_digit() { '3' } else { c })),
                    // Repeated: lines longer than the cached ones.
                    _ => {
                        for _ in 0..(1 + SHAPE_MAX / (w.len() + 1)) {
                            t.push_str(w);
                            t.push('\r');
                        }
                    }
                }
                t.push_str(sep);
            }
            // Twice: the second time, the shapes are in the cache.
            let t = format!("{t}\n{t}");
            let mut k = kept.borrow_mut();
            let (s, r) = &mut *k;
            let got = starts_of(&with, t.as_bytes(), s);
            let want = starts_of(&without, t.as_bytes(), r);
            prop_assert_eq!(got, want, "{:?}", t);
            Ok(())
        })
        .unwrap();
}

/// Lines of one template whose hex tokens differ (request ids, addresses), one of them holding a
/// literal of the cover inside or at the edge of its token: the shape (tokens masked) is learnt
/// from the clean lines and the other must still be a candidate, in either order; the skipped
/// lines are exactly those the filter finds nothing in.
#[test]
fn lines_that_differ_only_in_hex_tokens_are_not_skipped_wrongly() {
    let cat = crate::explain::embedded_catalog().unwrap();
    let cover = cover(cat);
    let with = Prefilter::of_cover(&cover).unwrap();
    let without = Prefilter::without_shapes(&cover).unwrap();
    // The cover's literals that a token can cover, whole or in part.
    let hexy: Vec<&String> = cover
        .strong
        .iter()
        .filter(|x| shapes::token_risky(x.to_ascii_lowercase().as_bytes()))
        .collect();
    assert!(hexy.len() >= 3, "{hexy:?}");
    let mut log = String::new();
    let mut pairs = 0;
    for x in &hexy {
        // The literal between hex digits that join its hex runs at its ends into tokens, and the
        // same line with every byte inside a token changed to another hex digit: one shape.
        let with_lit = format!("req cmpl-9ab{x}7c-0 ok");
        let mut shape = Vec::new();
        token_shape(with_lit.as_bytes(), &mut shape);
        let other: String = with_lit
            .bytes()
            .zip(&shape)
            .map(|(b, &m)| match (m == shapes::TOKEN, b) {
                (false, b) => char::from(b),
                (true, b'0'..=b'8') => char::from(b + 1),
                (true, b'9') => '0',
                (true, b'f' | b'F') => 'e',
                (true, b) => char::from(b.to_ascii_lowercase() + 1),
            })
            .collect();
        let mut other_shape = Vec::new();
        token_shape(other.as_bytes(), &mut other_shape);
        if other_shape != shape || !shape.contains(&shapes::TOKEN) {
            continue;
        }
        push_both_orders(&mut log, &other, &with_lit);
        pairs += 1;
    }
    assert!(pairs >= 3, "{pairs}");
    // The words of a weak literal's pattern, one of them (made only of hex digits: `137` of
    // "exit code 137") inside a hex token: the line holds the pattern, its twin with the token
    // changed does not.
    let mut words = 0;
    for (_, of) in &cover.weak {
        for ws in of {
            for w in ws {
                if w.is_empty() || !w.bytes().all(|b| b.is_ascii_hexdigit()) || words >= 40 {
                    continue;
                }
                let line: Vec<String> = ws
                    .iter()
                    .map(|v| {
                        if v == w {
                            format!("9ab{v}7c")
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                let with_word = line.join(" ");
                let other = with_word.replace(
                    &format!("9ab{w}7c"),
                    &"9ab7c".replace('b', &"b".repeat(w.len() + 1)),
                );
                let (mut a, mut b) = (Vec::new(), Vec::new());
                token_shape(with_word.as_bytes(), &mut a);
                token_shape(other.as_bytes(), &mut b);
                if a != b || other.contains(w.as_str()) {
                    continue;
                }
                push_both_orders(&mut log, &other, &with_word);
                words += 1;
            }
        }
    }
    assert!(words >= 3, "{words}");
    for k in 0..200 {
        log.push_str(&format!(
            "INFO 11-25 14:00:01 logger.py:37] Received request cmpl-{k:016x}-0: prompt: 'x', params: SamplingParams(temperature=0.7), lora_request: None.\n"
        ));
    }
    let want = same_starts(&with, &without, &log);
    // The lines holding a literal are candidates, and some lines were skipped.
    assert!(want.len() >= 2 * pairs, "{} {pairs}", want.len());
    assert!(want.len() < log.lines().count());
}

/// A line shape masks its hex tokens, and only those.
#[test]
fn a_shape_masks_hex_tokens() {
    let shape = |x: &str| {
        let mut out = Vec::new();
        token_shape(x.as_bytes(), &mut out);
        String::from_utf8_lossy(&out).replace(char::from(shapes::TOKEN), "#")
    };
    assert_eq!(shape("cmpl-9c6a4a08c720-0:"), "cmpl-############-0:");
    assert_eq!(shape("at 0x7ffd5a3c ok"), "at 0x######## ok");
    assert_eq!(shape("uuid 3f2a1b4c-9d8e"), "uuid ########-####");
    // Digits only, letters only, too short, touching a word: not tokens.
    assert_eq!(
        shape("12345678 deadbeef a1b step_9abc1 x9abc1"),
        "00000000 deadbeef a0b step_0abc0 x0abc0"
    );
}

/// On a line shape, the words a hex token may hide (`1455`, `be`) count as present where the
/// shape holds a token: a line whose token held the word must not be found clean.
#[test]
fn weak_words_a_token_may_hide_count_on_a_shape_with_a_token() {
    let weak = vec![(
        "error".to_string(),
        vec![
            vec!["winerror".to_string(), "1455".to_string()],
            vec!["could".to_string(), "be".to_string(), "error".to_string()],
        ],
    )];
    let t = char::from(shapes::TOKEN).to_string();
    let on_shapes = WeakWords::with_dfa_after(&weak, DFA_AFTER, true);
    let on_lines = WeakWords::with_dfa_after(&weak, DFA_AFTER, false);
    let mut s = WeakScratch::default();
    for (line, shape, plain) in [
        (format!("winerror {}", t.repeat(6)), true, false),
        (format!("could error {}", t.repeat(4)), true, false),
        ("winerror 0x0000abcd".to_string(), false, false),
        ("winerror 1455".to_string(), true, true),
        ("could error".to_string(), false, false),
    ] {
        assert_eq!(on_shapes.holds(line.as_bytes(), &mut s), shape, "{line:?}");
        assert_eq!(on_lines.holds(line.as_bytes(), &mut s), plain, "{line:?}");
    }
}

/// A weak literal a hex token may hide (made only of hex digits here): a shape holding a token
/// has its weak words checked, so the line whose token holds the literal is still found.
#[test]
fn a_weak_literal_inside_a_token_is_found() {
    let cover = Cover {
        strong: vec!["xid".to_string()],
        weak: vec![(
            "0bad".to_string(),
            vec![vec!["0bad".to_string(), "fail".to_string()]],
        )],
    };
    let with = Prefilter::of_cover(&cover).unwrap();
    let without = Prefilter::without_shapes(&cover).unwrap();
    let mut log = String::new();
    push_both_orders(&mut log, "fail cmpl-1cad12ef-0", "fail cmpl-0bad12ef-0");
    let want = same_starts(&with, &without, &log);
    assert_eq!(want.len(), 4);
}

/// A line's token shape, as the scan makes it.
fn token_shape(line: &[u8], out: &mut Vec<u8>) {
    shapes::shape_of(line, out);
    shapes::mask_tokens(out, &mut Vec::new());
}

/// Three lines of `a` then one of `b`, then three of `b` then one of `a`: a shape learnt from the
/// first kind of line must still let the other through, in either order.
fn push_both_orders(log: &mut String, a: &str, b: &str) {
    for (p, q) in [(a, b), (b, a)] {
        for _ in 0..3 {
            log.push_str(p);
            log.push('\n');
        }
        log.push_str(q);
        log.push('\n');
    }
}

/// The lines the first stage finds in `log` with the line-shape cache, which must be those it
/// finds without it.
fn same_starts(with: &Prefilter, without: &Prefilter, log: &str) -> Vec<usize> {
    let (mut s, mut r) = (Scratch::default(), Scratch::default());
    let want = starts_of(without, log.as_bytes(), &mut r);
    assert_eq!(starts_of(with, log.as_bytes(), &mut s), want);
    want
}
