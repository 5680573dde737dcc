//! Unit tests of `cublas`.
use super::*;

#[test]
fn file_majors() {
    assert_eq!(file_major("libcublas.so.13"), Some(13));
    assert_eq!(file_major("libcublas.so.12.4.5.8"), Some(12));
    assert_eq!(file_major("libcublas.so"), None);
    assert_eq!(file_major("libcublasLt.so.12"), None);
    assert_eq!(file_major("cublas64_11.dll"), Some(11));
    assert_eq!(file_major("cublasLt64_12.dll"), None);
    assert_eq!(status_name(8), "CUBLAS_STATUS_ARCH_MISMATCH");
}

/// The layouts of the pip wheels: CUDA 13 puts every library in nvidia/cu13/lib, CUDA 12
/// in nvidia/<component>/lib; both are found from the runtime's directory, and a major
/// newer than the driver goes last.
// The Linux sonames; cuBLAS on Windows (cublas64_12.dll) is not probed yet.
#[cfg(unix)]
#[test]
fn candidates_from_the_runtime_directories() {
    let d = tempfile::tempdir().unwrap();
    let cu13 = d.path().join("nvidia/cu13/lib");
    let rt12 = d.path().join("nvidia/cuda_runtime/lib");
    let bl12 = d.path().join("nvidia/cublas/lib");
    for (dir, files) in [
        (
            &cu13,
            &["libcublas.so.13", "libcublasLt.so.13", "libcudart.so.13"][..],
        ),
        (&rt12, &["libcudart.so.12"][..]),
        (&bl12, &["libcublas.so.12", "libcublasLt.so.12"][..]),
    ] {
        std::fs::create_dir_all(dir).unwrap();
        for f in files {
            std::fs::write(dir.join(f), b"").unwrap();
        }
    }
    let c = candidates(&[cu13.clone(), rt12.clone()], Some(12));
    let paths: Vec<String> = c.iter().map(|(_, p)| p.display().to_string()).collect();
    assert_eq!(paths[0], bl12.join("libcublas.so.12").display().to_string());
    assert!(paths.contains(&cu13.join("libcublas.so.13").display().to_string()));
    // CUDA 13's cuBLAS after every 12 and 11 candidate on a 12.x driver.
    let first13 = c.iter().position(|(m, _)| *m == Some(13)).unwrap();
    assert!(c[..first13].iter().all(|(m, _)| m.is_some_and(|m| m <= 12)));
    assert!(!paths.iter().any(|p| p.contains("Lt")));
    // On a 13.x driver the order found stays.
    let c = candidates(std::slice::from_ref(&cu13), Some(13));
    assert_eq!(c[0].1, cu13.join("libcublas.so.13"));
}

#[test]
fn nothing_loadable_says_what_was_tried() {
    let e = match open(Path::new("/nonexistent/libcublas.so.12")) {
        Err(e) => e,
        Ok(_) => panic!("loaded a file that does not exist"),
    };
    assert!(!e.is_empty());
}
