#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::matrix::Matrix;

#[test]
fn the_matrix_version_is_the_one_the_embedded_matrix_reports() {
    // build.rs reads data_version lines itself; the loader parses the YAML. They must agree.
    let m = Matrix::embedded().unwrap();
    assert_eq!(MATRIX_VERSION, m.data_version);
}

#[test]
fn the_target_is_the_one_cargo_built_for() {
    let arch = std::env::consts::ARCH;
    assert!(TARGET.starts_with(arch), "{TARGET} vs {arch}");
    assert!(
        TARGET.contains("-linux-") || !cfg!(target_os = "linux"),
        "{TARGET}"
    );
}

#[test]
fn the_commit_is_hex_or_unknown() {
    let c = GIT_COMMIT.strip_suffix("-dirty").unwrap_or(GIT_COMMIT);
    assert!(
        c == "unknown" || (c.len() >= 7 && c.chars().all(|ch| ch.is_ascii_hexdigit())),
        "{GIT_COMMIT}"
    );
    assert!(LONG_VERSION.starts_with(VERSION));
    assert!(LONG_VERSION.contains(&format!("\ncommit: {GIT_COMMIT}\n")));
}
