//! Unit tests of `knowledge::messages`.
use super::*;

#[test]
fn every_embedded_file_parses_and_names_a_category_and_a_signature() {
    let f = load().unwrap_or_else(|e| panic!("{e:?}"));
    assert!(f.len() >= 30, "{} families", f.len());
    for x in &f {
        assert!(
            crate::report::Category::ALL
                .iter()
                .any(|c| c.as_str() == x.category),
            "{}: category {}",
            x.id,
            x.category
        );
        assert!(
            x.signature.is_some() || x.fix.is_some() || x.signal.is_some(),
            "{}",
            x.id
        );
    }
}

#[test]
fn pieces_match_in_order_only() {
    let f = families()
        .iter()
        .find(|f| f.id == "torch-load-cuda-unavailable")
        .expect("family");
    let n = crate::explain::catalog::normalise(
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
    );
    assert!(f.matches_pieces(&n));
    // The same pieces out of order are not the message.
    assert!(!f.matches_pieces("device but torch. attempting to deserialize object on a cuda"));
}

#[test]
fn keys_need_every_word_on_a_short_line() {
    let f = families()
        .iter()
        .find(|f| f.id == "torch-not-compiled-cuda")
        .expect("family");
    assert!(f.matches_keys("torch not being compiled with cuda enabled"));
    assert!(!f.matches_keys("torch compiled with cuda enabled"));
    let long = "torch not compiled with cuda enabled ".repeat(4);
    assert!(!f.matches_keys(&long));
}

#[test]
fn numbers_are_not_words_of_a_short_line() {
    // xmrig-nvidia's "GPU #1: out of memory" (xmrig/xmrig-nvidia#28) is the CUDA runtime's
    // "out of memory" with a device index before it; a longer sentence is not.
    let f = families()
        .iter()
        .find(|f| f.keys == ["out", "of", "memory"])
        .expect("the CUDA runtime's out-of-memory family");
    assert!(f.matches_keys("gpu #1: out of memory"));
    assert!(f.matches_keys("error 2: out of memory"));
    assert!(!f.matches_keys("the host ran out of memory while loading"));
}

#[test]
fn a_family_with_a_regex_needs_its_whole_shape() {
    let f = families()
        .iter()
        .find(|f| f.id == "bash-job-killed")
        .expect("family");
    assert!(f.regex.is_some());
    let n = crate::explain::catalog::normalise(
        "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed    python3 main.py",
    );
    assert!(f.matches_pieces(&n));
    // Its pieces without the job's numbers are prose, not bash's report.
    assert!(!f.matches_pieces("see the readme: line endings matter, the job was killed"));
}

#[test]
fn every_regex_compiles() {
    for f in families() {
        if let Some(r) = &f.regex {
            assert!(regex::Regex::new(r).is_ok(), "{}: {r}", f.id);
        }
    }
}
