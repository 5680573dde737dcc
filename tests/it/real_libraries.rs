//! Probes on real NVIDIA libraries from PyPI (scripts/test-setup.sh): the libcudart of
//! nvidia-cuda-runtime-cu12 and of the CUDA 13 nvidia-cuda-runtime, and cuDNN 9's libcudnn.
//! Versions come from the libraries themselves (cudaRuntimeGetVersion, cudnnGetVersion) and are
//! checked against the pip packages' own metadata.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{finding, test_venv, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn site(venv: &Path) -> PathBuf {
    venv.join("lib/python3.11/site-packages")
}

/// The version of a dist-info in the venv ("12.9.79").
fn dist_version(venv: &Path, prefix: &str) -> String {
    let name = std::fs::read_dir(site(venv))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(prefix) && n.ends_with(".dist-info"))
        .unwrap_or_else(|| panic!("no {prefix}*.dist-info in the test venv"));
    name.trim_end_matches(".dist-info")
        .rsplit('-')
        .next()
        .unwrap()
        .to_string()
}

/// "12.9.79" → 12090, the cudaRuntimeGetVersion encoding.
fn api_of(v: &str) -> i64 {
    let mut it = v.split('.').map(|p| p.parse::<i64>().unwrap());
    let (maj, min) = (it.next().unwrap(), it.next().unwrap());
    maj * 1000 + min * 10
}

