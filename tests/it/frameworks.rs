//! Framework detection on site-packages trees unpacked from real wheels (tests/fixtures/README.md):
//! torch/version.py of 2.7.1+cu126 and 2.1.0+cu121, TensorFlow 2.16.1's build_info.py,
//! dist-info of torch and the nvidia-* wheels, cudnn_version.h; and one-field variations of them.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{copy_tree, finding, fixtures, Run};
use serde_json::Value;
use std::path::Path;

fn envs(report: &Value) -> Vec<Value> {
    report["snapshot"]["python"]["value"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn env_for<'a>(all: &'a [Value], prefix: &Path) -> &'a Value {
    all.iter()
        .find(|e| e["prefix"].as_str() == Some(&*prefix.to_string_lossy()))
        .unwrap_or_else(|| panic!("no environment {} in {all:#?}", prefix.display()))
}

fn check_with(site: &Path, assume_gpu: bool) -> common::Ran {
    let mut r = Run::new()
        .args(["check", "--format", "json", "--python"])
        .arg_path(site);
    if assume_gpu {
        r = r.args(["--assume", "gpu=H100"]);
    }
    r.run()
}

#[test]
fn torch_2_7_1_cu126_from_version_py_and_dist_info() {
    let site = fixtures().join("site-packages/torch271");
    let r = check_with(&site, false);
    let all = envs(&r.json());
    let e = env_for(&all, &site);
    assert_eq!(e["origin"], "--python");
    assert_eq!(e["torch"]["version"], "2.7.1+cu126");
    assert_eq!(e["torch"]["cuda"], "12.6");
    assert!(e["torch"].get("hip").is_none());
    assert_eq!(
        e["torch"]["git_version"],
        "e2d141dbde55c2a4370fac5165b0561b6af4798b"
    );
    let pkgs: Vec<(String, String)> = e["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().into(),
                p["version"].as_str().unwrap().into(),
            )
        })
        .collect();
    // The dist-info has no local tag (the PyPI wheel's metadata strips it).
    assert!(pkgs.contains(&("torch".into(), "2.7.1".into())), "{pkgs:?}");
    assert!(pkgs.contains(&("nvidia-cuda-runtime-cu12".into(), "12.9.79".into())));
    assert!(pkgs.contains(&("nvidia-cudnn-cu12".into(), "9.1.0.70".into())));
    // A CUDA build on a GPU machine is no CPU-only finding.
    let r = check_with(&site, true);
    assert!(!r.rules().contains(&"framework.cpu-only-build".to_string()));
}

#[test]
fn torch_2_1_0_old_version_py_form() {
    let site = fixtures().join("site-packages/torch210");
    let all = envs(&check_with(&site, false).json());
    let e = env_for(&all, &site);
    assert_eq!(e["torch"]["version"], "2.1.0+cu121");
    assert_eq!(e["torch"]["cuda"], "12.1");
}

#[test]
fn tensorflow_2_16_1_build_info() {
    let site = fixtures().join("site-packages/tf216");
    let all = envs(&check_with(&site, false).json());
    let tf = &env_for(&all, &site)["tensorflow"];
    assert_eq!(tf["package"], "tensorflow");
    assert_eq!(tf["version"], "2.16.1");
    assert_eq!(tf["is_cuda_build"], true);
    assert_eq!(tf["is_rocm_build"], false);
    assert_eq!(tf["cuda_version"], "12.3");
    assert_eq!(tf["cudnn_version"], "8");
    assert_eq!(
        tf["cuda_compute_capabilities"],
        serde_json::json!(["sm_50", "sm_60", "sm_70", "sm_80", "compute_90"])
    );
}

#[test]
fn a_cpu_torch_on_a_gpu_machine_is_an_error_and_without_gpus_nothing() {
    let d = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("site-packages/torch271"), d.path());
    // One-field variation of the real file: the +cpu build's version.py.
    let vp = d.path().join("torch/version.py");
    let text = std::fs::read_to_string(&vp)
        .unwrap()
        .replace("'2.7.1+cu126'", "'2.7.1+cpu'")
        .replace("cuda: Optional[str] = '12.6'", "cuda: Optional[str] = None");
    std::fs::write(&vp, text).unwrap();
    let r = check_with(d.path(), true);
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "framework.cpu-only-build");
    assert_eq!(f["category"], "cpu_only_build");
    assert!(f["title"].as_str().unwrap().contains("2.7.1+cpu"));
    assert!(f["fix"]["commands"][0]
        .as_str()
        .unwrap()
        .contains("download.pytorch.org/whl/cu"));
    // No GPU anywhere: a CPU build is right.
    let r = check_with(d.path(), false);
    assert!(!r.rules().contains(&"framework.cpu-only-build".to_string()));
}

