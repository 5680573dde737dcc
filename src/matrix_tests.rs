//! Unit tests of `matrix`.
use super::*;

#[test]
fn the_embedded_matrix_loads_and_is_valid() {
    let m = Matrix::embedded().unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.data_version, "2026-11-23");
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
    assert_eq!(m.driver_cuda(&d("384.111")).unwrap().to_string(), "9.0");
    assert_eq!(m.driver_cuda(&d("352.39")), None, "older than every branch");
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
    // 0.4.30's plugin was compiled against cuDNN 9.1.1 (jax-ml/jax#22416), whatever its
    // metadata's >=9.0 says; the CUDA 11 wheels have the same SM 5.2 floor as CUDA 12's.
    assert_eq!(m.jax("0.4.30", 12).unwrap().min_cudnn, "9.1");
    assert_eq!(m.jax("0.4.20", 11).unwrap().min_cc.as_deref(), Some("5.2"));
    assert_eq!(m.jax("0.4.25", 11).unwrap().min_cc.as_deref(), Some("5.2"));
    assert_eq!(m.jax("0.4.31", 12).unwrap().min_cudnn, "9.1");
    assert_eq!(m.jax("0.10.0", 13).unwrap().min_driver, "580");
    assert!(m.jax("0.4.30", 13).is_none());
    assert_eq!(m.cudnn("9.1.0.70").unwrap().from, "9.1.0");
    assert_eq!(m.cudnn("9.5.1.17").unwrap().from, "9.1.0");
    assert_eq!(m.cudnn("8.9.7.29").unwrap().max_cc.as_deref(), Some("9.0"));
    assert_eq!(m.cudnn("9.13.0.50").unwrap().from, "9.12.0");
    assert_eq!(m.cudnn("9.28.1.4").unwrap().from, "9.18.0");
    assert_eq!(m.cudnn("7.6.4").unwrap().cuda[0].to, "10.2");
    assert_eq!(m.cudnn("7.6.3").unwrap().cuda[0].to, "10.1");
    assert_eq!(m.cudnn("8.2.1").unwrap().cuda[1].to, "11.3");
    assert_eq!(m.cudnn("8.0.5").unwrap().min_cc, "3.0");
    assert_eq!(m.jax("0.12.0", 12).unwrap().min_cudnn, "9.10.2");
    assert_eq!(m.jax("0.11.1", 12).unwrap().min_cudnn, "9.8");
    assert_eq!(m.jax("0.9.0", 12).unwrap().built_with, "12.9");
    assert_eq!(m.jax("0.12.0.1", 13).unwrap().min_cudnn, "9.12");
    assert_eq!(
        m.tensorflow("2.4.1").unwrap().libs[1].lib,
        "libcusolver.so.10"
    );
    assert_eq!(
        m.tensorflow("1.14.0").unwrap().gpu_package.as_deref(),
        Some("tensorflow-gpu")
    );
    let tf012 = m.tensorflow("0.12.1").unwrap();
    assert_eq!((tf012.cuda.as_str(), tf012.cudnn.as_str()), ("8.0", "5.1"));
    assert_eq!(tf012.gpu_package.as_deref(), Some("tensorflow-gpu"));
    assert_eq!(tf012.libs[0].lib, "libcudart.so.8.0");
}

#[test]
fn pypi_and_index_wheels_differ_where_the_wheels_do() {
    let m = Matrix::embedded().unwrap();
    let t = m.torch("2.14.1").unwrap();
    assert_eq!(t.pypi_default, "cu130");
    let v = t.variant("cu130").unwrap();
    assert_eq!(v.wheel(false).1, vec!["12.0"]);
    assert!(v.wheel(true).1.is_empty(), "PyPI's cu130 wheel has no PTX");
    let v = m.torch("2.11.0").unwrap().variant("cu130").unwrap();
    assert_eq!(v.wheel(true).2.as_deref(), Some("9.19.0.56"));
    assert_eq!(v.wheel(false).2.as_deref(), Some("9.17.1.4"));
    let v = m.torch("1.10.2").unwrap().variant("cu102").unwrap();
    assert_eq!(v.wheel(true).0, vec!["3.7", "5.0", "6.0", "7.0"]);
    assert!(v.wheel(false).0.contains(&"7.5".to_string()));
    assert_eq!(m.torch("2.15.0").unwrap().pypi_default, "cu132");
    assert_eq!(m.torch("1.0.1").unwrap().pypi_default, "cu90");
}

#[test]
fn driver_branches_before_r410_and_after_r610() {
    let m = Matrix::embedded().unwrap();
    let cuda = |d: &str| {
        m.driver_cuda(&DriverVersion::parse(d).unwrap())
            .map(|c| c.to_string())
    };
    assert_eq!(cuda("390.157").as_deref(), Some("9.1"));
    assert_eq!(cuda("375.26").as_deref(), Some("8.0"));
    assert_eq!(cuda("620.70.06").as_deref(), Some("13.5"));
    assert_eq!(cuda("617.14").as_deref(), Some("13.4"));
}

#[test]
fn laptop_workstation_and_cloud_names_resolve() {
    let m = Matrix::embedded().unwrap();
    let cc = |n: &str| m.gpu(n).map(|r| r.cc.clone());
    assert_eq!(cc("NVIDIA GeForce GTX 960M").as_deref(), Some("5.0"));
    assert_eq!(cc("GeForce 940MX").as_deref(), Some("5.0"));
    assert_eq!(cc("NVIDIA GeForce GTX 960").as_deref(), Some("5.2"));
    assert_eq!(cc("NVIDIA GeForce GTX 980M").as_deref(), Some("5.2"));
    assert_eq!(cc("NVIDIA A10G").as_deref(), Some("8.6"));
    assert_eq!(cc("NVIDIA TITAN X (Pascal)").as_deref(), Some("6.1"));
    assert_eq!(cc("GeForce GTX TITAN X").as_deref(), Some("5.2"));
    assert_eq!(cc("NVIDIA GeForce RTX 2050").as_deref(), Some("8.6"));
    assert_eq!(cc("NVIDIA GeForce RTX 2080 Ti").as_deref(), Some("7.5"));
    assert_eq!(
        cc("NVIDIA RTX 4000 SFF Ada Generation").as_deref(),
        Some("8.9")
    );
    assert_eq!(cc("NVIDIA RTX 2000 Ada Generation").as_deref(), Some("8.9"));
    assert_eq!(cc("Quadro RTX 4000").as_deref(), Some("7.5"));
    assert_eq!(cc("Quadro P4000").as_deref(), Some("6.1"));
    assert_eq!(cc("Quadro K620").as_deref(), Some("5.0"));
    assert_eq!(cc("NVIDIA GeForce MX450").as_deref(), Some("7.5"));
    assert_eq!(cc("NVIDIA GeForce MX250").as_deref(), Some("6.1"));
    assert_eq!(cc("NVIDIA T1000 8GB").as_deref(), Some("7.5"));
    assert_eq!(
        cc("NVIDIA RTX A1000 6GB Laptop GPU").as_deref(),
        Some("8.6")
    );
    assert_eq!(
        cc("NVIDIA RTX PRO 6000 Blackwell Workstation Edition").as_deref(),
        Some("12.0")
    );
    assert_eq!(cc("Tesla V100S-PCIE-32GB").as_deref(), Some("7.0"));
}
