use super::*;

#[test]
fn normalise_folds_case_whitespace_and_quotes() {
    assert_eq!(normalise("  CUDA  out of\tmemory\n"), "cuda out of memory");
    assert_eq!(normalise("couldn’t `x`"), "couldn't 'x'");
}

#[test]
fn the_embedded_catalog_loads() {
    let c = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(c.signatures.len() >= 60, "{}", c.signatures.len());
}

#[test]
fn errors_name_file_and_line() {
    let text = "schema: gpudoctor.explain-catalog/1\nversion: x\nsignatures:\n  - id: a\n    category: nonsense\n    name: A\n    patterns: [abc]\n    meaning: m\n    fix: {text: t}\n    sources: [https://x]\n    examples: [{source: 'https://x', text: abc}]\n";
    let e = Catalog::from_texts(
        "f.yaml",
        std::iter::once(("f.yaml".to_string(), text.to_string())),
        false,
    )
    .unwrap_err();
    assert!(e[0].starts_with("f.yaml:4"), "{e:?}");
    assert!(e[0].contains("unknown category \"nonsense\""), "{e:?}");
}

#[test]
fn a_pattern_matches_whatever_the_case_and_spacing() {
    let c = Catalog::embedded().unwrap();
    let id = |line: &str| -> Vec<String> {
        c.matches(line)
            .iter()
            .map(|&i| c.signatures[i].id.clone())
            .collect()
    };
    assert!(
        id("TORCH.CUDA.OutOfMemoryError:  CUDA   out of memory").contains(&"torch-oom".to_string())
    );
    assert!(id("nothing to see here").is_empty());
}

/// The ids of the signatures a line matches in the embedded catalog.
fn ids(line: &str) -> Vec<String> {
    let c = Catalog::embedded().unwrap();
    c.matches(line)
        .iter()
        .map(|&i| c.signatures[i].id.clone())
        .collect()
}

/// Issue 30: the thermal signature's `psu` matched inside "psutil", "capsule" and "ipsum".
#[test]
fn a_pattern_matches_only_at_word_boundaries() {
    for line in [
        "ModuleNotFoundError: No module named 'psutil'",
        "the capsule network trains fine",
        "Lorem ipsum dolor sit amet",
    ] {
        assert!(!ids(line).contains(&"thermal".to_string()), "{line}");
    }
    // A PSU named as a word, in any case or punctuation, still is one.
    for line in [
        "I think it is the PSU.",
        "power (psu) is 650W",
        "PSU: Corsair RM850x",
    ] {
        assert!(ids(line).contains(&"thermal".to_string()), "{line}");
    }
    // A pattern ending in `_` is a stem, and `_` joins words: cudnn_cnn_infer64_8.dll is cuDNN's.
    assert!(ids("CUDNN_STATUS_INTERNAL_ERROR").contains(&"cudnn-status".to_string()));
    assert!(ids(
        "Could not locate cudnn_cnn_infer64_8.dll. Please make sure it is in your library path!"
    )
    .contains(&"cudnn-version-mismatch".to_string()));
}

/// IPython and rich colour the exception name: the colour codes are not text.
#[test]
fn ansi_colour_codes_are_not_text() {
    assert_eq!(
        normalise("\x1b[0;31mOutOfMemoryError\x1b[0m: CUDA"),
        "outofmemoryerror: cuda"
    );
    assert_eq!(normalise("a\x1b]0;title\x07b"), "ab");
    assert!(
        ids("\x1b[0;31mOutOfMemoryError\x1b[0m: CUDA out of memory.")
            .contains(&"torch-oom".to_string())
    );
    assert!(
        ids("\x1b[1;31mRuntimeError\x1b[0m: CUDA error:\x1b[0m out of memory")
            .contains(&"cuda-oom".to_string())
    );
}

/// Log collectors' prefixes do not hide a message that must be the whole line.
#[test]
fn log_prefixes_are_left_out() {
    for line in [
        "Nov 25 10:00:01 gpu-node-7 kernel: Killed",
        "2024-06-17T13:18:29.371622Z Killed",
        "[  123.456789] Killed",
        "[pod/trainer-0/main] Killed",
        "node/worker-3: Killed",
    ] {
        assert!(
            ids(line).contains(&"host-killed-line".to_string()),
            "{line}"
        );
    }
    assert!(ids("ERROR:root:MemoryError").contains(&"python-memoryerror".to_string()));
    assert_eq!(
        strip_log_prefix("10.5.0.2: kern: warning: [2024-03-01T10:00:00.123Z]: NVRM: Xid 79"),
        "NVRM: Xid 79"
    );
    assert_eq!(
        strip_log_prefix("Error\t11/25/2026 10:00:00 AM\tnvlddmkm\t153\tNone"),
        "nvlddmkm\t153\tNone"
    );
    // Words that only look like a prefix stay.
    assert_eq!(strip_log_prefix("error: cuda"), "error: cuda");
}

/// Issue 30: 50 MB of random bytes came back as "Xid error". A line of random bytes is no text,
/// whatever words it happens to hold.
#[test]
fn random_bytes_are_not_text() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut bytes = Vec::new();
    for i in 0..400 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.push((x >> 24) as u8);
        if i == 200 {
            bytes.extend_from_slice(b" NVRM: Xid 79, GPU has fallen off the bus ");
        }
    }
    let line = String::from_utf8_lossy(&bytes).replace('\n', " ");
    assert!(ids(&line).is_empty(), "{:?}", ids(&line));
    assert!(!is_text(&normalise(&line)));
    assert!(mostly_binary(&line));
    // Text with a stray control byte or a few non-ASCII letters is text.
    assert!(is_text(
        "nvrm: xid (pci:0000:3b:00): 79, gpu has fallen off the bus \u{7}"
    ));
    assert!(is_text("显存不足 cuda out of memory"));
}

/// Short words are words; long tokens and inflections still match; `*` marks a stem.
#[test]
fn word_bounds_follow_the_length_of_the_end_words() {
    assert_eq!(word_bounds("psu"), (true, true));
    assert_eq!(word_bounds("nvjitlink"), (false, false));
    assert_eq!(word_bounds("out of memory: kill"), (true, false));
    assert_eq!(word_bounds("exception code: 0xc*"), (false, false));
    assert_eq!(word_bounds("exception code: 0xc"), (false, true));
    assert_eq!(word_bounds("cudnn_status_"), (true, false));
    // Inflections and longer tokens of real messages keep matching.
    assert!(ids("Out of memory: Killed process 4242 (python)").contains(&"host-oom".to_string()));
    assert!(ids("Exception code: 0xc0000409").contains(&"windows-event-viewer".to_string()));
    assert!(ids(
        "libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12"
    )
    .contains(&"undefined-symbol".to_string()));
    // An NVSwitch SXid is not a GPU Xid.
    assert!(
        !ids("nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Non-fatal")
            .contains(&"xid".to_string())
    );
}

/// The built-in catalog's regexes, compiled at their first use, all compile.
#[test]
fn every_regex_of_the_built_in_catalog_compiles() {
    let cat = Catalog::embedded().unwrap();
    let with: Vec<&Signature> = cat
        .signatures
        .iter()
        .filter(|s| s.regex.is_some())
        .collect();
    assert!(with.len() >= 5, "{}", with.len());
    for s in with {
        assert!(
            s.regex.as_ref().and_then(LazyRegex::get).is_some(),
            "{}: its regex does not compile",
            s.id
        );
    }
}
