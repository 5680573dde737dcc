//! `gpudoctor recommend`: the newest build of each framework that works with the (assumed)
//! driver and GPUs, with its install command.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::Run;
use serde_json::Value;

fn rec(assume: &[&str]) -> Value {
    let mut r = Run::new().args(["recommend", "--no-probe", "--json"]);
    for a in assume {
        r = r.args(["--assume", a]);
    }
    let ran = r.run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    ran.json()
}

fn pick<'a>(v: &'a Value, fw: &str) -> &'a Value {
    v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["framework"] == fw)
        .unwrap()
}

#[test]
fn blackwell_on_r580() {
    let v = rec(&["driver=580.95.05", "gpu=RTX 5090"]);
    assert_eq!(v["driver_cuda"], "13.0");
    assert_eq!(pick(&v, "torch")["build"], "torch 2.15 +cu132 (CUDA 13.2)");
    assert!(pick(&v, "torch")["command"]
        .as_str()
        .unwrap()
        .ends_with("whl/cu132"));
    assert_eq!(
        pick(&v, "jax")["command"],
        "python -m pip install -U 'jax[cuda13]'"
    );
    assert_eq!(
        pick(&v, "tensorflow")["build"],
        "tensorflow 2.21 (CUDA 12.5, cuDNN 9.3)"
    );
}

#[test]
fn kepler_on_r470() {
    let v = rec(&["driver=470.82.01", "gpu=Tesla K80"]);
    assert_eq!(pick(&v, "torch")["build"], "torch 2.7 +cu118 (CUDA 11.8)");
    assert_eq!(
        pick(&v, "tensorflow")["build"],
        "tensorflow 2.14 (CUDA 11.8, cuDNN 8.7)"
    );
    // JAX's CUDA 12 and 13 wheels need R525 / R580: only a CUDA 11 JAX can run on R470.
    let jax = &pick(&v, "jax")["build"];
    assert!(
        jax.is_null() || jax.as_str().unwrap().starts_with("jax[cuda11]"),
        "{jax}"
    );
    assert_eq!(pick(&v, "torch")["newest_min_driver"], "580");
}

#[test]
fn pascal_keeps_cuda_12_builds() {
    let v = rec(&["driver=580.95.05", "gpu=GTX 1080"]);
    assert_eq!(pick(&v, "torch")["build"], "torch 2.14 +cu126 (CUDA 12.6)");
    assert_eq!(
        pick(&v, "jax")["command"],
        "python -m pip install -U 'jax[cuda12]'"
    );
}

#[test]
fn native_windows() {
    let v = rec(&["os=windows", "driver=551.61", "gpu=RTX 3070"]);
    assert_eq!(
        pick(&v, "tensorflow")["build"],
        "tensorflow 2.10 (CUDA 11.2, cuDNN 8.1)"
    );
    assert!(pick(&v, "jax")["build"].is_null());
    assert!(pick(&v, "jax")["note"].as_str().unwrap().contains("WSL2"));
}

#[test]
fn one_framework_and_human_output() {
    let v = rec(&["driver=535.104.05", "gpu=A100"]);
    assert_eq!(v["recommendations"].as_array().unwrap().len(), 3);
    let r = Run::new()
        .args([
            "recommend",
            "--no-probe",
            "--framework",
            "jax",
            "--assume",
            "driver=535.104.05",
            "--assume",
            "gpu=A100",
        ])
        .run();
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("[✓] jax: jax[cuda12]"), "{}", r.stdout);
    assert!(!r.stdout.contains("torch"));
    let r = Run::new()
        .args(["recommend", "--no-probe", "--assume", "driver=bad"])
        .run();
    assert_eq!(r.code, 2);
}

use common::agree;

/// The combinations of this file, for the agreement tests.
const CASES: &[&[&str]] = &[
    &["driver=580.95.05", "gpu=RTX 5090"],
    &["driver=470.82.01", "gpu=Tesla K80"],
    &["driver=580.95.05", "gpu=GTX 1080"],
    &["os=windows", "driver=551.61", "gpu=RTX 3070"],
    &["driver=535.104.05", "gpu=A100"],
    &["driver=550.54.15", "gpu=RTX 5090"],
    &["driver=580.95.05", "gpu=Tesla K80"],
    &["driver=418.39", "gpu=T4"],
    &["driver=535.104.05", "gpu=H100", "cudnn=8.9.7"],
    &["gpu=H100"],
];

fn errors_of(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| format!("{}: {}", f["rule"], f["title"]))
        .collect()
}

