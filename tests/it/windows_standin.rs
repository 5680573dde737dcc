//! Under Wine (scripts/test-windows.sh): the stand-in driver libraries of tests/standin built as
//! Windows DLLs, where a Windows driver install puts them. Wine has no NVIDIA driver; these show
//! the driver paths of the Windows build: NVML found in NVSMI when System32 has none, the GPU
//! read through it, and a driver library that hangs or crashes ending as a finding.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{rule_ids, Ran, Run};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The DLLs scripts/test-windows.sh built.
fn standins() -> PathBuf {
    let d = std::env::var("GPUDOCTOR_WIN_STANDINS")
        .map(PathBuf::from)
        .expect("GPUDOCTOR_WIN_STANDINS: run these tests with scripts/test-windows.sh");
    assert!(d.join("nvml.dll").is_file(), "{}", d.display());
    d
}

/// A pre-DCH driver install: nvml.dll only in `%ProgramW6432%\NVIDIA Corporation\NVSMI`.
fn program_files_with_nvsmi(root: &Path) -> PathBuf {
    let pf = root.join("Program Files");
    let nvsmi = pf.join(r"NVIDIA Corporation\NVSMI");
    std::fs::create_dir_all(&nvsmi).unwrap();
    std::fs::copy(standins().join("nvml.dll"), nvsmi.join("nvml.dll")).unwrap();
    pf
}

fn check(pf: &Path, env: &[(&str, &str)], timeout: &str) -> (Ran, Duration) {
    let mut r = Run::new()
        .env("ProgramW6432", pf)
        .env("ProgramFiles", pf)
        .args([
            "check",
            "--no-smoke",
            "--format",
            "json",
            "--timeout",
            timeout,
        ]);
    for (k, v) in env {
        r = r.env(k, v);
    }
    let t = Instant::now();
    let ran = r.run();
    (ran, t.elapsed())
}

/// The GeForce profile (an RTX 4090 on 535.154.05 with a python process holding 20322 MiB,
/// recorded in tests/standin/profiles/rtx.nvidia-smi-q.txt) read through NVSMI\nvml.dll.
#[test]
fn nvml_in_nvsmi_is_found_and_reads_the_gpu() {
    let d = tempfile::tempdir().unwrap();
    let pf = program_files_with_nvsmi(d.path());
    let (ran, _) = check(&pf, &[("STANDIN_NVML_PROFILE", "rtx")], "20");
    assert_ne!(ran.code, 2, "{}", ran.stderr);
    let j = ran.json();
    let nvml = &j["snapshot"]["driver"]["nvml"];
    assert_eq!(nvml["value"]["driver_version"], "535.154.05", "{nvml:#}");
    let gpus = j["snapshot"]["gpus"]["value"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0]["name"]["value"], "NVIDIA GeForce RTX 4090");
    let ids = rule_ids(&j);
    assert!(!ids.contains(&"driver.missing".to_string()), "{ids:?}");
    // Persistence mode is not asked for on Windows, and no Linux-only rule runs.
    assert_eq!(
        gpus[0]["persistence_mode"]["code"], "not_applicable",
        "{:#}",
        gpus[0]
    );
    for f in j["findings"].as_array().unwrap() {
        let cmds = f["fix"]["commands"].to_string();
        assert!(!cmds.contains("sudo"), "{f:#}");
    }
    // The driver model (nvmlDeviceGetDriverModel): a GeForce card driving a display is WDDM.
    assert_eq!(gpus[0]["driver_model"], "WDDM", "{:#}", gpus[0]);
    for (model, name) in [("1", "TCC"), ("2", "MCDM")] {
        let (ran, _) = check(
            &pf,
            &[
                ("STANDIN_NVML_PROFILE", "rtx"),
                ("STANDIN_NVML_DRIVER_MODEL", model),
            ],
            "20",
        );
        let j = ran.json();
        assert_eq!(j["snapshot"]["gpus"]["value"][0]["driver_model"], name);
    }
}

