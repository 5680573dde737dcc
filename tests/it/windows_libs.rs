//! Under Wine (scripts/test-windows.sh): `check` finds a Python environment laid out as a real
//! Windows install (python.org's per-user folder) holding the real Windows CUDA DLLs of PyPI's
//! win_amd64 wheels, loads each DLL in its helper process to ask its version, and reports torch,
//! the CUDA runtime and cuDNN with no Linux-only finding.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{copy_tree, test_venv, Run};
use std::path::Path;

/// A profile folder with python.org's per-user Python 3.11 in `AppData\Local\Programs\Python`,
/// its site-packages holding the real Windows wheels' files.
fn profile_with_python() -> Option<tempfile::TempDir> {
    let venv = test_venv()?;
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join(r"AppData\Local\Programs\Python\Python311");
    std::fs::create_dir_all(&prefix).unwrap();
    // Nothing runs python.exe without --deep: an empty stand-in is enough to be found.
    std::fs::write(prefix.join("python.exe"), b"").unwrap();
    std::fs::write(prefix.join("python311.dll"), b"").unwrap();
    copy_tree(&venv.join("win"), &prefix.join(r"Lib\site-packages"));
    Some(d)
}

fn in_profile(profile: &Path) -> Run {
    Run::new()
        .env("USERPROFILE", profile)
        .env("LOCALAPPDATA", profile.join(r"AppData\Local"))
}

#[test]
fn check_reports_torch_cudart_and_cudnn_of_a_windows_install() {
    let Some(d) = profile_with_python() else {
        return;
    };
    let ran = in_profile(d.path())
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

/// `snapshot --redact` writes the profile folder as %USERPROFILE%.
#[test]
fn redaction_hides_the_profile_folder() {
    let Some(d) = profile_with_python() else {
        return;
    };
    let ran = in_profile(d.path()).args(["snapshot", "--redact"]).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let profile = d.path().to_string_lossy().to_string();
    assert!(!ran.stdout.contains(&profile), "{}", ran.stdout);
    let j = ran.json();
    let prefixes: Vec<&str> = j["python"]["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["prefix"].as_str().unwrap())
        .collect();
    assert!(
        prefixes.contains(&r"%USERPROFILE%\AppData\Local\Programs\Python\Python311"),
        "{prefixes:?}"
    );
}

/// A Python registered only in the registry (PEP 514, as python.org's installer does when
/// installing somewhere else): found through `HKCU\Software\Python\<Company>\<Tag>\InstallPath`.
#[test]
fn an_interpreter_registered_by_pep_514_is_found() {
    let Some(d) = profile_with_python() else {
        return;
    };
    // Somewhere no other search looks.
    let elsewhere = d.path().join(r"Tools\Py311");
    std::fs::create_dir_all(d.path().join("Tools")).unwrap();
    std::fs::rename(
        d.path().join(r"AppData\Local\Programs\Python\Python311"),
        &elsewhere,
    )
    .unwrap();
    let key = r"HKCU\Software\Python\GpudoctorTest\3.11-test";
    let reg = |args: &[&str]| {
        std::process::Command::new("reg")
            .args(args)
            .output()
            .unwrap()
    };
    let _ = reg(&["delete", key, "/f"]);
    let added = reg(&[
        "add",
        &format!(r"{key}\InstallPath"),
        "/ve",
        "/d",
        &elsewhere.to_string_lossy(),
        "/f",
    ]);
    assert!(added.status.success(), "{added:?}");
    let ran = in_profile(d.path()).args(["snapshot"]).run();
    let _ = reg(&["delete", key, "/f"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let j = ran.json();
    let envs = j["python"]["value"].as_array().unwrap();
    let env = envs
        .iter()
        .find(|e| e["prefix"].as_str().unwrap().ends_with("Py311"))
        .unwrap_or_else(|| panic!("{envs:#?}"));
    assert_eq!(
        env["origin"],
        r"registry HKCU\Software\Python\GpudoctorTest\3.11-test"
    );
    assert_eq!(env["torch"]["version"], "2.11.0+cpu");
}