fn check_json(facts: &[String]) -> Value {
    let mut r = Run::new().args(["check", "--no-probe", "--format", "json"]);
    for a in facts {
        r = r.args(["--assume", a]);
    }
    r.run().json()
}

/// Issue 16: `recommend --assume driver=550.54.15 --assume gpu="RTX 5090"` named torch 2.11
/// +cu128 while `check` on the same facts said the driver is too old for the GPU. Nothing can
/// run until the driver changes: that comes first, with the driver to install.
#[test]
fn a_gpu_newer_than_the_driver_is_said_first_with_the_driver_to_install() {
    let v = rec(&["driver=550.54.15", "gpu=RTX 5090"]);
    let b = v["blockers"].as_array().unwrap();
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(b[0]["category"], "driver_too_old");
    assert_eq!(b[0]["gpu"], 0);
    for fw in ["torch", "tensorflow", "jax"] {
        let r = pick(&v, fw);
        assert_eq!(r["works"], false, "{fw}");
        assert!(r["build"].is_null() && r["command"].is_null(), "{fw}");
        // The RTX 5090 (compute 12.0) first appears in CUDA 12.8, whose GA driver is 570.26.
        assert_eq!(r["driver_needed"]["driver"], "570.26", "{fw}");
        assert_eq!(r["driver_needed"]["change"], "upgrade");
        assert!(r["driver_needed"]["command"]
            .as_str()
            .unwrap()
            .contains("pip install"));
    }
    // check agrees: it fails on these facts, and passes the named build with the named driver.
    let facts = vec!["driver=550.54.15".to_string(), "gpu=RTX 5090".to_string()];
    assert!(!errors_of(&check_json(&facts)).is_empty());
    let mut then = vec!["driver=570.26".to_string(), "gpu=RTX 5090".to_string()];
    for a in pick(&v, "torch")["driver_needed"]["assume"]
        .as_array()
        .unwrap()
    {
        then.push(a.as_str().unwrap().to_string());
    }
    assert_eq!(
        errors_of(&check_json(&then)),
        Vec::<String>::new(),
        "{then:?}"
    );

    let human = Run::new()
        .args([
            "recommend",
            "--no-probe",
            "--assume",
            "driver=550.54.15",
            "--assume",
            "gpu=RTX 5090",
        ])
        .run();
    assert_eq!(human.code, 0);
    let out = &human.stdout;
    let first = out.find("Nothing can run").unwrap();
    assert!(first < out.find("torch").unwrap(), "{out}");
    assert!(out.contains("With driver 570.26 or newer"), "{out}");
    assert!(!out.contains("[✓]"), "{out}");
}

/// A GPU that later driver branches dropped: the driver to install is an older branch.
#[test]
fn kepler_on_r580_needs_the_r470_branch() {
    let v = rec(&["driver=580.95.05", "gpu=Tesla K80"]);
    assert_eq!(v["blockers"][0]["category"], "arch_unsupported");
    let n = &pick(&v, "torch")["driver_needed"];
    assert_eq!(n["branch"], 470, "{n}");
    assert_eq!(n["change"], "downgrade");
}

#[test]
fn recommend_agrees_with_check_on_these_cases_and_the_combinations_file() {
    let mut tally = agree::Tally::default();
    let mut failures = Vec::new();
    for facts in CASES {
        failures.extend(agree::disagreements(&facts.join(" "), facts, &mut tally));
    }
    let file = agree::combinations_file();
    for (name, facts) in &file {
        let facts: Vec<&str> = facts.iter().map(String::as_str).collect();
        failures.extend(agree::disagreements(name, &facts, &mut tally));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        tally.recommended >= 15 && tally.driver_needed >= 4,
        "{tally:?}"
    );
}

/// The same through the binaries: each build `recommend --json` names, given to `check
/// --no-probe` as its `assume` list, adds no error.
#[test]
fn recommended_builds_pass_check_through_the_binaries() {
    let mut judged = 0;
    for facts in CASES {
        let v = rec(facts);
        let facts: Vec<String> = facts.iter().map(|s| s.to_string()).collect();
        let before = errors_of(&check_json(&facts));
        for r in v["recommendations"].as_array().unwrap() {
            let Some(k) = r["assume"].as_array().filter(|a| !a.is_empty()) else {
                continue;
            };
            let mut with = facts.clone();
            with.extend(k.iter().map(|a| a.as_str().unwrap().to_string()));
            let after = errors_of(&check_json(&with));
            let added: Vec<_> = after.iter().filter(|e| !before.contains(e)).collect();
            assert!(added.is_empty(), "{with:?}: {added:?}");
            judged += 1;
        }
    }
    assert!(judged >= 15, "{judged}");
}
