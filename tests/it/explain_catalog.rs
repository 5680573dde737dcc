//! The explain catalog (explain-catalog/*.yaml) as data: every signature's real example texts are
//! recognised as that signature's category; a replacement catalog is validated with file:line;
//! a whole paste on stdin is explained with the root cause first.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use common::Run;
use gpudoctor::explain::catalog::Catalog;
use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

#[test]
fn every_example_is_recognised_as_its_signature() {
    let c = Catalog::embedded().unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let m = Matrix::embedded().unwrap();
    let mut bad = Vec::new();
    for s in &c.signatures {
        for ex in &s.examples {
            // The signature's own patterns fire on a line of its example...
            let fires = ex
                .text
                .lines()
                .any(|l| c.matches(l).iter().any(|&i| c.signatures[i].id == s.id));
            // ...and its category is among the first three causes explain gives.
            let v = explain_text(&ex.text, &m);
            let mut cats: Vec<&str> = Vec::new();
            for x in &v {
                if !cats.contains(&x.category.as_str()) {
                    cats.push(x.category.as_str());
                }
            }
            let ranked = cats.iter().take(3).any(|c| *c == s.category.as_str());
            // An enricher may read a dispatching signature's example as another category (an
            // exit status that is an NVML code, a library that is cuDNN's): it must fire.
            if !fires || !(ranked || s.enrich.is_some()) {
                bad.push(format!(
                    "{} ({}): fires={fires} ranked={ranked} {cats:?} {}",
                    s.id, s.at, ex.source
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_replacement_catalog_is_validated_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("mine.yaml");
    std::fs::write(
        &f,
        "schema: gpudoctor.explain-catalog/1\nversion: '1'\nsignatures:\n  - id: mine\n    category: hardware_fault\n    name: Mine\n    patterns: [frobnicator melted]\n    regex: '(unclosed'\n    meaning: m\n    fix: {text: t}\n    sources: ['https://example.org/x']\n    examples: [{source: 'https://example.org/x', text: frobnicator melted}]\n",
    )
    .unwrap();
    let r = Run::new()
        .args(["explain", "--catalog"])
        .arg_path(&f)
        .args(["x"])
        .run();
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("mine.yaml:4"), "{}", r.stderr);
    assert!(r.stderr.contains("bad regex"), "{}", r.stderr);

    // A valid one replaces the built-in catalog.
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("    regex: '(unclosed'\n", "");
    std::fs::write(&f, text).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--catalog"])
        .arg_path(&f)
        .args(["the FROBNICATOR   melted"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["matches"][0]["code"], "mine");
    let r = Run::new()
        .args(["explain", "--json", "--catalog"])
        .arg_path(&f)
        .args(["CUDA out of memory"])
        .run();
    assert_eq!(r.json()["matches"].as_array().unwrap().len(), 0);
}

/// A copy of the project's explain-catalog/ directory (signatures and code tables) works as a
/// replacement: the code tables in it are left to the built-in ones, the signatures are read.
#[test]
fn a_copy_of_the_catalog_directory_is_a_valid_replacement() {
    let d = tempfile::tempdir().unwrap();
    for f in ["signatures.yaml", "codes.yaml"] {
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("explain-catalog")
                .join(f),
            d.path().join(f),
        )
        .unwrap();
    }
    let r = Run::new()
        .args(["explain", "--json", "--catalog"])
        .arg_path(d.path())
        .args(["Xid 79: GPU has fallen off the bus"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["matches"][0]["code"], 79, "{}", r.stdout);
    let r = Run::new()
        .args(["explain", "--json", "--catalog"])
        .arg_path(d.path())
        .args(["0xC0000409"])
        .run();
    assert_eq!(
        r.json()["matches"][0]["name"],
        "STATUS_STACK_BUFFER_OVERRUN",
        "{}",
        r.stdout
    );
}

/// A whole traceback on stdin (how people paste): the root cause leads, its consequences follow.
#[test]
fn a_pasted_traceback_on_stdin_leads_with_the_root_cause() {
    use std::io::Write;
    // pytorch/pytorch#51382 (kernel log) followed by the training error it caused.
    let paste = "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    loss.backward()\nRuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n[1084456.074562] NVRM: Xid (PCI:0000:09:00): 79, pid=0, GPU has fallen off the bus.\n";
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.args(["explain", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(paste.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = v["matches"].as_array().unwrap();
    assert_eq!(m[0]["category"], "hardware_fault", "{v:#}");
    assert_eq!(m[0]["code"], 79, "{v:#}");
    assert!(
        m.iter().any(|x| x["category"] == "application_error"),
        "{v:#}"
    );
    // A decimal and a hex reading of one code are one match.
    let r = Run::new()
        .args([
            "explain",
            "--json",
            "Process finished with exit code -1073740791 (0xC0000409)",
        ])
        .run();
    assert_eq!(
        r.json()["matches"].as_array().unwrap().len(),
        1,
        "{}",
        r.stdout
    );
    // 137 is host memory.
    let r = Run::new()
        .args([
            "explain",
            "--json",
            "Training task exit with status code 137",
        ])
        .run();
    assert_eq!(
        r.json()["matches"][0]["category"],
        "host_memory_exhausted",
        "{}",
        r.stdout
    );
}
