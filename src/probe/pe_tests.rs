use super::*;
use std::path::PathBuf;

fn win_files() -> Option<PathBuf> {
    crate::probe::windows::tests::test_files()
}

#[test]
fn reads_the_version_resource_of_real_windows_cuda_dlls() {
    let Some(w) = win_files() else { return };
    let cudart = file_version(&w.join("nvidia/cuda_runtime/bin/cudart64_12.dll")).unwrap();
    // cudart64_12.dll of CUDA 12.9: FileVersion 6.14.11.12090 (the last part is CUDART_VERSION).
    assert_eq!(cudart.file, [6, 14, 11, 12090]);
    let cudnn = file_version(&w.join("nvidia/cudnn/bin/cudnn64_9.dll")).unwrap();
    assert_eq!(cudnn.file_string(), "9.1.0.70");
    // cudnn_graph64_9.dll's resource section holds only a manifest: no version resource.
    assert_eq!(
        file_version(&w.join("nvidia/cudnn/bin/cudnn_graph64_9.dll")),
        None
    );
}

#[test]
fn files_that_are_not_pe_have_no_version() {
    let Some(w) = win_files() else { return };
    assert_eq!(file_version(&w.join("torch/version.py")), None);
    assert_eq!(file_version(&w.join("no-such.dll")), None);
    let dir = tempfile::tempdir().unwrap();
    // An MZ header pointing past the end of the file.
    let p = dir.path().join("cut.dll");
    let mut bytes = b"MZ".to_vec();
    bytes.resize(0x3c, 0);
    bytes.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
    std::fs::write(&p, &bytes).unwrap();
    assert_eq!(file_version(&p), None);
}

#[test]
fn driver_versions_from_nvcuda_file_versions() {
    let v = |a, b, c, d| FileVersion {
        file: [a, b, c, d],
        product: [a, b, c, d],
    };
    // Recorded nvcuda.dll / nvml.dll file versions and the drivers they belong to.
    assert_eq!(
        driver_version_of(&v(32, 0, 15, 6094)).as_deref(),
        Some("560.94")
    );
    assert_eq!(
        driver_version_of(&v(31, 0, 15, 3623)).as_deref(),
        Some("536.23")
    );
    assert_eq!(
        driver_version_of(&v(27, 21, 14, 6079)).as_deref(),
        Some("460.79")
    );
    assert_eq!(
        driver_version_of(&v(32, 0, 15, 8129)).as_deref(),
        Some("581.29")
    );
    // cudart64_12.dll's last part (12090) is CUDART_VERSION, no driver build.
    assert_eq!(driver_version_of(&v(6, 14, 11, 12090)), None);
}
