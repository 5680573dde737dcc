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
    let limit = Deadline::after(Duration::from_secs(5));
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

/// Windows DLL names: up to CUDA 10.2 they carried major and minor, 11.x kept `_110`, 12 and
/// later the major only (cudart64_90.dll, cudart64_101.dll, cudart64_110.dll, cudart64_12.dll).
#[test]
fn windows_library_names() {
    assert_eq!(soname_major("cudart64_12.dll"), Some(12));
    assert_eq!(soname_major("cudart64_13.dll"), Some(13));
    assert_eq!(soname_major("cudart64_110.dll"), Some(11));
    assert_eq!(soname_major("cudart64_101.dll"), Some(10));
    assert_eq!(soname_major("cudart64_100.dll"), Some(10));
    assert_eq!(soname_major("cudart64_90.dll"), Some(9));
    assert_eq!(soname_major("cudart64_80.dll"), Some(8));
    assert_eq!(soname_major("cudnn64_8.dll"), Some(8));
    assert_eq!(soname_major("cudnn64_9.dll"), Some(9));
    assert_eq!(soname_major("cudart64.dll"), None);
    assert!(classify("cudart64_12.dll").is_some());
    assert!(classify("cudnn64_9.dll").is_some());
    assert!(classify("cudnn_graph64_9.dll").is_none());
}

/// The real Windows DLLs from PyPI, where Windows installs put them: a pip environment's
/// `nvidia\*\bin`, a toolkit under Program Files and cuDNN's installer folder. Versions come from
/// the pip packages, then cudnn_version.h, then the DLLs' version resources.
#[test]
fn windows_dlls_where_windows_installs_put_them() {
    let Some(win) = crate::probe::windows::tests::test_files() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("Python311");
    crate::probe::windows::tests::make_test_install(&prefix, &win);
    let pf = d.path().join("Program Files");
    let toolkit = pf
        .join("NVIDIA GPU Computing Toolkit")
        .join("CUDA")
        .join("v12.9")
        .join("bin");
    std::fs::create_dir_all(&toolkit).unwrap();
    std::fs::copy(
        win.join("nvidia")
            .join("cuda_runtime")
            .join("bin")
            .join("cudart64_12.dll"),
        toolkit.join("cudart64_12.dll"),
    )
    .unwrap();
    let cudnn = pf
        .join("NVIDIA")
        .join("CUDNN")
        .join("v9.1")
        .join("bin")
        .join("12.9");
    std::fs::create_dir_all(&cudnn).unwrap();
    std::fs::copy(
        win.join("nvidia")
            .join("cudnn")
            .join("bin")
            .join("cudnn64_9.dll"),
        cudnn.join("cudnn64_9.dll"),
    )
    .unwrap();

    let mut env = crate::probe::python::from_prefix(&prefix, "system", "test", None).unwrap();
    crate::probe::python::scan(&mut env);
    let src = Sources {
        windows: true,
        program_files: Some(pf.clone()),
        // The toolkit's bin is on PATH, as the CUDA installer leaves it.
        path_var: Some(toolkit.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let found = probe(&src, &[env], Deadline::after(Duration::from_secs(10)));

    let pip = found
        .runtimes
        .iter()
        .find(|r| r.path.contains("cuda_runtime"))
        .unwrap();
    assert_eq!(pip.soname_major, Some(12));
    assert_eq!(pip.full_version.as_deref(), Some("12.9.79"));
    assert!(!pip.on_search_path);
    let tk = found
        .runtimes
        .iter()
        .find(|r| r.path.contains("v12.9"))
        .unwrap();
    // No version.json in this toolkit: the DLL's version resource (…12090) says 12.9.
    assert_eq!(tk.full_version.as_deref(), Some("12.9"));
    assert!(tk.on_search_path);
    assert!(tk.origins.iter().any(|o| o == "PATH"), "{:?}", tk.origins);
    assert_eq!(found.toolkits.len(), 1, "{:?}", found.toolkits);

    let pip_dnn = found
        .cudnn
        .iter()
        .find(|c| c.path.contains("Python311"))
        .unwrap();
    assert_eq!(pip_dnn.soname_major, Some(9));
    // cudnn_version.h beside the wheel's bin\ says 9.1.0.
    assert_eq!(pip_dnn.full_version.as_deref(), Some("9.1.0"));
    let installer = found
        .cudnn
        .iter()
        .find(|c| c.path.contains("CUDNN"))
        .unwrap();
    // No header beside the installer's DLL: its version resource (9.1.0.70).
    assert_eq!(installer.full_version.as_deref(), Some("9.1.0"));
    assert_eq!(found.cudnn.len(), 2);

    // The same folders mean nothing to the Linux search.
    let linux = Sources {
        windows: false,
        ..src
    };
    let env = crate::probe::python::from_prefix(&prefix, "system", "test", None).unwrap();
    let found = probe(&linux, &[env], Deadline::after(Duration::from_secs(10)));
    assert!(found.runtimes.iter().all(|r| r.path.contains("Python311")));
    assert!(found.toolkits.is_empty());
}
