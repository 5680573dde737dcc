//! The Linux snapshots of tests/fixtures, judged as if they came from Windows
//! (`--assume os=windows`): the Linux-only rules do not run and every fix is in Windows terms.
//! This runs on Linux and, with the Windows build, under Wine (scripts/test-windows.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{rule_ids, snapshot_fixture, snapshot_json, Run};

/// Words a Windows user could not act on.
const LINUX_ONLY: &[&str] = &[
    "sudo ",
    "dmesg",
    "journalctl",
    "systemctl",
    "ubuntu-drivers",
    "modprobe",
    "LD_LIBRARY_PATH",
    "libcuda.so",
    "libnvidia-ml.so",
    "/dev/nvidia",
];

fn check(snapshot: &str, os: &str, extra: &[&str]) -> serde_json::Value {
    let ran = Run::new()
        .args(["check", "--format", "json", "--assume"])
        .args([format!("os={os}")])
        .args(extra)
        .args(["--snapshot"])
        .arg_path(&snapshot_fixture(snapshot))
        .run();
    assert!(ran.code == 0 || ran.code == 1, "{}", ran.stderr);
    ran.json()
}

fn findings(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["findings"].as_array().unwrap().iter().collect()
}

fn assert_windows_terms(report: &serde_json::Value) {
    for f in findings(report) {
        let text = format!(
            "{}\n{}\n{}\n{}",
            f["title"], f["detail"], f["fix"]["text"], f["fix"]["commands"]
        );
        for w in LINUX_ONLY {
            assert!(!text.contains(w), "{} mentions {w:?}:\n{text}", f["rule"]);
        }
    }
}

/// A real Debian 12 container without GPU access: on Linux, the container and driver findings
/// with Linux commands; as Windows, no container rule and the driver in Windows terms.
#[test]
fn a_machine_without_a_driver_on_windows() {
    let linux = check("debian12-docker-nodriver.json", "linux", &[]);
    let ids = rule_ids(&linux);
    assert!(ids.contains(&"container.no-gpu".to_string()), "{ids:?}");
    assert!(ids.contains(&"driver.missing".to_string()), "{ids:?}");

    let win = check("debian12-docker-nodriver.json", "windows", &[]);
    let ids = rule_ids(&win);
    assert!(!ids.contains(&"container.no-gpu".to_string()), "{ids:?}");
    assert_eq!(win["verdict"], "fail");
    let missing = common::finding(&win, "driver.missing");
    let detail = missing["detail"].as_str().unwrap();
    assert!(
        detail.contains("nvml.dll") && detail.contains("nvcuda.dll"),
        "{detail}"
    );
    let cmds = missing["fix"]["commands"].to_string();
    assert!(cmds.contains("Win32_VideoController"), "{cmds}");
    assert_windows_terms(&win);
}

/// A real H100 snapshot with a driver too old for its torch build: the Linux fix installs a
/// driver with ubuntu-drivers; the Windows fix opens NVIDIA's driver page and restarts.
#[test]
fn an_old_driver_on_windows() {
    let linux = check(
        "h100-580.159.04-real.json",
        "linux",
        &[
            "--assume",
            "driver=470.82.01",
            "--assume",
            "torch=2.3.0+cu121",
        ],
    );
    let old = common::finding(&linux, "compat.driver-too-old");
    assert!(
        old["fix"]["commands"]
            .to_string()
            .contains("ubuntu-drivers"),
        "{old:#}"
    );

    let win = check(
        "h100-580.159.04-real.json",
        "windows",
        &[
            "--assume",
            "driver=470.82.01",
            "--assume",
            "torch=2.3.0+cu121",
        ],
    );
    let old = common::finding(&win, "compat.driver-too-old");
    let cmds: Vec<&str> = old["fix"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        cmds.get(..2),
        Some(
            &[
                "Start-Process 'https://www.nvidia.com/en-us/drivers/'",
                "shutdown /r /t 0"
            ][..]
        ),
        "{old:#}"
    );
    let text = old["fix"]["text"].as_str().unwrap();
    assert!(text.contains("then restart Windows"), "{text}");
    assert_windows_terms(&win);
}

/// The human report gives the same fixes in Windows terms. (The probe lines of these recorded
/// Linux snapshots name Linux libraries; tests/it/windows.rs checks a whole Windows report.)
#[test]
fn the_text_report_on_windows() {
    let ran = Run::new()
        .args([
            "check",
            "--color",
            "never",
            "--assume",
            "os=windows",
            "--snapshot",
        ])
        .arg_path(&snapshot_fixture("debian12-docker-nodriver.json"))
        .run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stdout
            .contains("$ Get-CimInstance Win32_VideoController"),
        "{}",
        ran.stdout
    );
    for w in ["sudo ", "ubuntu-drivers", "docker run"] {
        assert!(!ran.stdout.contains(w), "mentions {w:?}:\n{}", ran.stdout);
    }
}

/// TensorFlow 2.10 from its real Windows wheel, in an environment whose only CUDA runtime is the
/// real cudart64_12.dll of CUDA 12's Windows wheel: it names the DLL it cannot load as Windows
/// users meet it ("Could not load dynamic library 'cudart64_110.dll'"), and the Linux soname on
/// Linux.
#[test]
fn tensorflow_2_10_names_the_library_it_cannot_load() {
    let Some(v) = common::test_venv() else { return };
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site-packages");
    common::copy_tree(&v.join("win-tf"), &site);
    common::copy_tree(&v.join("win").join("nvidia"), &site.join("nvidia"));
    for (os, lib) in [
        ("windows", "cudart64_110.dll"),
        ("linux", "libcudart.so.11.0"),
    ] {
        let ran = Run::new()
            .args(["check", "--format", "json", "--assume"])
            .args([format!("os={os}")])
            .args(["--python"])
            .arg_path(&site)
            .run();
        assert!(ran.code == 0 || ran.code == 1, "{}", ran.stderr);
        let j = ran.json();
        let f = common::finding(&j, "compat.cuda-runtime");
        assert_eq!(
            f["title"],
            format!("tensorflow 2.10.0 cannot load {lib}"),
            "{f:#}"
        );
        let env = j["snapshot"]["python"]["value"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["tensorflow"].is_object())
            .unwrap();
        assert_eq!(env["tensorflow"]["cuda_version"], "11.2");
    }
}

/// On Windows the driver/library check compares NVML with nvcuda.dll's version: the real H100
/// snapshot agrees with itself, and with nvcuda.dll from another driver it is a mismatch.
#[test]
fn nvml_and_nvcuda_versions_are_compared_on_windows() {
    let j = check("h100-580.159.04-real.json", "windows", &[]);
    assert!(
        !rule_ids(&j).contains(&"driver.library-mismatch".to_string()),
        "{j:#}"
    );
    let mut s = snapshot_json("h100-580.159.04-real.json");
    s["driver"]["libcuda"]["value"]["file_version"] = serde_json::json!("560.94");
    s["driver"]["libcuda"]["value"]["path"] = serde_json::json!(r"C:\Windows\System32\nvcuda.dll");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.json");
    std::fs::write(&p, serde_json::to_string(&s).unwrap()).unwrap();
    let ran = Run::new()
        .args([
            "check",
            "--format",
            "json",
            "--assume",
            "os=windows",
            "--snapshot",
        ])
        .arg_path(&p)
        .run();
    let j = ran.json();
    let f = common::finding(&j, "driver.library-mismatch");
    assert_eq!(
        f["title"],
        "nvml.dll and nvcuda.dll are from different drivers (580.159.04 and 560.94)"
    );
    assert_windows_terms(&j);
}
