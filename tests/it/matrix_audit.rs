//! scripts/matrix-audit on recorded PyPI answers (tests/fixtures/pypi: trimmed real
//! /pypi/<pkg>/json documents and a real wheel .metadata), so its parsing is tested offline.
//! The assertions follow the matrix in use: a row the matrix gains turns "lacks" into nothing
//! and a corrected pin into "matches", and the test says which it expects.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::matrix::Matrix;
use std::path::Path;
use std::process::Command;

fn audit() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("scripts/matrix-audit"))
        .arg("--gpudoctor")
        .arg(env!("CARGO_BIN_EXE_gpudoctor"))
        .arg("--pypi-dir")
        .arg(root.join("tests/fixtures/pypi"))
        .output()
        .expect("python3 runs scripts/matrix-audit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn section<'a>(text: &'a str, head: &str) -> &'a str {
    let start = text
        .find(head)
        .unwrap_or_else(|| panic!("no {head}:\n{text}"));
    let rest = &text[start + head.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn the_audit_reads_recorded_pypi_metadata() {
    let m = Matrix::embedded().unwrap();
    let text = audit();
    let lacks = section(&text, "## Released versions the matrix lacks");
    let pins = section(&text, "## Pins that differ");

    // torch.json lists 1.12.1, 1.13.1, 2.11.0 and 2.15.0.
    let torch_line = lacks.lines().find(|l| l.starts_with("- **torch**"));
    for (mm, newest) in [("1.12", "1.12.1"), ("2.15", "2.15.0")] {
        let want = format!("{mm} (newest {newest})");
        let has_row = m.torch(&format!("{mm}.0")).is_some();
        assert_eq!(
            torch_line.is_some_and(|l| l.contains(&want)),
            !has_row,
            "torch {mm}: {lacks}"
        );
    }
    assert!(!torch_line.is_some_and(|l| l.contains("2.11")), "{lacks}");

    // The real torch 2.11.0 wheel metadata pins nvidia-cudnn-cu13==9.19.0.56 and
    // cuda-toolkit==13.0.2 (CUDA 13.0). PyPI's wheel is compared with the row's PyPI values (the
    // variant's `pypi:` override), not with the PyTorch index's wheel of the same tag.
    let row = m.torch("2.11.0").unwrap();
    let v = row.variant(&row.pypi_default).unwrap();
    let pypi_cudnn = v
        .pypi
        .as_ref()
        .and_then(|p| p.cudnn.as_deref())
        .or(v.cudnn.as_deref());
    let line = text
        .lines()
        .find(|l| l.contains("torch 2.11.0 (PyPI wheel)"))
        .unwrap_or_else(|| panic!("{text}"));
    if pypi_cudnn == Some("9.19.0.56") && v.cuda == "13.0" {
        assert!(
            line.contains(": matches (CUDA 13.0; cuDNN 9.19.0.56"),
            "{line}"
        );
        assert!(!pins.contains("torch 2.11.0"), "{pins}");
    } else {
        assert!(pins.contains(line), "{pins}");
        if pypi_cudnn != Some("9.19.0.56") {
            assert!(line.contains("cuDNN 9.19.0.56"), "{line}");
        }
        if v.cuda != "13.0" {
            assert!(line.contains("CUDA 13.0"), "{line}");
        }
    }
    // The index's wheel keeps its own value, which the audit cannot read and says so.
    if let (Some(index), Some(pypi)) = (v.cudnn.as_deref(), pypi_cudnn) {
        assert_eq!(
            line.contains(&format!(
                "the index's {} wheel's cuDNN {index} is not read here",
                v.tag
            )),
            index != pypi && !pins.contains(line),
            "{line}"
        );
    }
    // torch 1.12.1 pins no CUDA package (its CUDA is inside the wheel): the CUDA of its
    // torch/version.py (recorded: cuda = '10.2') is compared with the row's PyPI variant.
    let row = m.torch("1.12.1").unwrap();
    let cuda = &row.variant(&row.pypi_default).unwrap().cuda;
    let line = text
        .lines()
        .find(|l| l.contains("torch 1.12.1 (PyPI wheel)"))
        .unwrap_or_else(|| panic!("{text}"));
    if cuda == "10.2" {
        assert!(line.ends_with("matches (CUDA 10.2)"), "{line}");
    } else {
        assert!(pins.contains(line) && line.contains("CUDA 10.2"), "{line}");
    }

    // jax.json lists 0.4.13, 0.4.30 and 0.12.0.1 (and 0.12.0rc1, not a release). 0.4.13 is
    // named in compat-matrix/audit-skip.json: it is listed as left out on purpose, with the
    // reason, never as lacking; 0.4.30 lacks while no row covers it.
    let skipped = section(&text, "## Left out on purpose");
    assert!(
        skipped.contains("- jax 0.4.13: before 0.4.14") && skipped.contains("(https://"),
        "{skipped}"
    );
    let jax_line = lacks
        .lines()
        .find(|l| l.starts_with("- **jax**"))
        .unwrap_or("");
    assert!(!jax_line.contains("0.4.13"), "{lacks}");
    let covered = m.jax("0.4.30", 11).is_some()
        || m.jax("0.4.30", 12).is_some()
        || m.jax("0.4.30", 13).is_some();
    assert_eq!(jax_line.contains("0.4.30"), !covered, "{lacks}");
    assert!(!jax_line.contains("0.12.0.1"), "{lacks}");

    // torch 2.15.0 is the package JSON's own version: its requires_dist is read from there.
    if m.torch("2.15.0").is_none() {
        assert!(
            pins.contains("torch 2.15.0 (not in the matrix): its PyPI wheel installs CUDA 13.2, cuDNN 9.26.0.51"),
            "{pins}"
        );
    }

    // Development builds and release candidates are not releases.
    assert!(!text.contains(".dev"), "{text}");
    assert!(!text.contains("rc1"), "{text}");
    // CUDA 13.5's runtime is listed while the matrix has no 13.5 toolkit.
    let has_135 = m.toolkits.iter().any(|t| t.cuda == "13.5");
    assert_eq!(
        lacks.contains("CUDA 13.5 (newest 13.5.37)"),
        !has_135,
        "{lacks}"
    );
    // A cuDNN release in no row of the cuDNN table.
    let in_rows = |v: &str| m.cudnn(v).is_some();
    for v in ["9.17.1.4", "9.26.0.51", "9.28.1.4"] {
        let line = lacks
            .lines()
            .find(|l| l.starts_with("- **nvidia-cudnn-cu13**"))
            .unwrap_or("");
        assert_eq!(line.contains(v), !in_rows(v), "{v}: {lacks}");
    }
    // Packages without a recorded answer are said, not passed silently.
    assert!(text.contains("- tensorflow: no metadata"), "{text}");
}

#[test]
fn a_skip_entry_without_a_reason_or_source_is_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let skip = dir.path().join("skip.json");
    std::fs::write(
        &skip,
        r#"{"skip": [{"package": "jax", "below": "0.4.14", "reason": "old"}]}"#,
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(root.join("scripts/matrix-audit"))
        .arg("--gpudoctor")
        .arg(env!("CARGO_BIN_EXE_gpudoctor"))
        .arg("--pypi-dir")
        .arg(root.join("tests/fixtures/pypi"))
        .arg("--skip")
        .arg(&skip)
        .output()
        .expect("python3 runs scripts/matrix-audit");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("entry 1 needs") && err.contains("source"),
        "{err}"
    );
}
