//! `windows.tdr` and the System event log's display-driver resets, end to end: the recorded
//! records of tests/fixtures/windows/eventlog are parsed by the probe's own parser into a real
//! snapshot (debian12-docker-nodriver.json) given a Windows host section, and `gpudoctor check
//! --snapshot` judges it. Runs on Linux and, with the Windows build, under Wine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{fixtures, snapshot_fixture, snapshot_json, Run};
use gpudoctor::probe::windows::eventlog;

/// All the recorded records as one wevtutil stream, parsed and collected (no clock: all kept).
fn event_log() -> serde_json::Value {
    let dir = fixtures().join("windows").join("eventlog");
    let mut text = String::new();
    for f in [
        "display-4101.xml",
        "nvlddmkm-153.xml",
        "nvlddmkm-153-restarting.xml",
        "nvlddmkm-13.xml",
        "nvlddmkm-0.xml",
    ] {
        text.push_str(&std::fs::read_to_string(dir.join(f)).unwrap());
    }
    let log = eventlog::collect(&eventlog::parse_records(&text), None, 24.0);
    serde_json::json!({"status": "found", "value": log})
}

/// The Debian snapshot with `windows` (the host's TDR section, or none) and the event log.
fn snapshot(
    dir: &std::path::Path,
    windows: Option<serde_json::Value>,
    log: bool,
) -> std::path::PathBuf {
    let mut s = snapshot_json("debian12-docker-nodriver.json");
    if let Some(w) = windows {
        s["host"]["value"]["windows"] = w;
    }
    if log {
        s["kernel_log"] = event_log();
    }
    let p = dir.join("snapshot.json");
    std::fs::write(&p, serde_json::to_string(&s).unwrap()).unwrap();
    p
}

fn check(snap: &std::path::Path, assume: &[&str]) -> serde_json::Value {
    let mut r = Run::new().args(["check", "--format", "json"]);
    for a in assume {
        r = r.args(["--assume", a]);
    }
    let ran = r.args(["--snapshot"]).arg_path(snap).run();
    assert!(ran.code == 0 || ran.code == 1, "{}", ran.stderr);
    ran.json()
}

fn findings<'a>(report: &'a serde_json::Value, rule: &str) -> Vec<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

#[test]
fn resets_with_the_default_delay_warn_with_the_registry_fix() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({})), true);
    let r = check(&snap, &["os=windows"]);
    let f = findings(&r, "windows.tdr");
    assert_eq!(f.len(), 1, "{r:#}");
    let f = f[0];
    assert_eq!(f["severity"], "warning");
    assert_eq!(
        f["title"],
        "Windows reset the display driver 4 times with a 2 s TDR delay"
    );
    assert_eq!(f["evidence"]["resets"], 4);
    assert_eq!(f["evidence"]["tdr_delay_s"], 2);
    assert_eq!(f["evidence"]["tdr_delay_set"], false);
    let cmds = f["fix"]["commands"].as_array().unwrap();
    assert_eq!(
        cmds[0],
        r#"reg add "HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers" /v TdrDelay /t REG_DWORD /d 60 /f"#
    );
    assert_eq!(cmds[1], "shutdown /r /t 0");

    // The same resets as a fault of the log, labelled as the System event log, and the three
    // nvlddmkm 13 records as one Xid 13.
    let k = findings(&r, "faults.kernel-log");
    let tdr: Vec<_> = k
        .iter()
        .filter(|f| f["evidence"]["event"]["kind"] == "display_driver_reset")
        .collect();
    assert_eq!(tdr.len(), 1, "{r:#}");
    assert_eq!(tdr[0]["evidence"]["count"], 4);
    assert_eq!(tdr[0]["evidence"]["source"], "System event log");
    assert!(tdr[0]["detail"]
        .as_str()
        .unwrap()
        .contains("System event log: nvlddmkm 153: \\Device\\Video3 Error occurred on GPUID: 100"));
    let xid = findings(&r, "faults.xid");
    assert!(
        xid.iter()
            .any(|f| f["title"].as_str().unwrap().contains("Xid 13")),
        "{r:#}"
    );
}

#[test]
fn resets_despite_a_long_delay_blame_the_kernels_or_the_gpu() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({"tdr_delay_s": 60})), true);
    let r = check(&snap, &["os=windows"]);
    let f = findings(&r, "windows.tdr");
    assert_eq!(f.len(), 1, "{r:#}");
    assert_eq!(
        f[0]["title"],
        "Windows reset the display driver 4 times despite a 60 s TDR delay"
    );
    assert_eq!(f[0]["fix"]["commands"].as_array().unwrap().len(), 0);
}

#[test]
fn resets_with_settings_unknown_still_warn() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), None, true);
    let r = check(&snap, &["os=windows"]);
    let f = findings(&r, "windows.tdr");
    assert_eq!(f.len(), 1, "{r:#}");
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("could not be read (not in this snapshot)"));
}

#[test]
fn detection_off_or_no_resets_without_gpus_say_nothing() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({"tdr_level": 0})), true);
    assert!(findings(&check(&snap, &["os=windows"]), "windows.tdr").is_empty());
    let snap = snapshot(d.path(), Some(serde_json::json!({})), false);
    assert!(findings(&check(&snap, &["os=windows"]), "windows.tdr").is_empty());
}

