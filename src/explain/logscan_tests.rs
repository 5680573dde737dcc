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
        let key = |r: &ScanResult| -> Vec<(String, Option<u64>, Option<u64>)> {
            r.matches
                .iter()
                .map(|x| (x.key.clone(), x.count, x.first_line))
                .collect()
        };
        assert_eq!(
            key(&many),
            key(&one),
            "{threads} threads, segments of {segment}"
        );
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
    let mut lower = Vec::new();
    let mut starts = Vec::new();
    pre.candidates(ordinary.as_bytes(), &mut lower, &mut starts);
    let lines = ordinary.lines().count();
    assert!(lines > 20_000);
    let c = cover(cat);
    let literals: Vec<String> = c.strong.concat();
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
