//! Kernel-log faults: Xid and NVRM lines (faults.md §2 examples, in dmesg form) through the real
//! parser into the snapshot, then the rules; and this machine's real kernel-log path, readable
//! as root and not readable as an unprivileged user.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{check_json, finding, fixtures, is_root, snapshot_json, Run};
use gpudoctor::probe::kernel_log::Collector;
use serde_json::{json, Value};

fn h100_with_log() -> Value {
    let mut s = snapshot_json("synthetic-2xh100.json");
    let mut c = Collector::default();
    for line in std::fs::read_to_string(fixtures().join("kernel-log/h100-node.dmesg"))
        .unwrap()
        .lines()
    {
        c.feed(line);
    }
    let log = c.finish("dmesg", 24.0, vec![]);
    s["kernel_log"] = json!({"status": "found", "value": log});
    s
}

#[test]
fn xids_are_explained_attributed_and_counted() {
    let r = check_json(&h100_with_log(), &[]);
    assert_eq!(r.code, 1);
    let v = r.json();
    let xids: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "faults.xid")
        .collect();
    let by = |x: u64| {
        xids.iter()
            .find(|f| f["evidence"]["xid"] == x)
            .copied()
            .unwrap_or_else(|| panic!("no Xid {x} in {xids:#?}"))
    };
    let x79 = by(79);
    assert_eq!(x79["severity"], "error");
    assert_eq!(x79["category"], "hardware_fault");
    assert_eq!(x79["gpu"], 1, "0000:2a:00 is GPU 1");
    assert_eq!(x79["evidence"]["count"], 3);
    assert!(x79["title"]
        .as_str()
        .unwrap()
        .contains("3 times in the last 24 h"));
    assert!(x79["fix"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Reboot the node"));
    let x13 = by(13);
    assert_eq!(
        (
            x13["severity"].as_str(),
            x13["category"].as_str(),
            x13["gpu"].as_u64()
        ),
        (Some("info"), Some("application_error"), Some(0))
    );
    assert!(by(45)["fix"]["text"]
        .as_str()
        .unwrap()
        .contains("previous Xid 13"));
    assert_eq!(by(45)["severity"], "info");
    assert_eq!(by(63)["category"], "ecc_memory");
    let x154 = by(154);
    assert_eq!(x154["severity"], "error");
    assert!(x154["fix"]["text"]
        .as_str()
        .unwrap()
        .contains("Drain and Reset"));
    assert_eq!(by(119)["category"], "driver_fault");
    // The "fallen off the bus" line beside Xid 79 is not reported twice.
    assert!(v["findings"].as_array().unwrap().iter().all(|f| !f["title"]
        .as_str()
        .unwrap()
        .starts_with("A GPU has fallen off the bus")));
    let kl: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "faults.kernel-log")
        .map(|f| f["category"].as_str().unwrap())
        .collect();
    assert_eq!(
        kl,
        vec![
            "driver_library_mismatch",
            "pcie_degraded",
            "host_memory_exhausted"
        ]
    );
    let api = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["category"] == "driver_library_mismatch" && f["rule"] == "faults.kernel-log")
        .unwrap();
    assert!(api["detail"].as_str().unwrap().contains("580.82.07"));
}

#[test]
fn the_human_report_puts_xids_under_gpus() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.json");
    std::fs::write(&p, h100_with_log().to_string()).unwrap();
    let r = Run::new().args(["check", "--snapshot"]).arg_path(&p).run();
    let gpus = r
        .stdout
        .split("[✗] GPUs")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    assert!(
        gpus.contains("Xid 79 (GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 1"),
        "{gpus}"
    );
}

#[test]
fn this_machines_kernel_log_readable_or_not() {
    let r = Run::new().args(["snapshot"]).run();
    let v = r.json();
    let k = &v["kernel_log"];
    if is_root() {
        assert_eq!(k["status"], "found", "{k}");
        assert!(k["value"]["lines"].as_u64().unwrap() > 0);
        // The same binary as an unprivileged user: not readable, and that is a finding.
        let bin = tempfile::tempdir().unwrap();
        let exe = bin.path().join("gpudoctor");
        std::fs::copy(env!("CARGO_BIN_EXE_gpudoctor"), &exe).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&exe)
            .args([
                "check",
                "--format",
                "json",
                "--skip",
                "driver",
                "--skip",
                "container",
            ])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output();
        let Ok(out) = out else {
            eprintln!("setpriv is not available: the unprivileged path is not tested here");
            return;
        };
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if v["snapshot"]["kernel_log"]["status"] == "found" {
            eprintln!("this kernel lets unprivileged users read the log (dmesg_restrict=0)");
            return;
        }
        let f = finding(&v, "faults.kernel-log-unreadable");
        assert_eq!(f["severity"], "warning");
        assert!(f["detail"].as_str().unwrap().contains("/dev/kmsg"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "a warning does not fail the default gate"
        );
    } else {
        let c = Run::new().args(["check", "--format", "json"]).run();
        let cv = c.json();
        let unreadable = cv["snapshot"]["kernel_log"]["status"] == "failed";
        assert_eq!(
            unreadable,
            c.rules()
                .contains(&"faults.kernel-log-unreadable".to_string())
        );
    }
}