#[test]
fn the_default_delay_with_a_gpu_is_worth_an_info() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({})), false);
    let r = check(&snap, &["os=windows", "gpu=RTX 3070"]);
    let f = findings(&r, "windows.tdr");
    assert_eq!(f.len(), 1, "{r:#}");
    assert_eq!(f[0]["severity"], "info");
    // This snapshot has no event log: the finding says so rather than "no reset".
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .contains("The System event log was not read"));
}

#[test]
fn never_on_linux() {
    let d = tempfile::tempdir().unwrap();
    // The real Linux snapshot, and the same with Windows' section and resets but os=linux.
    let plain = snapshot_fixture("debian12-docker-nodriver.json");
    assert!(findings(&check(&plain, &[]), "windows.tdr").is_empty());
    let snap = snapshot(d.path(), Some(serde_json::json!({})), true);
    let r = check(&snap, &["os=linux", "gpu=RTX 3070"]);
    assert!(findings(&r, "windows.tdr").is_empty(), "{r:#}");
}

/// GPUs in TCC mode (NVML's driver model, as a data-centre GPU on Windows Server runs) are not
/// under TDR: the same resets and default delay say nothing about the setting; one in WDDM mode
/// among them does.
#[test]
fn gpus_in_tcc_mode_are_not_under_tdr() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({})), true);
    let h100 = snapshot_json("h100-580.159.04-real.json");
    let with_models = |models: &[&str]| {
        let mut s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&snap).unwrap()).unwrap();
        let gpu = h100["gpus"]["value"][0].clone();
        let gpus: Vec<serde_json::Value> = models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut g = gpu.clone();
                g["index"] = serde_json::json!(i);
                g["driver_model"] = serde_json::json!(m);
                g
            })
            .collect();
        s["gpus"] = serde_json::json!({"status": "found", "value": gpus});
        let p = d.path().join(format!("{}.json", models.join("-")));
        std::fs::write(&p, serde_json::to_string(&s).unwrap()).unwrap();
        p
    };
    let r = check(&with_models(&["TCC", "TCC"]), &["os=windows"]);
    assert!(findings(&r, "windows.tdr").is_empty(), "{r:#}");
    let r = check(&with_models(&["TCC", "WDDM"]), &["os=windows"]);
    assert_eq!(findings(&r, "windows.tdr").len(), 1, "{r:#}");
}

/// A System event log wevtutil was denied: a warning in Windows terms (the Event Log Readers
/// group), where Linux would name the kernel log.
#[test]
fn an_unreadable_event_log_says_how_to_read_it() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(d.path(), Some(serde_json::json!({})), false);
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&snap).unwrap()).unwrap();
    s["kernel_log"] = serde_json::json!({
        "status": "failed",
        "code": "access_denied",
        "error": "wevtutil qe System exit status 5: Failed to read events. Access is denied. (run as Administrator, or as a member of the Event Log Readers group)"
    });
    std::fs::write(&snap, serde_json::to_string(&s).unwrap()).unwrap();
    let r = check(&snap, &["os=windows"]);
    let f = findings(&r, "faults.kernel-log-unreadable");
    assert_eq!(f.len(), 1, "{r:#}");
    assert!(f[0]["title"].as_str().unwrap().contains("System event log"));
    assert_eq!(
        f[0]["fix"]["commands"][0],
        "Add-LocalGroupMember -Group 'Event Log Readers' -Member $env:USERNAME"
    );
}

/// The display adapters Device Manager lists: an NVIDIA GPU with Code 43 (the hardware id of a
/// real RTX 3050 laptop GPU in that state, cyberus-technology/virtualbox-kvm#34), one on
/// Microsoft Basic Display Adapter (assembled: an RTX 4090's id with Windows' fallback driver as
/// its service), and Intel's, which is not judged.
#[test]
fn nvidia_adapters_with_code_43_or_no_driver_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let snap = snapshot(
        d.path(),
        Some(serde_json::json!({"adapters": [
            {"name": "NVIDIA GeForce RTX 3050 Laptop GPU",
             "hardware_id": "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
             "service": "nvlddmkm", "problem": 43},
            {"name": "Microsoft Basic Display Adapter",
             "hardware_id": "PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1",
             "service": "BasicDisplay"},
            {"name": "Intel(R) Iris(R) Xe Graphics",
             "hardware_id": "PCI\\VEN_8086&DEV_9A49&SUBSYS_13FC1043&REV_01",
             "service": "igfx", "problem": 43}
        ]})),
        false,
    );
    let r = check(&snap, &["os=windows"]);
    let f = findings(&r, "windows.adapter");
    assert_eq!(f.len(), 2, "{r:#}");
    assert_eq!(f[0]["category"], "hardware_fault");
    assert!(
        f[0]["title"].as_str().unwrap().contains("(Code 43)"),
        "{:#}",
        f[0]
    );
    assert!(f[0]["detail"].as_str().unwrap().contains("DEV_25A2"));
    assert!(f[1]["title"]
        .as_str()
        .unwrap()
        .contains("Microsoft Basic Display Adapter"));
    // Not on Linux.
    let r = check(&snap, &["os=linux"]);
    assert!(findings(&r, "windows.adapter").is_empty());
}
