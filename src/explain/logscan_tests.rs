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
