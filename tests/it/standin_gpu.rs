//! `check` (all eight smoke steps) and `stress` end to end through gpudoctor's own driver-API
//! code (src/gpu/cudadrv.rs, cuda.rs) against the stand-in driver crates/standin-cuda: device
//! memory on the host and our PTX executed by the PTX interpreter. Healthy, it passes; each
//! fault it is told to show (a stuck bit, a failing or hanging launch, out of memory, another
//! process holding the GPU exclusively, a GPU older than the PTX's target) gives the right
//! finding and category.
// Linux: the stand-in is built as an ELF shared object and found through LD_LIBRARY_PATH.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The stand-in, built once per test run with the cargo running the tests.
fn standin() -> &'static Path {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let t = Instant::now();
        let out = Command::new(env!("CARGO"))
            .args(["build", "-p", "standin-cuda", "--message-format=json"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo, to build the stand-in driver");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let so = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["target"]["name"] == "standin_cuda")
            .flat_map(|v| {
                v["filenames"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|f| f.as_str().map(PathBuf::from))
            })
            .find(|f| f.extension().is_some_and(|e| e == "so"))
            .expect("the stand-in's .so among cargo's artifacts");
        eprintln!("stand-in driver built in {:?}", t.elapsed());
        so
    })
}

/// A directory with the stand-in as libcuda.so.1.
fn driver_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(standin(), d.path().join("libcuda.so.1")).unwrap();
    d
}

fn gpudoctor(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, serde_json::Value, Duration) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.args(args)
        .env("LD_LIBRARY_PATH", dir)
        .env_remove("GPUDOCTOR_POLICY")
        .env_remove("GPUDOCTOR_SIM_GPUS");
    for (k, v) in env {
        c.env(k, v);
    }
    common::json_output(c)
}

fn check(env: &[(&str, &str)], timeout: &str) -> (serde_json::Value, Duration) {
    let d = driver_dir();
    let (_, v, took) = gpudoctor(
        d.path(),
        &["check", "--format", "json", "--timeout", timeout],
        env,
    );
    (v, took)
}

fn steps(v: &serde_json::Value) -> Vec<(String, String)> {
    v["snapshot"]["smoke"]["value"]["gpus"][0]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no smoke steps: {:#}", v["snapshot"]["smoke"]))
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn smoke_finding(v: &serde_json::Value) -> serde_json::Value {
    common::finding(v, "smoke.failed").clone()
}

/// Healthy: every smoke step that needs only the driver passes, through cuInit, the primary
/// context, cuMemAlloc/copies, pinned copies, cuModuleLoadDataEx of our PTX, cuLaunchKernel
/// (the interpreter runs smoke_arith and copy_v4) and events; the results are verified on the
/// host as on a GPU. cuBLAS is absent, so the SGEMM step is skipped with why.
#[test]
fn check_passes_on_a_healthy_standin_gpu() {
    let (v, took) = check(&[], "60");
    let st = steps(&v);
    let names: Vec<&str> = st.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, gpudoctor::gpu::smoke::STEPS);
    for (name, status) in &st[..6] {
        assert_eq!(status, "passed", "{name}: {:#}", v["snapshot"]["smoke"]);
    }
    assert_eq!(st[6], ("sgemm".to_string(), "skipped".to_string()));
    let gpu = &v["snapshot"]["smoke"]["value"]["gpus"][0];
    assert_eq!(gpu["name"], "NVIDIA H100 80GB HBM3 (stand-in)");
    assert!(gpu["steps"][4]["detail"]
        .as_str()
        .unwrap()
        .contains("1048576 integer and 1048576 floating-point results match the host's exactly"));
    let smoke_findings: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap_or("").starts_with("smoke."))
        .filter(|f| f["rule"] != "smoke.pcie-bandwidth")
        .collect();
    assert!(smoke_findings.is_empty(), "{smoke_findings:#?}");
    eprintln!("check through the stand-in: {took:?}");
}

/// A stuck memory bit: the memory step's read-back differs at offset 400.
#[test]
fn a_stuck_bit_fails_the_memory_step() {
    let (v, _) = check(&[("STANDIN_STUCK_BIT", "1")], "60");
    assert_eq!(steps(&v)[1], ("memory".into(), "failed".into()));
    let f = smoke_finding(&v);
    assert_eq!(f["category"], "smoke_failure", "{f:#}");
    assert!(
        f["detail"].as_str().unwrap().contains("offset 0x190"),
        "{f:#}"
    );
}

