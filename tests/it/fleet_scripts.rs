//! The fleet scripts: the provisioning gate (reports, one-line reason, exit codes), the
//! node-problem-detector plugin (NPD's protocol), and the Kubernetes manifests, validated by
//! kubernetes-validate with its bundled API schemas. The Slurm health check is tested against a
//! real Slurm by scripts/test-slurm.sh (.ci/run runs it).
// Linux only: the fleet scripts are shell scripts for Linux nodes.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;
use common::root;

use std::path::Path;
use std::process::Command;

fn snap(name: &str) -> String {
    common::snapshot_fixture(name)
        .to_string_lossy()
        .into_owned()
}

fn script(rel: &str) -> Command {
    let mut c = Command::new(root().join(rel));
    c.env("GPUDOCTOR", env!("CARGO_BIN_EXE_gpudoctor"))
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .env_remove("GPUDOCTOR_POLICY");
    c
}

fn gate(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let mut c = script("scripts/provision-gate.sh");
    c.args(["--report-dir"])
        .arg(dir)
        .args(["--minutes", "0.02"])
        .args(args);
    for (k, v) in extra_env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn valid_junit(path: &Path) {
    if Command::new("xmllint").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "xmllint is missing");
        return;
    }
    let xsd = common::fixtures().join("junit/junit.xsd");
    let o = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&xsd)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_gate_passes_a_fit_machine_and_writes_its_reports() {
    let d = tempfile::tempdir().unwrap();
    let (rc, out) = gate(
        d.path(),
        &[("GPUDOCTOR_SIM_GPUS", "1")],
        &["--", "--snapshot", &snap("synthetic-2xh100.json")],
    );
    assert_eq!(
        (rc, out.trim()),
        (0, "FIT: check and 0.02-minute stress passed")
    );
    for f in [
        "check.json",
        "check.xml",
        "stress.json",
        "stress.xml",
        "gate.txt",
    ] {
        assert!(d.path().join(f).exists(), "{f}");
    }
    let stress: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("stress.json")).unwrap())
            .unwrap();
    assert_eq!(stress["verdict"], "pass");
    valid_junit(&d.path().join("check.xml"));
    valid_junit(&d.path().join("stress.xml"));
    assert_eq!(
        std::fs::read_to_string(d.path().join("gate.txt")).unwrap(),
        out
    );
}

#[test]
fn the_gate_fails_an_unfit_machine_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    // Check fails: stress does not run.
    let (rc, out) = gate(
        d.path(),
        &[],
        &["--", "--snapshot", &snap("debian12-docker-nodriver.json")],
    );
    assert_eq!(rc, 1);
    assert_eq!(out.trim(), "UNFIT (check): FAIL: This container was started without GPU access; No NVIDIA driver found");
    assert!(!d.path().join("stress.json").exists());
    let xml = std::fs::read_to_string(d.path().join("check.xml")).unwrap();
    assert!(xml.contains("<failure message=\"No NVIDIA driver found\" type=\"driver_missing\">"));
    // Check passes, stress finds a stuck bit.
    let d = tempfile::tempdir().unwrap();
    let (rc, out) = gate(
        d.path(),
        &[
            ("GPUDOCTOR_SIM_GPUS", "1"),
            ("GPUDOCTOR_SIM_FAULTS", "stuck-bit"),
        ],
        &["--", "--snapshot", &snap("synthetic-2xh100.json")],
    );
    assert_eq!(rc, 1, "{out}");
    assert!(
        out.starts_with("UNFIT (stress): FAIL: GPU 0 (gpudoctor simulated GPU): "),
        "{out}"
    );
    assert!(out.contains("memory word(s) read back wrong"), "{out}");
    let xml = std::fs::read_to_string(d.path().join("stress.xml")).unwrap();
    assert!(xml.contains("type=\"stress_failure\""), "{xml}");
}

#[test]
fn the_gate_says_when_gpudoctor_itself_failed() {
    let d = tempfile::tempdir().unwrap();
    let (rc, out) = gate(d.path(), &[], &["--policy", "/nonexistent/policy.yaml"]);
    assert_eq!(rc, 2);
    assert!(out.starts_with("ERROR: gpudoctor check failed (exit 2): gpudoctor: error: /nonexistent/policy.yaml: cannot read"), "{out}");
    let o = script("scripts/provision-gate.sh")
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = script("scripts/provision-gate.sh")
        .env("GPUDOCTOR", "/nonexistent/gpudoctor")
        .arg("--report-dir")
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

fn npd(snapshot: &str) -> (i32, String) {
    let o = script("scripts/k8s/gpudoctor-npd.sh")
        .env("GPUDOCTOR_CHECK_ARGS", format!("--snapshot {snapshot}"))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn the_npd_plugin_speaks_npd() {
    let (rc, msg) = npd(&snap("synthetic-2xh100.json"));
    assert_eq!((rc, msg.as_str()), (0, "gpudoctor: GPUs healthy"));
    let (rc, msg) = npd(&snap("debian12-docker-nodriver.json"));
    assert_eq!(rc, 1);
    assert_eq!(
        msg.chars().count(),
        80,
        "cut to NPD's 80 characters: {msg:?}"
    );
    assert!(
        msg.starts_with("gpudoctor: This container was started without GPU access; No NVIDIA"),
        "{msg}"
    );
    let (rc, msg) = npd("/nonexistent.json");
    assert_eq!((rc, msg.as_str()), (2, "gpudoctor failed to run (exit 2)"));
}

#[test]
fn the_configmap_carries_the_same_plugin() {
    let cm =
        std::fs::read_to_string(root().join("scripts/k8s/node-problem-detector-gpudoctor.yaml"))
            .unwrap();
    let script = std::fs::read_to_string(root().join("scripts/k8s/gpudoctor-npd.sh")).unwrap();
    // Every command line of the script (not its comments) is in the ConfigMap's copy.
    for line in script
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        assert!(
            cm.contains(&format!("    {line}")),
            "the ConfigMap lacks: {line}"
        );
    }
    // The monitor config is JSON that points at the mounted script, with NPD's output limit.
    let start = cm.find("gpudoctor-monitor.json: |").unwrap();
    let body: String = cm[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| &l[4..])
        .collect::<Vec<_>>()
        .join("\n");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["plugin"], "custom");
    assert_eq!(v["pluginConfig"]["max_output_length"], 80);
    assert_eq!(v["rules"][0]["path"], "/config/gpudoctor/gpudoctor-npd.sh");
    assert_eq!(v["rules"][0]["condition"], v["conditions"][0]["type"]);
}

#[test]
fn the_manifests_are_valid_kubernetes() {
    let Some(venv) = common::test_venv() else {
        panic!("run scripts/test-setup.sh first")
    };
    let kv = venv.join("bin/kubernetes-validate");
    let files = [
        "scripts/k8s/node-problem-detector-gpudoctor.yaml",
        "scripts/k8s/gpudoctor-daemonset.yaml",
    ];
    for f in files {
        let o = Command::new(&kv)
            .args(["--strict", "-k", "1.30.0"])
            .arg(root().join(f))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{f}: {text}");
        assert!(text.contains("passed"), "{f}: {text}");
    }
    // The validator rejects a mistake (a misspelt field), so its "passed" means something.
    let d = tempfile::tempdir().unwrap();
    let bad = std::fs::read_to_string(root().join(files[1]))
        .unwrap()
        .replace("nodeSelector:", "nodeSelectr:");
    let p = d.path().join("bad.yaml");
    std::fs::write(&p, bad).unwrap();
    let o = Command::new(&kv)
        .args(["--strict", "-k", "1.30.0"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!o.status.success());
}
