//! Unit tests of `cudalibs`.
use super::*;

#[test]
fn library_names() {
    assert_eq!(soname_major("libcudart.so.12"), Some(12));
    assert_eq!(soname_major("libcudart.so.11.0"), Some(11));
    assert_eq!(soname_major("libcudart-d0da41ae.so.11.0"), Some(11));
    assert_eq!(soname_major("libcudart.so"), None);
    assert_eq!(
        file_full_version("libcudart.so.12.4.127").as_deref(),
        Some("12.4.127")
    );
    assert_eq!(file_full_version("libcudart.so.11.0"), None);
    assert!(classify("libcudnn_ops.so.9").is_none());
    assert!(classify("libcudart_static.a").is_none());
    assert!(classify("libcudnn.so.9").is_some());
}

#[test]
fn nvcc_and_version_json() {
    // `nvcc --version` as CUDA 12.1 prints it (reference/compat-facts.md §8).
    let t = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2023 NVIDIA Corporation\nBuilt on Mon_Apr__3_17:16:06_PDT_2023\nCuda compilation tools, release 12.1, V12.1.105\nBuild cuda_12.1.r12.1/compiler.32688072_0\n";
    assert_eq!(parse_nvcc_version(t).as_deref(), Some("12.1.105"));
    let j = r#"{"cuda": {"name": "CUDA SDK", "version": "13.3.0"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "13.3.29"}}"#;
    assert_eq!(parse_version_json(j, "cuda").as_deref(), Some("13.3.0"));
    assert_eq!(
        parse_version_json(j, "cuda_cudart").as_deref(),
        Some("13.3.29")
    );
    assert_eq!(parse_version_json("{", "cuda"), None);
}

/// A toolkit assembled from component packages has a version.json without a "cuda" entry (as
/// /usr/local/cuda-13.0 on the H100 image, docs/validation/h100-2026-11-23-run1, where check
/// printed "toolkit ?"): its compiler's version stands for it.
#[test]
fn a_toolkit_without_a_cuda_entry_takes_its_components_version() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("cuda-13.0");
    std::fs::create_dir_all(root.join("lib64")).unwrap();
    std::fs::write(
        root.join("version.json"),
        r#"{"cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "13.0.96"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}"#,
    )
    .unwrap();
    let src = Sources {
        toolkit_roots: vec![root.clone()],
        ..Default::default()
    };
    let limit = Instant::now() + Duration::from_secs(5);
    let t = toolkits(&src, limit);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].version.as_deref(), Some("13.0.88"));
    // Only the runtime named: its version.
    std::fs::write(
        root.join("version.json"),
        r#"{"cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "13.0.96"}}"#,
    )
    .unwrap();
    assert_eq!(toolkits(&src, limit)[0].version.as_deref(), Some("13.0.96"));
}