/// nvmlInit hangs: the helper is killed at the deadline (TerminateProcess), check ends in time
/// and the finding's fix is in Windows terms. Where it hung comes from the helper's last
/// breadcrumb, read in the 400 ms before the deadline; on a loaded machine (two builds on two
/// CPUs under Wine) that read once came too late, so the place is checked when it is known.
#[test]
fn a_hanging_nvml_dll_is_a_finding_at_the_deadline() {
    let d = tempfile::tempdir().unwrap();
    let pf = program_files_with_nvsmi(d.path());
    let (ran, took) = check(&pf, &[("STANDIN_NVML_FAIL", "nvmlInit_v2=hang")], "4");
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let j = ran.json();
    let t = common::finding(&j, "probe.timeout");
    assert!(t.to_string().contains("Get-WinEvent"), "{t:#}");
    let probe = j["snapshot"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "nvml")
        .unwrap();
    assert_eq!(probe["outcome"], "timeout", "{probe:#}");
    if let Some(at) = probe["stuck_in"].as_str() {
        assert_eq!(at, "nvmlInit_v2", "{probe:#}");
    }
}

/// nvmlInit faults: the helper ends with the access violation's NTSTATUS at once (no error
/// dialog waits), and the finding names it.
#[test]
fn a_crashing_nvml_dll_is_named_by_its_ntstatus() {
    let d = tempfile::tempdir().unwrap();
    let pf = program_files_with_nvsmi(d.path());
    let (ran, took) = check(&pf, &[("STANDIN_NVML_FAIL", "nvmlInit_v2=segv")], "20");
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let j = ran.json();
    let c = common::finding(&j, "probe.crashed");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.contains("0xC0000005 (STATUS_ACCESS_VIOLATION)"),
        "{detail}"
    );
}

/// nvcuda.dll on PATH and no NVML: the driver is known from nvcuda.dll's version resource
/// (32.0.15.6094 is driver 560.94) and its cuDriverGetVersion, so it is not "missing".
#[test]
fn the_driver_version_is_read_from_nvcuda_dll() {
    let d = tempfile::tempdir().unwrap();
    let drv = d.path().join("driver");
    std::fs::create_dir_all(&drv).unwrap();
    std::fs::copy(standins().join("nvcuda.dll"), drv.join("nvcuda.dll")).unwrap();
    let sysroot = std::env::var("SystemRoot").unwrap_or_else(|_| r"C:\windows".to_string());
    let (ran, _) = check(
        &d.path().join("no-program-files"),
        &[
            (
                "PATH",
                &format!(r"{sysroot}\system32;{sysroot};{}", drv.display()),
            ),
            ("STANDIN_CUDA_VERSION", "12060"),
        ],
        "20",
    );
    assert_ne!(ran.code, 2, "{}", ran.stderr);
    let j = ran.json();
    let lib = &j["snapshot"]["driver"]["libcuda"]["value"];
    assert!(
        lib["path"].as_str().unwrap().ends_with("nvcuda.dll"),
        "{lib:#}"
    );
    assert_eq!(lib["file_version"], "560.94", "{lib:#}");
    assert_eq!(lib["cuda_driver_version"], 12060, "{lib:#}");
    let ids = rule_ids(&j);
    assert!(!ids.contains(&"driver.missing".to_string()), "{ids:?}");
}

/// NVML from one driver (the RTX profile: 535.154.05) and nvcuda.dll from another (its version
/// resource: 560.94): the mismatch Windows users meet after an update that did not finish.
#[test]
fn nvml_and_nvcuda_from_different_drivers_are_a_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let pf = program_files_with_nvsmi(d.path());
    let drv = d.path().join("driver");
    std::fs::create_dir_all(&drv).unwrap();
    std::fs::copy(standins().join("nvcuda.dll"), drv.join("nvcuda.dll")).unwrap();
    let sysroot = std::env::var("SystemRoot").unwrap_or_else(|_| r"C:\windows".to_string());
    let (ran, _) = check(
        &pf,
        &[
            ("STANDIN_NVML_PROFILE", "rtx"),
            (
                "PATH",
                &format!(r"{sysroot}\system32;{sysroot};{}", drv.display()),
            ),
        ],
        "20",
    );
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    let j = ran.json();
    let f = common::finding(&j, "driver.library-mismatch");
    assert_eq!(
        f["title"],
        "nvml.dll and nvcuda.dll are from different drivers (535.154.05 and 560.94)"
    );
}
