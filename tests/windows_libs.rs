//! Under Wine (scripts/test-windows.sh): `check` finds a Python environment laid out as a real
//! Windows install (python.org's per-user folder) holding the real Windows CUDA DLLs of PyPI's
//! win_amd64 wheels, loads each DLL in its helper process to ask its version, and reports torch,
//! the CUDA runtime and cuDNN with no Linux-only finding.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{test_venv, Run};
use std::path::Path;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn check_reports_torch_cudart_and_cudnn_of_a_windows_install() {
    let Some(venv) = test_venv() else { return };
    let d = tempfile::tempdir().unwrap();
    let local = d.path().join("AppData").join("Local");
    let prefix = local.join(r"Programs\Python\Python311");
    std::fs::create_dir_all(&prefix).unwrap();
    // Nothing runs python.exe without --deep: an empty stand-in is enough to be found.
    std::fs::write(prefix.join("python.exe"), b"").unwrap();
    std::fs::write(prefix.join("python311.dll"), b"").unwrap();
    copy_tree(&venv.join("win"), &prefix.join(r"Lib\site-packages"));

    let ran = Run::new()
        .env("LOCALAPPDATA", &local)
        .args(["check", "--format", "json"])
        .run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    let j = ran.json();
    let snap = &j["snapshot"];

    let envs = snap["python"]["value"].as_array().unwrap();
    let env = envs
        .iter()
        .find(|e| e["prefix"].as_str().unwrap().ends_with("Python311"))
        .unwrap_or_else(|| panic!("{envs:#?}"));
    assert_eq!(env["python_version"], "3.11");
    assert_eq!(env["torch"]["version"], "2.11.0+cpu", "{env:#}");

    // The helper loaded the real cudart64_12.dll and asked it: CUDA 12.9.
    let runtimes = snap["cuda"]["runtimes"]["value"].as_array().unwrap();
    let rt = runtimes
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with("cudart64_12.dll"))
        .unwrap_or_else(|| panic!("{runtimes:#?}"));
    assert_eq!(rt["api_version"]["value"], 12090, "{rt:#}");
    assert_eq!(rt["full_version"], "12.9.79");
    assert!(!rt["path"].as_str().unwrap().starts_with(r"\\?\"), "{rt:#}");

    let cudnn = snap["cudnn"]["value"].as_array().unwrap();
    let dnn = cudnn
        .iter()
        .find(|c| c["path"].as_str().unwrap().ends_with("cudnn64_9.dll"))
        .unwrap_or_else(|| panic!("{cudnn:#?}"));
    assert_eq!(dnn["version"]["value"], "9.1.0", "{dnn:#}");

    let rules: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for linux in [
        "container.no-gpu",
        "libs.path-conflict",
        "libs.stub-libcuda",
        "driver.device-permissions",
        "faults.kernel-log-unreadable",
    ] {
        assert!(!rules.contains(&linux), "{rules:?}");
    }
    assert!(rules.contains(&"driver.missing"), "{rules:?}");
}
