//! Unit tests of `matrix`.
use super::*;

#[test]
fn nvml_and_marketing_names_resolve() {
    let m = Matrix::embedded().unwrap();
    let cc = |n: &str| m.gpu(n).map(|r| r.cc.clone());
    assert_eq!(cc("Tesla K80").as_deref(), Some("3.7"));
    assert_eq!(cc("NVIDIA A100-SXM4-80GB").as_deref(), Some("8.0"));
    assert_eq!(cc("NVIDIA GeForce RTX 3070").as_deref(), Some("8.6"));
    assert_eq!(cc("RTX 5090 D").as_deref(), Some("12.0"));
    assert_eq!(cc("GeForce GT 710").as_deref(), Some("3.5"));
    assert_eq!(cc("NVIDIA L4").as_deref(), Some("8.9"));
    assert_eq!(cc("NVIDIA H100 80GB HBM3").as_deref(), Some("9.0"));
    assert_eq!(cc("NVIDIA RTX 6000 Ada Generation").as_deref(), Some("8.9"));
    assert_eq!(cc("Quadro RTX 6000").as_deref(), Some("7.5"));
    assert_eq!(cc("NVIDIA RTX A6000").as_deref(), Some("8.6"));
    assert_eq!(cc("Radeon RX 7900"), None);
    assert_eq!(m.arch_of_cc("9.0"), Some("Hopper"));
}

#[test]
fn a_bad_matrix_names_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.yaml");
    std::fs::write(&p, "schema: gpudoctor.matrix/1\ndata_version: \"x\"\ngpus:\n  - { cc: \"8.6\", arch: A, names: [a], sourc: s }\n").unwrap();
    let e = Matrix::from_path(&p).unwrap_err();
    assert!(e.path.ends_with("m.yaml"));
    assert!(e.message.contains("line 4"), "{}", e.message);
    std::fs::write(&p, "schema: other/9\ndata_version: \"x\"\n").unwrap();
    assert!(Matrix::from_path(&p)
        .unwrap_err()
        .message
        .contains("schema"));
}
