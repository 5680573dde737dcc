//! Unit tests of `matrix`.
use super::*;

#[test]
fn the_embedded_matrix_loads_and_is_valid() {
    let m = Matrix::embedded().unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.data_version, "2026-11-21");
    for (table, n) in m.counts() {
        assert!(n > 0, "{table} is empty");
    }
}

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
fn a_bad_matrix_names_the_file_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.yaml");
    std::fs::write(&p, "schema: gpudoctor.matrix/1\ndata_version: \"2026-01-01\"\ngpus:\n  - { cc: \"8.6\", arch: A, names: [a], sourc: s }\n").unwrap();
    let e = Matrix::from_path(&p).unwrap_err();
    assert!(e[0].path.ends_with("m.yaml:4:39"), "{:?}", e);
    assert!(e[0].message.contains("unknown field"), "{}", e[0].message);
    std::fs::write(&p, "schema: other/9\ndata_version: \"2026-01-01\"\n").unwrap();
    assert!(Matrix::from_path(&p).unwrap_err()[0]
        .message
        .contains("schema"));
}

#[test]
fn meaning_errors_point_at_their_row() {
    let bad = r#"schema: gpudoctor.matrix/1
data_version: "2026-01-01"
cuda_toolkits:
  - { cuda: "12.4", release: "12.4 GA", linux: "550.54.14", ga: true, source: "https://x" }
  - { cuda: "12.2", release: "12.2 GA", linux: "535.54.03", ga: true, source: "https://x" }
driver_branches:
  - { branch: 550, cuda: "12.4", source: "http://insecure" }
"#;
    let e = Matrix::from_texts(
        std::iter::once(("t.yaml".to_string(), bad.to_string())),
        "t",
    )
    .unwrap_err();
    let text: Vec<String> = e.iter().map(|x| x.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.starts_with("t.yaml:5:5: CUDA 12.2 comes after 12.4")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.starts_with("t.yaml:5:5: Linux driver 535.54.03 is older")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.starts_with("t.yaml:7:5: source \"http://insecure\"")),
        "{text:#?}"
    );
}

#[test]
fn binary_compatibility_rules() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // An sm_86 cubin runs on sm_89 (same major, higher minor).
    assert_eq!(
        coverage(&s(&["8.0", "8.6"]), &[], "8.9"),
        Coverage::Sass("8.6".into())
    );
    // Not across majors: sm_90 SASS does not run on 10.0 or 12.0.
    assert_eq!(coverage(&s(&["9.0"]), &[], "12.0"), Coverage::None);
    // PTX JIT-compiles forward.
    assert_eq!(
        coverage(&s(&["9.0"]), &s(&["9.0"]), "12.0"),
        Coverage::Ptx("9.0".into())
    );
    // Not backward: sm_75 cubins do not run on 7.0.
    assert_eq!(
        coverage(&s(&["7.5", "8.0"]), &s(&["8.0"]), "7.0"),
        Coverage::None
    );
    assert_eq!(split_cc("sm_120"), Some((12, 0)));
    assert_eq!(split_cc("compute_90"), Some((9, 0)));
    assert_eq!(split_cc("sm_90a"), Some((9, 0)));
}

#[test]
fn driver_queries() {
    let m = Matrix::embedded().unwrap();
    let d = |s: &str| DriverVersion::parse(s).unwrap();
    assert_eq!(m.driver_cuda(&d("470.82.01")).unwrap().to_string(), "11.4");
    assert_eq!(m.driver_cuda(&d("551.61")).unwrap().to_string(), "12.4");
    assert_eq!(m.driver_cuda(&d("565.57.01")).unwrap().to_string(), "12.7");
    assert_eq!(m.driver_cuda(&d("580.159.04")).unwrap().to_string(), "13.0");
    assert_eq!(m.driver_cuda(&d("384.111")), None);
    assert_eq!(
        m.driver_cuda(&d("700.1")),
        None,
        "far past the newest branch: unknown"
    );
    let c = |s: &str| CudaVersion::parse(s).unwrap();
    let r = m.min_driver(c("12.6"), Os::Linux, false).unwrap();
    assert_eq!(r.driver.to_string(), "525.60.13");
    let r = m.min_driver(c("12.6"), Os::Linux, true).unwrap();
    assert_eq!(r.driver.to_string(), "560.28.03");
    let r = m.min_driver(c("10.2"), Os::Linux, false).unwrap();
    assert_eq!(r.driver.to_string(), "440.33");
    assert_eq!(
        m.min_driver(c("13.0"), Os::Linux, false)
            .unwrap()
            .driver
            .to_string(),
        "580"
    );
    assert!(
        m.min_driver(c("13.0"), Os::Windows, false).is_none(),
        "no Windows row for 13.x"
    );
}

#[test]
fn framework_rows() {
    let m = Matrix::embedded().unwrap();
    let t = m.torch("2.7.1+cu126").unwrap();
    assert_eq!(t.pypi_default, "cu126");
    assert_eq!(t.variant("cu128").unwrap().ptx, vec!["12.0"]);
    assert!(m.torch("9.9.0").is_none());
    assert_eq!(m.tensorflow("2.16.1").unwrap().cudnn, "8.9");
    assert_eq!(m.jax("0.4.29", 12).unwrap().min_cudnn, "8.9");
    assert!(
        m.jax("0.4.30", 12).is_none(),
        "0.4.30's cuDNN floor is not in the reference"
    );
    assert_eq!(m.jax("0.4.31", 12).unwrap().min_cudnn, "9.1");
    assert_eq!(m.jax("0.10.0", 13).unwrap().min_driver, "580");
    assert!(m.jax("0.4.30", 13).is_none());
    assert_eq!(m.cudnn("9.1.0.70").unwrap().from, "9.1.0");
    assert_eq!(m.cudnn("9.5.1.17").unwrap().from, "9.1.0");
    assert_eq!(m.cudnn("8.9.7.29").unwrap().max_cc.as_deref(), Some("9.0"));
    assert!(
        m.cudnn("9.13.0").is_none(),
        "9.11-9.16 are not in the reference"
    );
}
