//! `check` through a stand-in `libnvidia-ml.so.1` (tests/standin/libnvidia-ml.c, built here with
//! `cc`) that answers with values recorded on real GPUs (H100, A100, RTX 4090, V100, and an R470
//! driver without the newer entry points), and fails on request: every NVML return code,
//! NOT_SUPPORTED per call, hangs, crashes, exits, nonsense counts, unterminated and escaped
//! strings, and text printed on standard output. Whatever NVML does, `check` prints a valid
//! report with a finding that names what went wrong, within --timeout + 1 s; never exit 0 on a
//! broken driver, never exit 2, never a panic.
// Linux only: the stand-ins are ELF shared objects built with cc.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{build_standin, finding, rule_ids, Ran, Run};

struct Lib {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn nvml(defines: &[&str]) -> Lib {
    let d = tempfile::tempdir().unwrap();
    build_standin("libnvidia-ml.c", d.path(), "libnvidia-ml.so.1", defines);
    let path = d.path().to_path_buf();
    Lib { _dir: d, path }
}

/// `check --no-smoke --format json` with NVML from `lib` and the stand-in's variables.
fn check(lib: &Lib, env: &[(&str, &str)], timeout: &str) -> (Ran, Duration) {
    let mut r = Run::new()
        .args([
            "check",
            "--no-smoke",
            "--format",
            "json",
            "--timeout",
            timeout,
        ])
        .env("LD_LIBRARY_PATH", &lib.path);
    for (k, v) in env {
        r = r.env(k, v);
    }
    let t = Instant::now();
    let ran = r.run();
    (ran, t.elapsed())
}

/// "Product Name" and "Driver Version" of a recorded `nvidia-smi -q`.
fn recorded(profile: &str) -> (String, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/standin/profiles")
        .join(format!("{profile}.nvidia-smi-q.txt"));
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.starts_with("# source: https://"),
        "{} names no source",
        p.display()
    );
    let field = |k: &str| {
        text.lines()
            .find_map(|l| {
                let (key, val) = l.split_once(" : ")?;
                (key.trim() == k).then(|| val.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {k} in {}", p.display()))
    };
    (field("Product Name"), field("Driver Version"))
}

/// Each recorded machine is read back as it was recorded, with no finding about NVML itself.
#[test]
fn recorded_gpus_are_read_back() {
    let lib = nvml(&[]);
    let old = nvml(&["-DR470"]);
    for profile in ["a100", "rtx", "v100", "r470"] {
        let l = if profile == "r470" { &old } else { &lib };
        let (ran, _) = check(l, &[("STANDIN_NVML_PROFILE", profile)], "10");
        let v = ran.json();
        let (name, driver) = recorded(profile);
        let s = &v["snapshot"];
        assert_eq!(
            s["driver"]["nvml"]["value"]["driver_version"],
            driver.as_str(),
            "{profile}"
        );
        let g = &s["gpus"]["value"][0];
        assert_eq!(g["name"]["value"], name.as_str(), "{profile}");
        let r = rule_ids(&v);
        for bad in ["nvml.failed", "probe.crashed", "probe.timeout"] {
            assert!(!r.contains(&bad.to_string()), "{profile}: {r:?}");
        }
        match profile {
            // One python process holds 20322 MiB of 24564 MiB.
            "rtx" => {
                let f = finding(&v, "gpu.memory-held");
                assert!(f["detail"].as_str().unwrap().contains("58130"), "{f:#}");
            }
            // R470 lacks memory info v2 and the v3 process list: the v1 calls answer.
            "r470" => {
                assert_eq!(g["memory"]["value"]["total_bytes"], 2000u64 << 20);
                assert_eq!(g["processes"]["status"], "found", "{g:#}");
                assert!(g["health"]["value"].get("remapped_rows").is_none());
            }
            "a100" | "v100" => {
                assert_eq!(g["ecc_mode"]["value"]["current"], true);
                assert!(!g["health"]["value"]["nvlinks"]
                    .as_array()
                    .unwrap()
                    .is_empty());
            }
            _ => {}
        }
    }
}

/// NVML that crashes, aborts or exits, in init or in the middle of a GPU: a finding naming the
/// library and the call; exit 1, a valid report.
#[test]
fn a_crashing_nvml_is_a_finding() {
    let lib = nvml(&[]);
    for (spec, how, at) in [
        ("nvmlInit_v2=segv", "SIGSEGV", "nvmlInit_v2"),
        ("nvmlInit_v2=abort", "SIGABRT", "nvmlInit_v2"),
        ("nvmlInit_v2=exit0", "exit status 0", "nvmlInit_v2"),
        ("nvmlDeviceGetTemperature=segv", "SIGSEGV", "GPU 0"),
        (
            "nvmlDeviceGetRemappedRows=abort",
            "SIGABRT",
            "GPU 0: nvmlDeviceGetRemappedRows",
        ),
    ] {
        let (ran, _) = check(&lib, &[("STANDIN_NVML_FAIL", spec)], "10");
        assert_eq!(ran.code, 1, "{spec}: {}", ran.stdout);
        let v = ran.json();
        let f = finding(&v, "probe.crashed");
        assert_eq!(f["category"], "driver_fault");
        assert!(f["title"].as_str().unwrap().contains(at), "{spec}: {f:#}");
        assert!(f["detail"].as_str().unwrap().contains(how), "{spec}: {f:#}");
        assert!(
            f["detail"].as_str().unwrap().contains("libnvidia-ml.so.1"),
            "{f:#}"
        );
    }
}

/// A hang anywhere in NVML: the report comes within --timeout + 1 s, naming the call.
#[test]
fn a_hanging_nvml_keeps_the_deadline() {
    let lib = nvml(&[]);
    for (spec, at) in [
        ("nvmlInit_v2=hang", "nvmlInit_v2"),
        ("nvmlDeviceGetCount_v2=hang", "nvmlDeviceGetCount"),
        ("nvmlDeviceGetNvLinkState=hang", "nvmlDeviceGetNvLinkState"),
    ] {
        let (ran, took) = check(&lib, &[("STANDIN_NVML_FAIL", spec)], "2");
        assert!(took < Duration::from_millis(3000), "{spec}: took {took:?}");
        assert_eq!(ran.code, 1, "{spec}");
        let f = finding(&ran.json(), "probe.timeout").clone();
        assert!(f["title"].as_str().unwrap().contains(at), "{spec}: {f:#}");
    }
}

/// Every NVML return code, from every call after init and from init itself: never a healthy
/// verdict, never gpudoctor's own failure, always a finding that says NVML failed.
#[test]
fn every_nvml_error_code_is_reported() {
    let lib = nvml(&[]);
    let codes: Vec<u32> = (1..=29).chain([999]).collect();
    for code in codes {
        for spec in [format!("*={code}"), format!("nvmlInit_v2={code}")] {
            let (ran, _) = check(&lib, &[("STANDIN_NVML_FAIL", &spec)], "10");
            assert_eq!(ran.code, 1, "{spec}: {}", ran.stdout);
            let r = rule_ids(&ran.json());
            assert!(
                r.iter().any(|x| {
                    x == "nvml.failed" || x == "driver.missing" || x == "driver.library-mismatch"
                }),
                "{spec}: {r:?}"
            );
        }
    }
}

/// NOT_SUPPORTED (or NVML_ERROR_UNKNOWN) from any one GPU call loses that value only: the GPU
/// is still listed with its name and nothing crashes.
#[test]
fn one_failing_call_loses_one_value() {
    let lib = nvml(&[]);
    let calls = [
        "nvmlDeviceGetUUID",
        "nvmlDeviceGetPciInfo_v3",
        "nvmlDeviceGetMemoryInfo_v2",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetEccMode",
        "nvmlDeviceGetTotalEccErrors",
        "nvmlDeviceGetRetiredPages_v2",
        "nvmlDeviceGetRemappedRows",
        "nvmlDeviceGetRowRemapperHistogram",
        "nvmlDeviceGetFieldValues",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetTemperatureThreshold",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetClockInfo",
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        "nvmlDeviceGetNvLinkState",
        "nvmlDeviceGetMigMode",
        "nvmlSystemGetDriverVersion",
        "nvmlSystemGetCudaDriverVersion_v2",
    ];
    for call in calls {
        for code in ["3", "999"] {
            let spec = format!("{call}={code}");
            let (ran, _) = check(&lib, &[("STANDIN_NVML_FAIL", &spec)], "10");
            assert_ne!(ran.code, 2, "{spec}: {}", ran.stderr);
            let v = ran.json();
            let g = &v["snapshot"]["gpus"]["value"][0];
            assert_eq!(g["name"]["value"], "NVIDIA H100 80GB HBM3", "{spec}: {g:#}");
            assert!(
                !rule_ids(&v).contains(&"probe.crashed".to_string()),
                "{spec}"
            );
        }
    }
}

/// Counts no node has are refused at once; 0 GPUs is a finding; 64 is the most probed.
#[test]
fn device_counts_are_bounded() {
    let lib = nvml(&[]);
    let (ran, took) = check(&lib, &[("STANDIN_NVML_COUNT", "0xFFFFFFFF")], "10");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let v = ran.json();
    assert!(finding(&v, "nvml.failed")["detail"]
        .as_str()
        .unwrap()
        .contains("4294967295"));

    let (ran, _) = check(&lib, &[("STANDIN_NVML_COUNT", "0")], "10");
    assert_eq!(ran.code, 1);
    let v = ran.json();
    assert!(finding(&v, "nvml.failed")["title"]
        .as_str()
        .unwrap()
        .contains("no GPUs"));

    let (ran, _) = check(&lib, &[("STANDIN_NVML_COUNT", "64")], "10");
    let v = ran.json();
    assert_eq!(v["snapshot"]["gpus"]["value"].as_array().unwrap().len(), 64);
}

/// A process count of 0x7ffffff0 used to make nvml-wrapper allocate 64 GB and abort: now the
/// process list alone is refused and everything else is read.
#[test]
fn a_nonsense_process_count_loses_only_the_process_list() {
    let lib = nvml(&[]);
    let (ran, _) = check(&lib, &[("STANDIN_NVML_PROCS", "0x7ffffff0")], "10");
    let v = ran.json();
    assert!(
        !rule_ids(&v).contains(&"probe.crashed".to_string()),
        "{:?}",
        rule_ids(&v)
    );
    let g = &v["snapshot"]["gpus"]["value"][0];
    assert_eq!(g["memory"]["status"], "found");
    assert!(
        g["processes"]["error"]
            .as_str()
            .unwrap()
            .contains("not to be trusted"),
        "{g:#}"
    );
}

/// Strings NVML returns unterminated or with terminal escapes never reach the terminal raw.
#[test]
fn odd_strings_are_cleaned() {
    let lib = nvml(&[]);
    for name in ["noterm", "evil\x1b[31mred\x1b]0;title\x07\nsecond line"] {
        for format in ["json", "human"] {
            let ran = Run::new()
                .args(["check", "--no-smoke", "--format", format, "--timeout", "10"])
                .env("LD_LIBRARY_PATH", &lib.path)
                .env("STANDIN_NVML_NAME", name)
                .run();
            assert_ne!(ran.code, 2);
            assert!(
                !ran.stdout.contains('\x1b'),
                "{name:?} {format}: {}",
                ran.stdout
            );
            assert!(!ran.stdout.contains('\x07'), "{name:?} {format}");
            // The embedded newline does not start a line of its own.
            assert!(
                !ran.stdout.lines().any(|l| l.starts_with("second line")),
                "{}",
                ran.stdout
            );
        }
    }
}

/// A library that prints on standard output does not corrupt the JSON report.
#[test]
fn library_output_does_not_corrupt_json() {
    let lib = nvml(&[]);
    let (ran, _) = check(
        &lib,
        &[("STANDIN_NVML_PRINT", "NVML says hello\n{\"not\": 1}\n")],
        "10",
    );
    let v = ran.json();
    assert_eq!(v["schema"], "gpudoctor.report/1");
    assert!(!ran.stdout.contains("hello"));
}

/// `stress` on simulated GPUs with the real NVML watch (GPUDOCTOR_SIM_NVML=1) against the
/// stand-in, whose `fail` call hangs; SIGTERM after `after` is answered within 2 s with exit
/// 143 and the partial report.
fn stress_sigterm(fail: &str, after: Duration) -> serde_json::Value {
    use std::process::{Command, Stdio};
    let lib = nvml(&[]);
    let child = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .env("GPUDOCTOR_SIM_NVML", "1")
        .env("LD_LIBRARY_PATH", &lib.path)
        .env("STANDIN_NVML_FAIL", fail)
        .args(["stress", "--minutes", "10", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let t = Instant::now();
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "{fail}: exited {took:?} after SIGTERM"
    );
    assert_eq!(
        out.status.code(),
        Some(143),
        "{fail}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["snapshot"]["stress"]["interrupted_by"], "SIGTERM",
        "{fail}"
    );
    v
}

/// A hang in the Xid wait while the run goes on: the watch says NVML stopped answering, and
/// SIGTERM still ends the run at once with the partial report.
#[test]
fn stress_answers_sigterm_while_the_xid_wait_hangs() {
    let v = stress_sigterm("nvmlEventSetWait_v2=hang", Duration::from_millis(5000));
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert!(g["memory_rounds"].as_u64().unwrap() >= 1, "{g:#}");
    assert!(
        g["watch"]["unavailable"]
            .as_str()
            .unwrap_or_default()
            .contains("NVML stopped answering"),
        "{g:#}"
    );
}

/// A hang while the watch is being opened (event registration): SIGTERM is answered at once,
/// not after the 5 s the opening is given.
#[test]
fn stress_answers_sigterm_while_nvml_opens() {
    let v = stress_sigterm("nvmlDeviceRegisterEvents=hang", Duration::from_millis(1000));
    let g = &v["snapshot"]["stress"]["gpus"];
    assert!(g.as_array().is_some(), "{v:#}");
}
