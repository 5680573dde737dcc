//! The Windows build, run under Wine by scripts/test-windows.sh: what a Windows user without a
//! driver sees. Other `tests/windows_*.rs` files test the Windows probes on recorded data.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::Run;

/// Words that only a Linux probe or a Linux fix would print.
const LINUX_ONLY: &[&str] = &[
    "/proc",
    "/etc/",
    "/dev/nvidia",
    "dmesg",
    "journalctl",
    "sudo ",
    "systemctl",
    "ubuntu-drivers",
    "Debian",
    "docker",
    "LD_LIBRARY_PATH",
    "libnvidia-ml.so",
    "libcuda.so",
];

#[test]
fn check_without_a_driver_says_so_in_windows_terms_and_exits_1() {
    let ran = Run::new().args(["check", "--color", "never"]).run();
    assert_eq!(ran.code, 1, "{}\n{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("nvml.dll"), "{}", ran.stdout);
    assert!(ran.stdout.contains("nvcuda.dll"), "{}", ran.stdout);
    for w in LINUX_ONLY {
        assert!(
            !ran.stdout.contains(w),
            "the Windows report mentions {w:?}:\n{}",
            ran.stdout
        );
    }
}

#[test]
fn the_json_report_says_windows() {
    let ran = Run::new().args(["check", "--format", "json"]).run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    let j = ran.json();
    let host = &j["snapshot"]["host"]["value"];
    assert_eq!(host["os"], "windows", "{host:#}");
    // Wine's registry answers as a Windows release does.
    assert!(
        host["distribution"].as_str().unwrap().contains("Windows"),
        "{host:#}"
    );
    assert!(
        host["kernel"]
            .as_str()
            .unwrap()
            .starts_with("NT 10.0 build "),
        "{host:#}"
    );
    assert!(host["container"].is_null(), "{host:#}");
}

#[test]
fn explain_answers_the_keras_crash_codes() {
    for code in ["-1073740791", "3221226505", "0xC0000409"] {
        let ran = Run::new().args(["explain", code]).run();
        assert_eq!(ran.code, 0, "{code}: {}", ran.stderr);
        assert!(
            ran.stdout.contains("STATUS_STACK_BUFFER_OVERRUN"),
            "{code}: {}",
            ran.stdout
        );
    }
}

/// `matrix update` keeps its cache in %LOCALAPPDATA%\gpudoctor, and check then uses it.
#[test]
fn the_matrix_cache_is_in_localappdata() {
    let d = tempfile::tempdir().unwrap();
    let text = common::matrix_single_file("2026-12-01");
    let file = d.path().join("matrix-2026-12-01.yaml");
    std::fs::write(&file, text).unwrap();
    let local = d.path().join(r"AppData\Local");
    let ran = Run::new()
        .env("LOCALAPPDATA", &local)
        .args(["matrix", "update", "--from"])
        .arg_path(&file)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(local.join(r"gpudoctor\matrix.yaml").is_file());
    let ran = Run::new()
        .env("LOCALAPPDATA", &local)
        .args(["matrix", "show", "--json"])
        .run();
    assert_eq!(ran.json()["data_version"], "2026-12-01");
}

/// The System event log stands where the kernel log is: under Wine (no wevtutil with NVIDIA
/// records) it is read or says why, and the TDR settings are read from the registry.
#[test]
fn the_event_log_and_tdr_settings_are_probed_without_a_panic() {
    let ran = Run::new().args(["check", "--format", "json"]).run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    let j = ran.json();
    let log = &j["snapshot"]["kernel_log"];
    if log["status"] == "found" {
        assert_eq!(log["value"]["source"], "System event log", "{log:#}");
    } else {
        let why = log["error"].as_str().or(log["why"].as_str()).unwrap_or("");
        assert!(why.contains("wevtutil"), "{log:#}");
    }
    let w = &j["snapshot"]["host"]["value"]["windows"];
    assert!(w.is_object(), "{w:#}");
    // No GPU under Wine: no TDR finding.
    let rules: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(!rules.contains(&"windows.tdr"), "{rules:?}");
}
