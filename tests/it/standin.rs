//! `check` through a stand-in `libcuda.so.1` (tests/standin/libcuda.c, built here with `cc`):
//! a driver whose cuInit hangs, crashes or answers nonsense never takes gpudoctor down or past
//! its deadline.
// Linux only: the stand-ins are ELF shared objects built with cc.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Builds the stand-in into `dir` as libcuda.so.1 and libcuda.so (cudarc tries the latter).
fn build(dir: &Path) {
    common::build_standin("libcuda.c", dir, "libcuda.so.1", &[]);
    std::os::unix::fs::symlink("libcuda.so.1", dir.join("libcuda.so")).unwrap();
}

fn check(dir: &Path, env: &[(&str, &str)], timeout: &str) -> (i32, serde_json::Value, Duration) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.args(["check", "--format", "json", "--timeout", timeout])
        .env("LD_LIBRARY_PATH", dir)
        .env_remove("GPUDOCTOR_POLICY");
    for (k, v) in env {
        c.env(k, v);
    }
    common::json_output(c)
}

/// A cuInit that never returns: the report still comes within --timeout + 1 s (the smoke tests
/// get what the probes left, not a second --timeout), naming cuInit.
#[test]
fn a_hanging_cuinit_keeps_the_deadline() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, took) = check(d.path(), &[("STANDIN_CUINIT", "hang")], "2");
    assert!(took < Duration::from_millis(3000), "took {took:?}");
    assert_eq!(code, 1);
    let smoke = &v["snapshot"]["smoke"];
    let text = smoke.to_string();
    assert!(text.contains("cuInit"), "{smoke:#}");
    let f = common::finding(&v, "smoke.failed");
    assert_eq!(f["severity"], "error");
}

/// `check --timeout TIMEOUT` with NVML's init and cuInit both hanging: the report comes within
/// 3 s, exit 1, and the smoke tests were left no time. Returns the JSON report.
fn wedged_driver(timeout: &str) -> serde_json::Value {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, took) = check(
        d.path(),
        &[
            ("STANDIN_CUINIT", "hang"),
            ("GPUDOCTOR_TEST_HANG_NVML", "1"),
        ],
        timeout,
    );
    assert!(took < Duration::from_millis(3000), "took {took:?}");
    assert_eq!(code, 1);
    let smoke = &v["snapshot"]["smoke"];
    assert_eq!(smoke["code"], "no_time", "{smoke:#}");
    v
}

/// A wedged driver: NVML's init and cuInit both hang. The probes use the whole --timeout, so
/// the smoke tests are not started (they used to get a second --timeout: 4 s at --timeout 2).
#[test]
fn a_wedged_driver_gets_one_deadline_not_two() {
    let v = wedged_driver("2");
    assert!(common::finding(&v, "probe.timeout")["title"]
        .as_str()
        .unwrap()
        .contains("'nvml' timed out"));
}

/// Issue 33 (resolve once): at `--timeout 0.5` a wedged driver still gets one deadline, made
/// when the command line is resolved: the probes end by it and leave the smoke tests no time,
/// and the report comes (bound generous for a loaded machine: six times the deadline).
#[test]
fn a_wedged_driver_at_half_a_second_ends_by_the_one_deadline() {
    let v = wedged_driver("0.5");
    let smoke = &v["snapshot"]["smoke"];
    assert!(
        smoke.to_string().contains("the whole --timeout of 0.5 s"),
        "{smoke:#}"
    );
    let nvml = v["snapshot"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "nvml")
        .unwrap();
    assert_eq!(nvml["outcome"], "timeout", "{nvml:#}");
    // The probe was waited for until the deadline, not a budget of its own after it.
    assert!(nvml["millis"].as_u64().unwrap() < 1500, "{nvml:#}");
}

/// A cuInit that crashes takes only the smoke tests' own process down: a driver_fault finding
/// naming cuInit and the signal, and the rest of the report. It used to end gpudoctor (139).
#[test]
fn a_crashing_cuinit_is_a_finding() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, _) = check(d.path(), &[("STANDIN_CUINIT", "segv")], "5");
    assert_eq!(code, 1);
    let f = common::finding(&v, "smoke.failed");
    assert_eq!(f["category"], "driver_fault", "{f:#}");
    let detail = f["detail"].as_str().unwrap();
    assert!(
        detail.contains("cuInit") && detail.contains("SIGSEGV"),
        "{f:#}"
    );
    assert!(v["snapshot"]["host"]["status"] == "found");
}

/// A cuInit that returns an error is a finding naming cuInit, never gpudoctor's end.
#[test]
fn a_cuinit_error_is_a_finding_not_a_crash() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, _) = check(d.path(), &[("STANDIN_CUINIT", "999")], "5");
    assert_eq!(code, 1);
    let f = common::finding(&v, "smoke.failed");
    assert!(f["detail"].as_str().unwrap().contains("cuInit"), "{f:#}");
}

/// A device count no node has is refused at once instead of testing 200,000 GPUs.
#[test]
fn a_nonsense_device_count_is_refused() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, took) = check(d.path(), &[("STANDIN_DEVICE_COUNT", "200000")], "5");
    assert_eq!(code, 1);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let smoke = &v["snapshot"]["smoke"]["value"];
    assert_eq!(smoke["error"]["name"], "NONSENSE_COUNT", "{smoke:#}");
    assert!(smoke["gpus"].as_array().is_none_or(|g| g.is_empty()));
}