fn runtimes(report: &Value) -> Vec<Value> {
    report["snapshot"]["cuda"]["runtimes"]["value"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn finds_both_pip_cuda_runtimes_with_their_real_versions() {
    let Some(venv) = test_venv() else { return };
    both_runtimes_with_versions(&venv, &venv);
}

/// A venv reached through a symlink (CI caches and shared clusters make them): the libraries'
/// resolved paths still belong to its site-packages, so their pip versions are found (they were
/// not: full_version was missing).
#[cfg(unix)]
#[test]
fn a_venv_reached_through_a_symlink_keeps_the_pip_versions() {
    let Some(venv) = test_venv() else { return };
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("venv-link");
    std::os::unix::fs::symlink(std::fs::canonicalize(&venv).unwrap(), &link).unwrap();
    both_runtimes_with_versions(&link, &venv);
}

/// `check` with VIRTUAL_ENV=`env` finds libcudart 12 and 13 of the test venv (`venv`, where the
/// dist-infos are read from) with their real versions.
fn both_runtimes_with_versions(env: &std::path::Path, venv: &std::path::Path) {
    let venv = venv.to_path_buf();
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("VIRTUAL_ENV", env)
        .run();
    let v = r.json();
    let rts = runtimes(&v);
    let v12 = dist_version(&venv, "nvidia_cuda_runtime_cu12-");
    let v13 = dist_version(&venv, "nvidia_cuda_runtime-");
    for (suffix, version, major) in [
        ("nvidia/cuda_runtime/lib/libcudart.so.12", &v12, 12),
        ("nvidia/cu13/lib/libcudart.so.13", &v13, 13),
    ] {
        let rt = rts
            .iter()
            .find(|x| x["path"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("no runtime at *{suffix} in {rts:#?}"));
        assert_eq!(rt["api_version"]["status"], "found", "{rt}");
        assert_eq!(
            rt["api_version"]["value"].as_i64().unwrap(),
            api_of(version),
            "{rt}"
        );
        assert_eq!(rt["soname_major"], major);
        assert_eq!(rt["full_version"].as_str().unwrap(), version.as_str());
        assert_eq!(rt["on_search_path"], false);
        assert!(rt["origins"][0].as_str().unwrap().starts_with("pip "));
    }
    // pip copies loaded by RPATH are no conflict.
    assert!(!r.rules().contains(&"libs.path-conflict".to_string()));
}

#[test]
fn library_path_conflict_fires_when_both_majors_are_on_ld_library_path() {
    let Some(venv) = test_venv() else { return };
    let sp = site(&venv);
    let ld = format!(
        "{}:{}",
        sp.join("nvidia/cuda_runtime/lib").display(),
        sp.join("nvidia/cu13/lib").display()
    );
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("LD_LIBRARY_PATH", &ld)
        .run();
    let v = r.json();
    let f = finding(&v, "libs.path-conflict");
    assert_eq!(f["category"], "library_path_conflict");
    assert_eq!(f["evidence"]["majors"], serde_json::json!([12, 13]));
    for rt in runtimes(&v) {
        assert_eq!(rt["on_search_path"], true, "{rt}");
        assert_eq!(rt["origins"][0], "LD_LIBRARY_PATH");
    }
    // One major alone is fine.
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("LD_LIBRARY_PATH", sp.join("nvidia/cu13/lib"))
        .run();
    assert!(
        !r.rules().contains(&"libs.path-conflict".to_string()),
        "{}",
        r.stdout
    );
}

#[test]
fn cudnn_9_version_from_the_library_and_its_header() {
    let Some(venv) = test_venv() else { return };
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("LD_LIBRARY_PATH", venv.join("cudnn9/lib"))
        .run();
    let v = r.json();
    let libs = v["snapshot"]["cudnn"]["value"].as_array().unwrap();
    assert_eq!(libs.len(), 1, "{libs:#?}");
    let c = &libs[0];
    // cudnnGetVersion() of 9.1.0.70 returns 90100: the 9.x encoding (major*10000 + …).
    assert_eq!(c["raw_version"], 90100);
    assert_eq!(c["version"]["value"], "9.1.0");
    assert_eq!(c["full_version"], "9.1.0", "from cudnn_version.h beside it");
    assert_eq!(c["soname_major"], 9);
    assert!(!r.rules().contains(&"libs.unloadable".to_string()));
}

#[test]
fn a_cudnn_that_aborts_when_loaded_is_a_finding_not_a_crash() {
    let Some(venv) = test_venv() else { return };
    // libcudnn.so.9 without libcudnn_graph.so.9: cudnnGetVersion calls abort().
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("LD_LIBRARY_PATH", venv.join("cudnn9-broken/lib"))
        .run();
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "libs.unloadable");
    assert_eq!(f["severity"], "error", "it is on the search path");
    assert_eq!(f["category"], "cudnn_mismatch");
    let err = f["evidence"]["error"].as_str().unwrap();
    assert!(err.contains("SIGABRT"), "{err}");
    assert!(err.contains("libcudnn_graph"), "{err}");
    // The header still gives the version.
    assert_eq!(v["snapshot"]["cudnn"]["value"][0]["full_version"], "9.1.0");
}

#[test]
fn deep_probe_runs_the_embedded_script_in_a_real_interpreter() {
    let Some(venv) = test_venv() else { return };
    let r = Run::new()
        .args(["check", "--deep", "--format", "json"])
        .env("VIRTUAL_ENV", &venv)
        .run();
    let v = r.json();
    let envs = v["snapshot"]["python"]["value"].as_array().unwrap();
    let e = envs
        .iter()
        .find(|e| e["origin"] == "VIRTUAL_ENV")
        .unwrap_or_else(|| panic!("{envs:#?}"));
    let deep = &e["deep"];
    assert_eq!(deep["status"], "found", "{deep}");
    assert_eq!(deep["value"]["result"], "success");
    assert!(deep["value"]["python"].as_str().unwrap().starts_with("3."));
    // No framework in this venv: each is reported as absent (null), not as an error.
    assert!(deep["value"]["torch"].is_null(), "{deep}");
    assert!(deep["value"]["tensorflow"].is_null());
}

#[test]
fn a_hanging_interpreter_is_cut_off_at_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(d.path().join("lib/python3.11/site-packages")).unwrap();
    let py = bin.join("python3");
    common::write_script(&py, "#!/bin/sh\nexec sleep 60\n");
    let t = std::time::Instant::now();
    let r = Run::new()
        .args([
            "check",
            "--deep",
            "--timeout",
            "1.5",
            "--format",
            "json",
            "--python",
        ])
        .arg_path(&py)
        .run();
    let took = t.elapsed();
    assert!(took < std::time::Duration::from_secs(6), "took {took:?}");
    let v = r.json();
    let e = v["snapshot"]["python"]["value"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["origin"] == "--python")
        .cloned()
        .unwrap();
    assert_eq!(e["deep"]["status"], "failed", "{e}");
    assert_eq!(e["deep"]["code"], "timeout");
}
