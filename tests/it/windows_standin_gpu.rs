//! Under Wine (scripts/test-windows.sh): the smoke tests and `stress` of the Windows build end
//! to end through the stand-in driver of crates/standin-cuda built as nvcuda.dll, our PTX run
//! by the PTX interpreter. The host twins' floating-point results must match the kernels' bit
//! for bit on Windows too: with `f32::mul_add`, whose mingw-w64 fmaf is not correctly rounded
//! (under Wine it gives 0x426ad05d for fma_burn's class 0, a GPU 0x426ad214), every fma_burn
//! class failed on every healthy GPU (issue 29 item 1): run with that host twin, this file's
//! fma_burn test saw 1728 errors in 27 launches (64 classes each). smoke_arith's FMA chain
//! happens to agree with mingw's fmaf, so the smoke test alone would not catch it.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{Ran, Run};
use std::path::PathBuf;

/// The folder holding the stand-in nvcuda.dll scripts/test-windows.sh built.
fn driver() -> PathBuf {
    let d = std::env::var("GPUDOCTOR_WIN_STANDINS")
        .map(|d| PathBuf::from(d).join("gpu"))
        .expect("GPUDOCTOR_WIN_STANDINS: run these tests with scripts/test-windows.sh");
    assert!(d.join("nvcuda.dll").is_file(), "{}", d.display());
    d
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let sysroot = std::env::var("SystemRoot").unwrap_or_else(|_| r"C:\windows".to_string());
    let mut r = Run::new()
        .env(
            "PATH",
            format!(r"{sysroot}\system32;{sysroot};{}", driver().display()),
        )
        .args(args);
    for (k, v) in env {
        r = r.env(k, v);
    }
    r.run()
}

/// The smoke tests through nvcuda.dll: smoke_arith's integer and FMA results equal the host's.
#[test]
fn smoke_kernels_match_the_host_on_windows() {
    let ran = run(&["check", "--format", "json", "--timeout", "120"], &[]);
    assert_ne!(ran.code, 2, "{}", ran.stderr);
    let j = ran.json();
    let gpu = &j["snapshot"]["smoke"]["value"]["gpus"][0];
    let steps = gpu["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{:#}", j["snapshot"]["smoke"]));
    let st: Vec<(&str, &str)> = steps
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    for (name, status) in &st[..6] {
        assert_eq!(*status, "passed", "{name}: {gpu:#}");
    }
    assert!(steps[4]["detail"]
        .as_str()
        .unwrap()
        .contains("floating-point results match the host's exactly"));
}

/// fma_burn through nvcuda.dll: each of its 64 classes equals the host's fused twin. (3 s:
/// starting the run under Wine on a busy machine can take most of a second.)
#[test]
fn the_fma_burn_verifies_on_windows() {
    let ran = run(
        &["stress", "--tests", "compute", "--seconds", "3", "--json"],
        &[
            ("STANDIN_MEM_MIB", "4"),
            ("STANDIN_SMS", "1"),
            ("STANDIN_THREADS", "fma_burn:64"),
        ],
    );
    let j = ran.json();
    let g = &j["snapshot"]["stress"]["gpus"][0];
    assert!(
        g["compute_launches"].as_u64().unwrap_or(0) >= 1,
        "{g:#}\n{}",
        ran.stderr
    );
    assert_eq!(g["compute_errors"], 0, "{g:#}");
    assert_eq!(ran.code, 0, "{:#}", j["findings"]);
}