#[test]
fn a_hung_nvml_call_is_a_probe_timeout_naming_the_call_and_the_report_still_prints() {
    let t = std::time::Instant::now();
    let r = Run::new()
        .env("GPUDOCTOR_TEST_HANG_NVML", "1")
        .args(["check", "--format", "json", "--timeout", "1"])
        .run();
    let took = t.elapsed();
    assert!(
        took < std::time::Duration::from_millis(2000),
        "took {took:?}: more than --timeout + 1 s"
    );
    let v = r.json();
    let f = finding(&v, "probe.timeout");
    assert_eq!(f["category"], "probe_timeout");
    assert!(
        f["title"].as_str().unwrap().ends_with("in nvmlInit_v2"),
        "{f}"
    );
    // The other probes finished and are in the report.
    assert_eq!(v["snapshot"]["host"]["status"], "found");
    assert!(v["snapshot"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "software" && p["outcome"] == "ok"));
}

#[test]
fn the_look_back_window_is_a_flag() {
    let r = Run::new().args(["snapshot", "--log-window", "0.5"]).run();
    let k = &r.json()["kernel_log"];
    if k["status"] == "found" {
        assert_eq!(k["value"]["window_hours"], 0.5);
    }
    let r = Run::new().args(["check", "--log-window", "-3"]).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--log-window"), "{}", r.stderr);
}

/// `check` (the rules over a snapshot's kernel log) and `explain --log` give each kernel-log
/// event and each Xid the same category: one line per event of knowledge/kernel-events.yaml
/// (real lines from public threads, tests/fixtures/kernel-log/public-threads.yaml) and one Xid
/// line for every Xid of knowledge/xid.yaml.
#[test]
fn check_and_explain_give_every_kernel_event_and_xid_the_same_category() {
    let fixture: serde_json::Value = {
        let t = std::fs::read_to_string(fixtures().join("kernel-log/public-threads.yaml")).unwrap();
        serde_saphyr::from_str::<Value>(&t).unwrap()
    };
    let xids: Vec<u64> = {
        let t = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge/xid.yaml"),
        )
        .unwrap();
        let v: Value = serde_saphyr::from_str(&t).unwrap();
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["xid"].as_u64().unwrap())
            .collect()
    };
    assert!(xids.len() > 150, "{}", xids.len());
    let mut lines: Vec<String> = fixture["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["event"].is_string())
        .map(|l| l["text"].as_str().unwrap().to_string())
        .collect();
    // One Xid per GPU bus, so that no two Xid lines count as repeats of one another.
    for (i, x) in xids.iter().enumerate() {
        lines.push(format!(
            "[ {i}.000000] NVRM: Xid (PCI:0000:{:02x}:00): {x}, pid=1, name=python, test",
            i % 256
        ));
    }
    let text = lines.join("\n") + "\n";

    // check: the lines through the collector into a snapshot, then the rules.
    let mut s = snapshot_json("synthetic-2xh100.json");
    let mut c = Collector::default();
    for l in text.lines() {
        c.feed(l);
    }
    s["kernel_log"] = json!({"status": "found", "value": c.finish("dmesg", 24.0, vec![])});
    let v = check_json(&s, &[]).json();
    let mut from_check = std::collections::BTreeMap::new();
    for f in v["findings"].as_array().unwrap() {
        let key = match f["rule"].as_str().unwrap() {
            "faults.xid" => format!("xid:{}", f["evidence"]["xid"]),
            "faults.kernel-log" => f["evidence"]["kernel_event"].as_str().unwrap().to_string(),
            _ => continue,
        };
        from_check.insert(key, f["category"].as_str().unwrap().to_string());
    }

    // explain --log: the same lines.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("k.log");
    std::fs::write(&p, &text).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--log"])
        .arg_path(&p)
        .run();
    let e = r.json();
    let mut from_explain = std::collections::BTreeMap::new();
    for m in e["matches"].as_array().unwrap() {
        let key = match m["kind"].as_str().unwrap() {
            "xid" => format!("xid:{}", m["code"]),
            "signature" => m["code"].as_str().unwrap().to_string(),
            _ => continue,
        };
        from_explain.insert(key, m["category"].as_str().unwrap().to_string());
    }

    let mut compared = 0;
    for (k, cat) in &from_check {
        let other = from_explain
            .get(k)
            .unwrap_or_else(|| panic!("explain does not report {k} (check says {cat})"));
        assert_eq!(cat, other, "{k}: check says {cat}, explain {other}");
        compared += 1;
    }
    // Every Xid and every event of the fixture (the AER line is below its threshold in check).
    assert!(compared >= xids.len() + 12, "{compared}: {from_check:?}");
}