#[test]
fn a_cpu_only_tensorflow_build_is_reported() {
    let d = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("site-packages/tf216"), d.path());
    let bi = d.path().join("tensorflow/python/platform/build_info.py");
    let text = std::fs::read_to_string(&bi)
        .unwrap()
        .replace("('is_cuda_build', True)", "('is_cuda_build', False)");
    std::fs::write(&bi, text).unwrap();
    let r = check_with(d.path(), true);
    let v = r.json();
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "framework.cpu-only-build"
                && f["title"].as_str().unwrap().contains("TensorFlow 2.16.1")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_venv_is_found_through_virtual_env_and_its_interpreter() {
    let d = tempfile::tempdir().unwrap();
    let venv = d.path();
    let sp = venv.join("lib/python3.12/site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    copy_tree(&fixtures().join("site-packages/torch210"), &sp);
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(
        venv.join("pyvenv.cfg"),
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
    )
    .unwrap();
    let r = Run::new()
        .args(["check", "--format", "json"])
        .env("VIRTUAL_ENV", venv)
        .run();
    let all = envs(&r.json());
    let e = env_for(&all, venv);
    assert_eq!(e["kind"], "venv");
    assert_eq!(e["origin"], "VIRTUAL_ENV");
    assert_eq!(e["python_version"], "3.12");
    assert_eq!(e["torch"]["version"], "2.1.0+cu121");
}

#[test]
fn recorded_deep_probe_output_of_a_real_torch_install() {
    // The embedded script's stdout in a venv with torch 2.7.1+cu126 from PyPI, on a machine with
    // no GPU (tests/fixtures/README.md).
    let text =
        std::fs::read_to_string(fixtures().join("deep/torch271-cu126-nogpu.stdout")).unwrap();
    let v = match gpudoctor::probe::python::parse_deep_output(&text).unwrap() {
        gpudoctor::snapshot::Probed::Found { value } => value,
        other => panic!("{other:?}"),
    };
    assert_eq!(v["torch"]["version"], "2.7.1+cu126");
    assert_eq!(v["torch"]["cuda_available"], false);
    assert_eq!(v["torch"]["cudnn"], 90501);
    assert_eq!(
        v["torch"]["arch_list"],
        serde_json::json!(["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"])
    );
}

#[test]
fn tensorflow_2_16_ptx_on_h100_needs_the_cuda_12_3_driver() {
    // The real build_info of TensorFlow 2.16.1 lists sm_50, sm_60, sm_70, sm_80 and compute_90:
    // an H100 (9.0) runs it only by JIT-compiling the CUDA 12.3 PTX, which minor-version
    // compatibility does not cover, so R535 (CUDA 12.2) is too old; 12.3's GA driver is needed.
    let site = fixtures().join("site-packages/tf216");
    let r = Run::new()
        .args([
            "check",
            "--format",
            "json",
            "--assume",
            "driver=535.104.05",
            "--assume",
            "gpu=H100",
            "--python",
        ])
        .arg_path(&site)
        .run();
    let v = r.json();
    let f = finding(&v, "compat.driver-too-old");
    assert_eq!(f["title"], "The driver is too old for tensorflow 2.16.1");
    let detail = f["detail"].as_str().unwrap();
    assert!(detail.contains("JIT-compile its PTX"), "{detail}");
    assert!(
        f["fix"]["text"].as_str().unwrap().contains("545.23.06"),
        "{f}"
    );
    // An A100 has a cubin (sm_80): the same driver is fine through minor-version compatibility.
    let r = Run::new()
        .args([
            "check",
            "--format",
            "json",
            "--assume",
            "driver=535.104.05",
            "--assume",
            "gpu=A100",
            "--python",
        ])
        .arg_path(&site)
        .run();
    assert!(
        !r.rules().contains(&"compat.driver-too-old".to_string()),
        "{}",
        r.stdout
    );
}

/// A venv in target/tmp with torch 2.1.0+cu121's site-packages (the recorded fixture) and a copy
/// of gpudoctor in its bin/, as `pip install gpudoctor` leaves it; `extra` files go in the prefix.
#[cfg(unix)]
fn venv_holding_gpudoctor(extra: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let venv = d.path().join("project/.venv");
    let sp = venv.join("lib/python3.12/site-packages");
    copy_tree(&fixtures().join("site-packages/torch210"), &sp);
    std::fs::write(
        venv.join("pyvenv.cfg"),
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
    )
    .unwrap();
    for f in extra {
        std::fs::write(venv.join(f), "").unwrap();
    }
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    let bin = venv.join("bin/gpudoctor");
    // A hard link where it can (same file system, no 90 MB copy); current_exe() names the link.
    if std::fs::hard_link(env!("CARGO_BIN_EXE_gpudoctor"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_gpudoctor"), &bin).unwrap();
    }
    (d, venv)
}

/// Issue 32: `pip install gpudoctor && gpudoctor check` in a project's venv judges that venv
/// first, activated or not; another environment (VIRTUAL_ENV here) is still listed after it.
#[cfg(unix)]
#[test]
fn the_venv_gpudoctor_is_installed_in_comes_first() {
    let (_d, venv) = venv_holding_gpudoctor(&[]);
    let other = tempfile::tempdir().unwrap();
    let other_sp = other.path().join("lib/python3.11/site-packages");
    copy_tree(&fixtures().join("site-packages/torch271"), &other_sp);
    std::fs::write(other.path().join("pyvenv.cfg"), "version = 3.11.9\n").unwrap();
    let r = common::Run::of(&venv.join("bin/gpudoctor"))
        .args(["check", "--format", "json", "--no-smoke"])
        .env("VIRTUAL_ENV", other.path())
        .run();
    let all = envs(&r.json());
    assert_eq!(
        all[0]["prefix"],
        venv.to_string_lossy().as_ref(),
        "{all:#?}"
    );
    assert_eq!(all[0]["origin"], gpudoctor::probe::python::OWN_ORIGIN);
    assert_eq!(all[0]["kind"], "venv");
    assert_eq!(all[0]["torch"]["version"], "2.1.0+cu121");
    assert_eq!(all[1]["prefix"], other.path().to_string_lossy().as_ref());
    assert_eq!(all[1]["origin"], "VIRTUAL_ENV");
    assert_eq!(all[1]["torch"]["version"], "2.7.1+cu126");

    // Activated too: listed once, as the environment gpudoctor is installed in.
    let r = common::Run::of(&venv.join("bin/gpudoctor"))
        .args(["check", "--format", "json", "--no-smoke"])
        .env("VIRTUAL_ENV", &venv)
        .run();
    let all = envs(&r.json());
    let same: Vec<_> = all
        .iter()
        .filter(|e| e["prefix"] == venv.to_string_lossy().as_ref())
        .collect();
    assert_eq!(same.len(), 1, "{all:#?}");
    assert_eq!(all[0]["origin"], gpudoctor::probe::python::OWN_ORIGIN);

    // --python names what to judge: it stays first.
    let site = fixtures().join("site-packages/torch271");
    let r = common::Run::of(&venv.join("bin/gpudoctor"))
        .args(["check", "--format", "json", "--no-smoke", "--python"])
        .arg_path(&site)
        .run();
    let all = envs(&r.json());
    assert_eq!(all[0]["origin"], "--python");
    assert_eq!(all[1]["prefix"], venv.to_string_lossy().as_ref());
}

/// `uv tool install gpudoctor` (uv-receipt.toml) and pipx (pipx_metadata.json) make an
/// environment for gpudoctor alone: it says nothing about the user's projects and is not listed.
#[cfg(unix)]
#[test]
fn a_tool_environment_holding_only_gpudoctor_is_not_judged() {
    for marker in ["uv-receipt.toml", "pipx_metadata.json"] {
        let (_d, venv) = venv_holding_gpudoctor(&[marker]);
        let r = common::Run::of(&venv.join("bin/gpudoctor"))
            .args(["check", "--format", "json", "--no-smoke"])
            .run();
        let all = envs(&r.json());
        assert!(
            all.iter()
                .all(|e| e["prefix"] != venv.to_string_lossy().as_ref()),
            "{marker}: {all:#?}"
        );
    }
}
