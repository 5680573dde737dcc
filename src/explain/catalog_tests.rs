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

/// The built-in catalog read from build.rs's JSON is the one read from its YAML: every field of
/// every signature, with the same file:line, and the same patterns in the same order.
#[test]
fn the_built_catalog_is_the_yaml_catalog() {
    let built = EMBEDDED_JSON
        .iter()
        .map(|(n, j)| serde_json::from_str::<BuiltFile>(j).map_err(|e| format!("{n}: {e}")))
        .collect::<Result<Vec<_>, _>>();
    assert!(built.is_ok(), "build.rs's JSON does not read: {built:?}");
    let json = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let yaml = Catalog::embedded_yaml().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(json.version, yaml.version);
    assert_eq!(json.signatures.len(), yaml.signatures.len());
    for (a, b) in json.signatures.iter().zip(&yaml.signatures) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    assert!(json
        .signatures
        .iter()
        .any(|s| s.at.ends_with(":1") || s.at.contains(".yaml:")));
    assert_eq!(json.all_patterns(), yaml.all_patterns());
    assert_eq!(json.owner, yaml.owner);
    assert_eq!(json.bounds, yaml.bounds);
    assert_eq!(json.family_of, yaml.family_of);
}

/// A malformed built-in catalog is said as before: build.rs leaves `null` for a file it cannot
/// parse, and the catalog is then read from the YAML, whose error names the file and line.
#[test]
fn a_file_build_rs_could_not_read_is_read_as_yaml() {
    let broken = "schema: gpudoctor.explain-catalog/1\nversion: x\nsignatures:\n  - id: a\n    nonsense: 1\n";
    assert!(serde_json::from_str::<BuiltFile>("null").is_err());
    let e = Catalog::from_texts(
        "embedded",
        std::iter::once((
            "explain-catalog/signatures.yaml".to_string(),
            broken.to_string(),
        )),
        true,
    )
    .err()
    .unwrap_or_default();
    assert!(
        e.iter()
            .any(|m| m.contains("explain-catalog/signatures.yaml:")),
        "{e:?}"
    );
}

/// The built-in catalog's automaton (built after the index's first MiB of text) builds, and a
/// text longer than that is matched by it as by the index.
#[test]
fn the_automaton_takes_over_from_the_index_with_the_same_matches() {
    let cat = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(cat.automaton().is_some());
    let fresh = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let lines = [
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
        "nov 25 10:00:01 node7 kernel: Out of memory: Killed process 4242 (python)",
        "ordinary line with nothing in it",
    ];
    let indexed = || fresh.indexed.load(std::sync::atomic::Ordering::Relaxed);
    let mut rounds = 0;
    // Past the index's share, and a few rounds more with the automaton.
    while indexed() <= INDEX_BYTES + 4096 && rounds < 1_000_000 {
        for l in lines {
            assert_eq!(fresh.matches(l), cat.matches(l), "{l}");
        }
        rounds += 1;
    }
    assert!(indexed() > INDEX_BYTES, "{}", indexed());
    assert!(!fresh.matches(lines[1]).is_empty());
}

/// `strip_log_prefix`'s quick-to-build search finds the prefix `regex::Regex` finds.
#[test]
fn the_log_prefix_search_is_the_regex_search() {
    let re = Regex::new(LOG_PREFIX).unwrap_or_else(|e| panic!("{e}"));
    let plain = |n: &str| -> String {
        match re.find(n) {
            Some(m) if m.end() < n.len() => n.get(m.end()..).unwrap_or(n).to_string(),
            _ => n.to_string(),
        }
    };
    let mut lines: Vec<String> = [
        "Nov 25 10:00:01 gpu-node-7 kernel: Killed",
        "nov 25 10:00:01 gpu-node-7 python3[4242]: Killed",
        "2024-06-17T13:18:29.371622Z Killed",
        "[2024-06-17 13:18:29,371] node1 train.py[77]: x",
        "[  123.456789] Killed",
        "[pod/trainer-0/main] Killed",
        "node/worker-3: Killed",
        "pods/a.b-c: x",
        "10.5.0.2: kern: warning: [2024-03-01T10:00:00.123Z]: NVRM: Xid 79",
        "Error\t11/25/2026 10:00:00 AM\tnvlddmkm\t153\tNone",
        "ERROR:root:MemoryError",
        "error: cuda",
        "ſep 25 10:00:01 host kernel: x",
        "\u{212a}ov 25 10:00:01 host kernel: x",
        "nov 25 10:00:01",
        "١٢٣٤-05-06 07:08 x",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every prefix of those lines, and each with a second prefix before it.
    let whole = lines.clone();
    for l in &whole {
        for (i, _) in l.char_indices() {
            lines.push(l.get(..i).unwrap_or("").to_string());
        }
        lines.push(format!("[  1.5] {l}"));
    }
    for l in &lines {
        assert_eq!(strip_log_prefix(l), plain(l), "{l:?}");
        let n = normalise(l);
        assert_eq!(strip_log_prefix(&n), plain(&n), "{n:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Random text of the prefixes' pieces: the same prefix.
    #[test]
    fn the_log_prefix_search_is_the_regex_search_on_random_text(
        s in "([0-9]{1,4}|[a-zA-Z]{1,5}|[ :./\\[\\]-]|kernel|pod/|node/|error|info|\u{212a}|\u{17f}|\u{661}|\t){0,16}",
    ) {
        let re = Regex::new(LOG_PREFIX).unwrap_or_else(|e| panic!("{e}"));
        let plain = match re.find(&s) {
            Some(m) if m.end() < s.len() => s.get(m.end()..).unwrap_or(&s),
            _ => &s,
        };
        proptest::prop_assert_eq!(strip_log_prefix(&s), plain);
    }
}

#[test]
fn a_quote_escaped_in_json_is_the_quote() {
    assert_eq!(
        normalise(r#""exec: \"nvidia-smi\": executable file not found in $PATH""#),
        r#""exec: "nvidia-smi": executable file not found in $path""#
    );
    // A backslash before anything else stays (a Windows path).
    assert_eq!(normalise(r"C:\Windows\x"), r"c:\windows\x");
}