/// A kernel launch failing with CUDA_ERROR_ILLEGAL_ADDRESS (700) or CUDA_ERROR_UNKNOWN (999):
/// the kernel step fails naming the code and its category; 700 is sticky, as on a GPU.
#[test]
fn a_failing_launch_is_named() {
    // 700 blames the program, so in gpudoctor's own known-good kernel it is a smoke failure;
    // 999 is the driver's (knowledge/code-categories.yaml, one category per code).
    for (code, category) in [("700", "smoke_failure"), ("999", "driver_fault")] {
        let (v, _) = check(&[("STANDIN_LAUNCH_ERROR", code)], "60");
        assert_eq!(steps(&v)[4], ("kernel".into(), "failed".into()), "{code}");
        let f = smoke_finding(&v);
        assert_eq!(f["category"], category, "{f:#}");
        assert_eq!(
            f["evidence"]["error"]["code"].as_i64(),
            Some(code.parse().unwrap()),
            "{f:#}"
        );
        assert_eq!(f["evidence"]["error"]["call"], "cuLaunchKernel", "{f:#}");
    }
    let (v, _) = check(&[("STANDIN_LAUNCH_ERROR", "700")], "60");
    assert!(smoke_finding(&v)["detail"]
        .as_str()
        .unwrap()
        .contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
}

/// A launch that never returns: the report still comes by --timeout, naming the kernel step.
#[test]
fn a_hanging_launch_keeps_the_deadline() {
    let (v, took) = check(&[("STANDIN_LAUNCH", "hang")], "4");
    assert!(took < Duration::from_millis(5500), "took {took:?}");
    let text = v["snapshot"]["smoke"].to_string();
    assert!(text.contains("kernel"), "{text}");
    let f = smoke_finding(&v);
    assert_eq!(f["category"], "smoke_failure", "{f:#}");
}

/// Out of memory at the first allocation: gpu_memory_exhausted.
#[test]
fn out_of_memory_is_gpu_memory_exhausted() {
    let (v, _) = check(&[("STANDIN_ALLOC_LIMIT_MIB", "1")], "60");
    assert_eq!(steps(&v)[1], ("memory".into(), "failed".into()));
    let f = smoke_finding(&v);
    assert_eq!(f["category"], "gpu_memory_exhausted", "{f:#}");
}

/// Another process holds the GPU in EXCLUSIVE_PROCESS mode: the context step fails with
/// CUDA_ERROR_DEVICE_UNAVAILABLE (46).
#[test]
fn a_gpu_held_exclusively_elsewhere_fails_its_context() {
    let d = tempfile::tempdir().unwrap();
    let lock = d.path().join("exclusive");
    // This test process is alive and not gpudoctor: it "holds" the GPU.
    std::fs::write(&lock, std::process::id().to_string()).unwrap();
    let (v, _) = check(&[("STANDIN_EXCLUSIVE", lock.to_str().unwrap())], "60");
    assert_eq!(steps(&v)[0], ("context".into(), "failed".into()));
    let f = smoke_finding(&v);
    assert_eq!(f["evidence"]["error"]["code"], 46, "{f:#}");
}

/// A compute capability 5.0 GPU (GTX 750 Ti) loads our PTX (.target sm_50) and runs it. The
/// stand-in refuses PTX whose target is newer than the GPU (CUDA_ERROR_NO_BINARY_FOR_GPU,
/// 209), as a driver does, so the old `.target sm_52` failed the module step here (issue 29
/// item 5).
#[test]
fn a_compute_5_0_gpu_runs_our_ptx() {
    let (v, _) = check(&[("STANDIN_CC", "5.0")], "60");
    let st = steps(&v);
    assert_eq!(st[3], ("module".into(), "passed".into()), "{st:?}");
    assert_eq!(st[4], ("kernel".into(), "passed".into()), "{st:?}");
}

fn stress(tests: &str, env: &[(&str, &str)], seconds: &str) -> (i32, serde_json::Value) {
    let d = driver_dir();
    let mut e: Vec<(&str, &str)> = vec![
        ("STANDIN_MEM_MIB", "2"),
        ("STANDIN_SMS", "1"),
        // Each of fma_burn's 64 thread classes once (its 2048 threads take seconds here).
        ("STANDIN_THREADS", "fma_burn:64"),
    ];
    e.extend_from_slice(env);
    let (code, v, _) = gpudoctor(
        d.path(),
        &["stress", "--tests", tests, "--seconds", seconds, "--json"],
        &e,
    );
    (code, v)
}

/// `stress` through the driver API: the memory patterns (a whole round of moving inversions
/// over the stand-in's 2 MiB) and the FMA burn run as PTX in the interpreter; healthy, every
/// result verifies (fma_burn's 64 classes against the host's fused twin).
#[test]
fn stress_passes_on_a_healthy_standin_gpu() {
    // A round is about 30 MB of traffic at some 40 MB/s in the interpreter: 4 s leaves room on
    // a busy CI machine.
    let (code, v) = stress("memory", &[], "4");
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert_eq!(code, 0, "{:#}", v["findings"]);
    assert_eq!(v["verdict"], "pass", "{:#}", v["findings"]);
    assert!(g["memory_rounds"].as_u64().unwrap() >= 1, "{g:#}");
    assert!(g["tested_bytes"].as_u64().unwrap() >= 1 << 20, "{g:#}");
    assert_eq!(g["memory_errors"], 0, "{g:#}");
    let (code, v) = stress("compute", &[], "1");
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert_eq!(code, 0, "{:#}", v["findings"]);
    assert!(g["compute_launches"].as_u64().unwrap() >= 1, "{g:#}");
    assert_eq!(g["compute_errors"], 0, "{g:#}");
}

/// A stuck bit under stress: the memory test finds it at its offset (stress_failure).
#[test]
fn stress_finds_a_stuck_bit() {
    let (code, v) = stress("memory", &[("STANDIN_STUCK_BIT", "1")], "2");
    assert_eq!(code, 1, "{:#}", v["findings"]);
    let f = common::finding(&v, "stress.memory");
    assert_eq!(f["category"], "stress_failure", "{f:#}");
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert!(g["memory_errors"].as_u64().unwrap() > 0, "{g:#}");
    assert_eq!(g["first_memory_errors"][0]["offset"], 400, "{g:#}");
}

/// A launch failing mid-run with CUDA_ERROR_ILLEGAL_ADDRESS (the sixth launch, after the
/// four bandwidth copies and the first fill): the GPU fails with the call and code named.
#[test]
fn stress_names_a_failing_launch() {
    let (code, v) = stress("memory", &[("STANDIN_LAUNCH_ERROR", "700@6")], "2");
    assert_eq!(code, 1, "{:#}", v["findings"]);
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert_eq!(g["failure"]["code"], 700, "{g:#}");
    assert_eq!(g["failure"]["call"], "cuLaunchKernel", "{g:#}");
}

/// A GPU whose FMA units round twice: every fma_burn class differs from the host's fused twin,
/// and the compute test fails the GPU (stress_failure).
#[test]
fn stress_finds_wrong_fma_results() {
    let (code, v) = stress("compute", &[("STANDIN_FMA", "faulty")], "2");
    assert_eq!(code, 1, "{:#}", v["findings"]);
    let g = &v["snapshot"]["stress"]["gpus"][0];
    let launches = g["compute_launches"].as_u64().unwrap();
    assert!(launches >= 1, "{g:#}");
    // 64 threads run (STANDIN_THREADS), one per class, every one wrong.
    assert_eq!(
        g["compute_errors"].as_u64().unwrap(),
        64 * launches,
        "{g:#}"
    );
    let f = common::finding(&v, "stress.compute");
    assert_eq!(f["category"], "stress_failure", "{f:#}");
}

/// A slow but correct GPU (every launch 400 ms late) is not a failing one: every driver step
/// passes within the deadline, and the kernel step's time shows the delay.
#[test]
fn a_slow_launch_passes_and_its_time_shows() {
    let (v, _) = check(&[("STANDIN_LAUNCH", "slow:400")], "60");
    let gpu = &v["snapshot"]["smoke"]["value"]["gpus"][0];
    let kernel = gpu["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "kernel")
        .unwrap();
    assert_eq!(kernel["status"], "passed", "{gpu:#}");
    assert!(kernel["millis"].as_u64().unwrap() >= 400, "{kernel:#}");
    for (name, status) in steps(&v) {
        assert!(
            status == "passed" || status == "skipped",
            "{name}: {status}"
        );
    }
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] != "smoke.failed"),
        "{:#}",
        v["findings"]
    );
}

/// cuMemAlloc out of memory under stress: the GPU stops with the call named, as
/// gpu_memory_exhausted (another process holds the memory), not as a broken GPU.
#[test]
fn stress_out_of_memory_is_gpu_memory_exhausted() {
    let (code, v) = stress("memory", &[("STANDIN_ALLOC_LIMIT_MIB", "0")], "2");
    assert_eq!(code, 1, "{:#}", v["findings"]);
    let g = &v["snapshot"]["stress"]["gpus"][0];
    assert_eq!(g["failure"]["call"], "cuMemAlloc", "{g:#}");
    assert_eq!(g["failure"]["code"], 2, "{g:#}");
    let f = common::finding(&v, "stress.run");
    assert_eq!(f["category"], "gpu_memory_exhausted", "{f:#}");
}
