//! `gpudoctor recommend`: the newest build of each framework that works with the (assumed)
//! driver and GPUs, with its install command.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

mod common;
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
    assert!(
        pick(&v, "jax")["build"].is_null(),
        "no current JAX wheel runs on R470"
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