/// Helper processes (here `gpudoctor __probe-lib` stuck in a hung cuDriverGetVersion) die with
/// gpudoctor: none is left running after `check` exits. They used to run on, orphaned.
#[test]
fn no_helper_outlives_gpudoctor() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let marker = d.path().to_string_lossy().into_owned();
    let (_, _, took) = check(d.path(), &[("STANDIN_CUDA_VERSION", "hang")], "1");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    std::thread::sleep(Duration::from_millis(300));
    // Every process whose environment names this test's library directory.
    let mut left = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if String::from_utf8_lossy(&env).contains(&marker) {
            left.push(pid);
        }
    }
    for pid in &left {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "helpers left running: {left:?}");
}

/// A CUDA toolkit's `stubs/` directory ahead of the driver on LD_LIBRARY_PATH holds a stub
/// `libcuda.so` (CUDA_ERROR_STUB_LIBRARY from every call). The smoke tests load the
/// `libcuda.so.1` the probe resolved, not the stub: cuInit succeeds and the driver's version is
/// read, while the stub is still reported. cudarc's loader, which tries `libcuda.so` first,
/// used to load the stub, and the smoke tests said cuInit failed with 34 on a healthy driver.
#[test]
fn a_toolkit_stub_ahead_of_the_driver_is_not_what_the_smoke_tests_load() {
    let d = tempfile::tempdir().unwrap();
    let stubs = d.path().join("cuda/lib64/stubs");
    let drv = d.path().join("driver");
    std::fs::create_dir_all(&stubs).unwrap();
    std::fs::create_dir_all(&drv).unwrap();
    common::build_standin("libcuda.c", &stubs, "libcuda.so", &["-DSTANDIN_STUB"]);
    common::build_standin("libcuda.c", &drv, "libcuda.so.1", &[]);
    let path = format!("{}:{}", stubs.display(), drv.display());
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.args(["check", "--format", "json", "--timeout", "5"])
        .env("LD_LIBRARY_PATH", &path)
        .env("STANDIN_DEVICE_COUNT", "0")
        .env_remove("GPUDOCTOR_POLICY");
    let out = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let smoke = &v["snapshot"]["smoke"];
    assert_eq!(smoke["status"], "found", "{smoke:#}");
    assert!(smoke["value"]["error"].is_null(), "{smoke:#}");
    assert_eq!(smoke["value"]["driver_cuda_version"], 12080, "{smoke:#}");
    let f = common::finding(&v, "libs.stub-libcuda");
    assert!(f["detail"].as_str().unwrap().contains("stubs"), "{f:#}");
}

/// A resolved libcuda.so.1 that is itself a stub (cuInit answers 34, though this one answers
/// cuDriverGetVersion) gives the stub finding and a library_path_conflict smoke failure (the
/// category of CUDA_ERROR_STUB_LIBRARY, docs/decisions.md "One category per code") whose fix is
/// to take the stubs directory off LD_LIBRARY_PATH.
#[test]
fn a_stub_answer_from_cuinit_gives_the_stub_finding() {
    let d = tempfile::tempdir().unwrap();
    build(d.path());
    let (code, v, _) = check(d.path(), &[("STANDIN_CUINIT", "34")], "5");
    assert_eq!(code, 1);
    let f = common::finding(&v, "smoke.failed");
    assert_eq!(f["category"], "library_path_conflict", "{f:#}");
    let fix = f["fix"]["text"].as_str().unwrap();
    assert!(
        fix.contains("stubs directory from LD_LIBRARY_PATH"),
        "{f:#}"
    );
    let s = common::finding(&v, "libs.stub-libcuda");
    assert_eq!(s["severity"], "error", "{s:#}");
}

/// The UUID the smoke tests record (and give the cuDNN step as CUDA_VISIBLE_DEVICES) for a
/// stand-in built with `defines`.
fn smoke_uuid(defines: &[&str]) -> serde_json::Value {
    let d = tempfile::tempdir().unwrap();
    common::build_standin("libcuda.c", d.path(), "libcuda.so.1", defines);
    let (_, v, _) = check(d.path(), &[], "5");
    let gpu = &v["snapshot"]["smoke"]["value"]["gpus"][0];
    assert_eq!(gpu["steps"][0]["status"], "passed", "{gpu:#}");
    gpu["uuid"].clone()
}

/// A MIG instance: cuDeviceGetUuid (v1) names the parent GPU, which in CUDA_VISIBLE_DEVICES
/// selects nothing inside a MIG-partitioned GPU; the instance's own UUID comes from
/// cuDeviceGetUuid_v2. Without v2 (drivers before R470) v1's answer is all there is.
#[test]
fn a_mig_instance_is_named_by_its_own_uuid() {
    assert_eq!(
        smoke_uuid(&["-DSTANDIN_MIG"]),
        "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    );
    assert_eq!(smoke_uuid(&[]), "GPU-11111111-2222-3333-4444-555555555555");
    assert_eq!(
        smoke_uuid(&["-DSTANDIN_MIG", "-DSTANDIN_NO_UUID_V2"]),
        "GPU-11111111-2222-3333-4444-555555555555"
    );
}
