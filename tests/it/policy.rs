//! `--policy FILE`: waivers (with reason and expiry, per GPU), severity changes, thresholds per
//! node class, and invalid policies (exit 2 with file:line:column), on recorded snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{finding, snapshot_fixture, Run};
use std::path::PathBuf;

fn policy(text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("policy.yaml");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

fn check(snapshot: &str, policy: &std::path::Path, extra: &[&str]) -> common::Ran {
    Run::new()
        .args(["check", "--color", "never"])
        .args(extra.iter().copied())
        .args(["--policy"])
        .arg_path(policy)
        .args(["--snapshot"])
        .arg_path(&snapshot_fixture(snapshot))
        .run()
}

const NODRIVER: &str = "debian12-docker-nodriver.json";
const H100: &str = "synthetic-2xh100.json";

#[test]
fn a_waived_finding_still_shows_and_no_longer_fails() {
    let (_d, p) = policy(
        "schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.\n    reason: \"driver install booked, OPS-1\"\n    expires: 2099-12-31\n  - rule: container.no-gpu\n    reason: CPU-only build node\n    expires: 2099-12-31\n",
    );
    let r = check(NODRIVER, &p, &["--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v = r.json();
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["waived"], 2);
    let f = finding(&v, "driver.missing");
    assert_eq!(f["severity"], "error", "the finding keeps its severity");
    assert_eq!(f["waived"]["reason"], "driver install booked, OPS-1");
    assert_eq!(f["waived"]["expires"], "2099-12-31");
    assert!(
        f["waived"]["policy"]
            .as_str()
            .unwrap()
            .ends_with("policy.yaml:3:5"),
        "{}",
        f["waived"]
    );
    let r = check(NODRIVER, &p, &[]);
    assert!(
        r.stdout.contains("Waived until 2099-12-31 by"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(": CPU-only build node"), "{}", r.stdout);
    // Every renderer honours the waiver: JUnit has no <failure> for it and says it in
    // <system-out>; Prometheus does not count it as a finding (alerts stay quiet).
    let r = check(NODRIVER, &p, &["--format", "junit"]);
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains("<failure"), "{}", r.stdout);
    assert!(
        r.stdout.contains("[error, waived until 2099-12-31 by "),
        "{}",
        r.stdout
    );
    let r = check(NODRIVER, &p, &["--format", "prometheus"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("gpudoctor_findings{category=\"driver_missing\",severity=\"error\"} 0"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("gpudoctor_waived_findings 2"),
        "{}",
        r.stdout
    );
}

#[test]
fn an_expired_waiver_counts_again_and_says_so() {
    let (_d, p) = policy("schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: old ticket\n    expires: 2020-01-31\n");
    let r = check(NODRIVER, &p, &["--json"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert!(finding(&v, "driver.missing")["waived"].is_null());
    let e = finding(&v, "policy.waiver-expired");
    assert_eq!(e["severity"], "warning");
    assert_eq!(
        e["title"],
        "A policy waiver expired: driver.missing (old ticket)"
    );
}

#[test]
fn severities_move_and_fail_on_follows() {
    let (_d, p) = policy("schema: gpudoctor.policy/1\nseverity:\n  - rule: driver.missing\n    to: warning\n  - rule: container\n    to: info\n");
    let r = check(NODRIVER, &p, &["--json"]);
    assert_eq!(r.code, 0);
    let v = r.json();
    assert_eq!(finding(&v, "driver.missing")["severity"], "warning");
    assert_eq!(finding(&v, "container.no-gpu")["severity"], "info");
    assert_eq!(check(NODRIVER, &p, &["--fail-on", "warning"]).code, 1);
}

#[test]
fn a_waiver_for_one_gpu_leaves_the_others() {
    // GPU 1 of the snapshot has memory held by another process.
    let (_d, p) = policy("schema: gpudoctor.policy/1\nwaive:\n  - rule: gpu.memory-held\n    reason: long job\n    expires: 2099-01-01\n    gpus: [0]\n");
    let v = check(H100, &p, &["--json"]).json();
    assert!(
        finding(&v, "gpu.memory-held")["waived"].is_null(),
        "GPU 1 is not waived"
    );
    let (_d, p) = policy("schema: gpudoctor.policy/1\nwaive:\n  - rule: gpu.memory-held\n    reason: long job\n    expires: 2099-01-01\n    gpus: [1]\n");
    let v = check(H100, &p, &["--json"]).json();
    assert!(!finding(&v, "gpu.memory-held")["waived"].is_null());
    assert_eq!(v["verdict"], "pass");
}

const CLASSES: &str = "schema: gpudoctor.policy/1
thresholds:
  max_temperature_c: 90
classes:
  - name: a100
    match: {gpu: A100}
    thresholds: {min_driver: \"999.1\"}
  - name: h100
    match: {hostname: \"*\", gpu: H100}
    thresholds: {min_driver: \"590.10\", max_temperature_c: 31, max_ecc_uncorrected: 0, expect_gpus: 8}
  - name: lenient
    thresholds: {expect_gpus: 2}
";

#[test]
fn thresholds_of_the_matching_node_class() {
    let (_d, p) = policy(CLASSES);
    let r = check(H100, &p, &["--json"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    let rules = r.rules();
    // The h100 class (the a100 one does not match the GPUs): driver 580.95.05 < 590.10,
    // GPU 1 at 32 °C > 31 (GPU 0 is at 31), 8 GPUs expected, 2 found.
    let drv = finding(&v, "policy.thresholds");
    assert_eq!(drv["category"], "driver_too_old");
    assert_eq!(
        drv["title"],
        "Driver 580.95.05 is older than this node class's minimum 590.10"
    );
    let temps: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["category"] == "thermal_power")
        .collect();
    assert_eq!(temps.len(), 1, "{rules:?}");
    assert_eq!(temps[0]["gpu"], 1);
    assert!(
        rules.iter().any(|r| r == "gpus.expected-count"),
        "{rules:?}"
    );
    // Named explicitly, the lenient class applies instead: nothing fails.
    let r = check(H100, &p, &["--node-class", "lenient"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let r = check(H100, &p, &["--node-class", "nope"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("no node class named \"nope\" (classes: a100, h100, lenient)"),
        "{}",
        r.stderr
    );
}

#[test]
fn invalid_policies_exit_2_with_file_line_and_column() {
    for (text, want) in [
        ("schema: gpudoctor.policy/1\nwaive:\n  - rule: health.pcie\n    reason: y\n    expires: 2026-02-30\n", ":5:14: waive: expires is \"2026-02-30\": expected a date as YYYY-MM-DD"),
        ("schema: gpudoctor.policy/1\nwaive:\n  - rule: health.pcie\n    reason: \"\"\n    expires: 2026-02-03\n", ":3:5: waive: reason is empty: the waiver of health.pcie needs a reason"),
        ("schema: gpudoctor.policy/1\nwaive:\n  - rule: health.pcie\n    reason: y\n", ":4:5: missing field `expires`"),
        ("schema: gpudoctor.policy/1\nseverity:\n  - rule: health.pcie\n    to: fatal\n", ":4:9: severity: to is \"fatal\": expected error, warning or info"),
        ("schema: gpudoctor.policy/1\nwaive:\n  - rule: x\n    reason: y\n    expires: 2026-02-03\n", ":3:11: waive: rule: \"x\" is not a rule id, and no rule id starts with it"),
        ("schema: gpudoctor.policy/1\nthresholds:\n  max_temp: 80\n", ":3:3: unknown field `max_temp`"),
        ("schema: gpudoctor.policy/2\n", ":1:1: schema is \"gpudoctor.policy/2\""),
        ("schema: gpudoctor.policy/1\nclasses:\n  - name: x\n    thresholds: {min_driver: banana}\n", ":3:5: class x: min_driver \"banana\" is not a driver version"),
    ] {
        let (_d, p) = policy(text);
        let r = check(NODRIVER, &p, &[]);
        assert_eq!(r.code, 2, "{text}");
        assert!(r.stderr.contains(&format!("policy.yaml{want}")), "{text}\n{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let r = Run::new()
        .args(["check", "--policy", "/nonexistent/policy.yaml"])
        .run();
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("/nonexistent/policy.yaml: cannot read the policy file"),
        "{}",
        r.stderr
    );
}

#[test]
fn dates_and_globs() {
    use gpudoctor::policy::{days, glob};
    assert_eq!(days("1970-01-01"), Some(0));
    assert_eq!(days("2000-03-01"), Some(11_017));
    assert_eq!(days("2024-02-29"), Some(19_782));
    assert_eq!(days("2023-02-29"), None);
    assert_eq!(days("2024-13-01"), None);
    assert_eq!(days("24-1-1"), None);
    assert!(glob("gpu-h100-*", "GPU-H100-017"));
    assert!(glob("*-h100-*", "rack3-h100-017"));
    assert!(!glob("gpu-h100-*", "gpu-a100-001"));
    assert!(glob("node", "node") && !glob("node", "node2"));
}

/// A policy error quotes the user's file: no terminal escape from its name or text reaches
/// stderr.
#[test]
fn policy_errors_echo_no_terminal_escapes() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("fleet\u{1b}[2J\u{1b}[31m.yaml");
    let r = Run::new()
        .args(["check", "--no-probe", "--policy"])
        .arg_path(&missing)
        .run();
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("cannot read the policy file"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
}
