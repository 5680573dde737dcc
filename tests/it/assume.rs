//! `--assume KEY=VALUE`: each key of design.md changes the evaluated snapshot as documented;
//! `--no-probe` leaves only assumed facts; `snapshot` → `check --snapshot` gives the same findings.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{has_driver, Ran, Run};
use serde_json::Value;

fn assume(pairs: &[&str]) -> Ran {
    let mut r = Run::new().args(["check", "--no-probe", "--format", "json"]);
    for p in pairs {
        r = r.args(["--assume", p]);
    }
    r.run()
}

fn snap(pairs: &[&str]) -> Value {
    let r = assume(pairs);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    r.json()["snapshot"].clone()
}

#[test]
fn no_probe_alone_knows_nothing_and_judges_nothing() {
    let r = assume(&[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.rules().is_empty());
    let s = &r.json()["snapshot"];
    assert_eq!(s["driver"]["kernel_module"]["code"], "not_probed");
    assert_eq!(s["gpus"]["code"], "not_probed");
}

#[test]
fn driver_and_driver_cuda() {
    let s = snap(&["driver=535.104.05"]);
    assert_eq!(
        s["driver"]["kernel_module"]["value"]["version"],
        "535.104.05"
    );
    assert_eq!(s["driver"]["nvml"]["value"]["driver_version"], "535.104.05");
    assert_eq!(
        s["driver"]["libcuda"]["value"]["file_version"],
        "535.104.05"
    );
    let s = snap(&["driver.cuda=11.4"]);
    assert_eq!(s["driver"]["nvml"]["value"]["cuda_driver_version"], 11040);
    assert_eq!(
        s["driver"]["libcuda"]["value"]["cuda_driver_version"],
        11040
    );
    // The error message's form "found version 11040" works too.
    let s = snap(&["driver=470.82.01", "driver.cuda=11040"]);
    assert_eq!(s["driver"]["nvml"]["value"]["cuda_driver_version"], 11040);
    assert_eq!(s["driver"]["nvml"]["value"]["driver_version"], "470.82.01");
    assert_eq!(s["assumed"][1]["key"], "driver.cuda");
}

#[test]
fn gpu_by_model_and_by_compute_capability() {
    for (model, cc) in [
        ("Tesla K80", "3.7"),
        ("RTX 3070", "8.6"),
        ("H100", "9.0"),
        ("A100-SXM4-80GB", "8.0"),
    ] {
        let s = snap(&[&format!("gpu={model}")]);
        assert_eq!(s["gpus"]["value"][0]["name"]["value"], model);
        assert_eq!(
            s["gpus"]["value"][0]["compute_capability"]["value"], cc,
            "{model}"
        );
    }
    let s = snap(&["gpu=RTX 3070", "gpu.cc=8.9"]);
    assert_eq!(s["gpus"]["value"][0]["compute_capability"]["value"], "8.9");
    let s = snap(&["gpu.cc=12.0"]);
    assert_eq!(s["gpus"]["value"][0]["compute_capability"]["value"], "12.0");
    let r = assume(&["gpu=Voodoo 5 6000"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("gpu.cc"), "{}", r.stderr);
    assert_eq!(assume(&["gpu.cc=eight"]).code, 2);
}

#[test]
fn cuda_and_cudnn() {
    let s = snap(&["cuda=12.1"]);
    assert_eq!(s["cuda"]["assumed_version"], "12.1");
    assert_eq!(
        s["cuda"]["runtimes"]["value"][0]["api_version"]["value"],
        12010
    );
    let s = snap(&["cudnn=8.9.7"]);
    assert_eq!(s["cudnn"]["value"][0]["version"]["value"], "8.9.7");
    assert_eq!(s["cudnn"]["value"][0]["raw_version"], 8907);
    let s = snap(&["cudnn=9.1.0"]);
    assert_eq!(s["cudnn"]["value"][0]["raw_version"], 90100);
    assert_eq!(assume(&["cudnn=nine"]).code, 2);
}

#[test]
fn frameworks() {
    let s = snap(&["torch=2.1.0+cu121"]);
    let env = &s["python"]["value"][0];
    assert_eq!(env["torch"]["version"], "2.1.0+cu121");
    assert_eq!(env["torch"]["cuda"], "12.1");
    let s = snap(&["torch=1.13.1+cu117.with.pypi.cudnn"]);
    assert_eq!(s["python"]["value"][0]["torch"]["cuda"], "11.7");
    let s = snap(&["tensorflow=2.16.1"]);
    assert_eq!(s["python"]["value"][0]["tensorflow"]["version"], "2.16.1");
    let s = snap(&["jax=0.4.30", "jax.cuda=12"]);
    let names: Vec<&str> = s["python"]["value"][0]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["jax", "jax-cuda12-pjrt", "jax-cuda12-plugin", "jaxlib"]
    );
    let s = snap(&["jaxlib=0.4.29"]);
    assert_eq!(s["python"]["value"][0]["packages"][0]["version"], "0.4.29");
    assert_eq!(assume(&["jax.cuda=7"]).code, 2);
    assert_eq!(assume(&["torch=banana"]).code, 2);
}

#[test]
fn a_cpu_torch_with_an_assumed_gpu_is_an_error() {
    let r = assume(&["torch=2.3.0+cpu", "gpu=RTX 3070"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.rules(), vec!["framework.cpu-only-build"]);
    // Without a GPU it is what the user wants.
    assert!(assume(&["torch=2.3.0+cpu"]).rules().is_empty());
}

#[test]
fn os_and_container() {
    let s = snap(&["os=wsl"]);
    assert_eq!(s["host"]["value"]["os"], "wsl");
    assert_eq!(s["host"]["value"]["wsl"], true);
    let s = snap(&["os=windows"]);
    assert_eq!(s["host"]["value"]["os"], "windows");
    let s = snap(&["container=true"]);
    assert_eq!(s["host"]["value"]["container"], "container");
    let s = snap(&["container=true", "container=false"]);
    assert!(s["host"]["value"].get("container").is_none());
    assert_eq!(assume(&["os=beos"]).code, 2);
    assert_eq!(assume(&["container=maybe"]).code, 2);
}

#[test]
fn assume_overrides_a_probed_fact() {
    // On this machine the driver is missing; assuming one clears driver.missing.
    if has_driver() {
        return;
    }
    let probed = Run::new()
        .args(["check", "--format", "json", "--skip", "container"])
        .run();
    assert!(probed.rules().contains(&"driver.missing".to_string()));
    let assumed = Run::new()
        .args([
            "check",
            "--format",
            "json",
            "--skip",
            "container",
            "--assume",
            "driver=580.95.05",
        ])
        .run();
    assert!(
        !assumed.rules().contains(&"driver.missing".to_string()),
        "{}",
        assumed.stdout
    );
}

#[test]
fn snapshot_then_check_snapshot_gives_the_same_findings() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("snap.json");
    let r = Run::new().args(["snapshot", "-o"]).arg_path(&p).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let live = Run::new().args(["check", "--format", "json"]).run();
    let replay = Run::new()
        .args(["check", "--format", "json", "--snapshot"])
        .arg_path(&p)
        .run();
    assert_eq!(live.code, replay.code);
    let strip = |v: Value| -> Vec<Value> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let mut f = f.clone();
                // Probe timings differ between runs.
                if f["rule"] == "probe.timeout" {
                    f["evidence"] = Value::Null;
                }
                f
            })
            .collect()
    };
    assert_eq!(strip(live.json()), strip(replay.json()));
    // A whole report is accepted as a snapshot too.
    let rp = d.path().join("report.json");
    std::fs::write(&rp, &live.stdout).unwrap();
    let again = Run::new()
        .args(["check", "--format", "json", "--snapshot"])
        .arg_path(&rp)
        .run();
    assert_eq!(strip(again.json()), strip(live.json()));
}

#[test]
fn redaction_removes_uuids_and_the_home_directory() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("alice");
    let venv = home.join("venv");
    std::fs::create_dir_all(venv.join("lib/python3.11/site-packages/torch")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "version = 3.11.7\n").unwrap();
    std::fs::write(
        venv.join("lib/python3.11/site-packages/torch/version.py"),
        "__version__ = '2.7.1+cu126'\ncuda = '12.6'\n",
    )
    .unwrap();
    let r = Run::new()
        .args(["snapshot", "--redact"])
        .env("HOME", &home)
        .env("VIRTUAL_ENV", &venv)
        .run();
    assert_eq!(r.code, 0);
    assert!(
        !r.stdout.contains(&*home.to_string_lossy()),
        "home leaked:\n{}",
        r.stdout
    );
    assert!(r.stdout.contains("\"~/venv\""), "{}", r.stdout);
    assert_eq!(r.json()["redacted"], true);
}

/// Malformed build tags and versions are refused (exit 2) instead of passing silently, and the
/// message never echoes a terminal escape from the value.
#[test]
fn malformed_values_are_refused_without_echoing_escapes() {
    for bad in [
        "torch=2.1.0+cuXYZ",
        "torch=2.1.0+cu",
        "cudnn=8.9.7.1.2",
        "cudnn=8.9.x",
        "driver=535.\u{1b}[31mRED",
    ] {
        let r = assume(&[bad]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stdout);
        assert!(r.stderr.contains("--assume"), "{bad}: {}", r.stderr);
        assert!(
            !r.stderr.contains('\u{1b}'),
            "{bad}: an escape reached stderr"
        );
    }
    // The real forms still work: a four-part cuDNN wheel version, CUDA and ROCm tags.
    for good in [
        "cudnn=8.9.7.29",
        "torch=2.1.0+cu121",
        "torch=2.3.0+cpu",
        "torch=2.3.0+rocm6.0",
    ] {
        let r = assume(&[good]);
        assert!(
            r.code == 0 || r.code == 1,
            "{good}: exit {}: {}",
            r.code,
            r.stderr
        );
    }
}

/// Issue 31: the machine's terms can be assumed; a bad value is exit 2 naming the allowed ones.
#[test]
fn the_machine_terms_os_package_managers_secure_boot_install_and_python_env() {
    let s = snap(&["os.id=rocky", "os.version=9.4"]);
    assert_eq!(s["os_release"]["value"]["id"], "rocky");
    assert_eq!(s["os_release"]["value"]["version_id"], "9.4");
    let s = snap(&[
        "os.version=22.04",
        "os.id=ubuntu",
        "os.id_like=debian",
        "pkg=apt",
        "secure_boot=on",
        "driver=580.95.05",
        "driver.install=precompiled",
        "python.env=uv",
    ]);
    let os = &s["os_release"]["value"];
    assert_eq!(
        (os["id"].as_str(), os["version_id"].as_str()),
        (Some("ubuntu"), Some("22.04"))
    );
    assert_eq!(os["id_like"], serde_json::json!(["debian"]));
    assert_eq!(s["package_managers"]["value"], serde_json::json!(["apt"]));
    assert_eq!(s["secure_boot"]["value"]["enabled"], true);
    let i = &s["driver"]["install"]["value"];
    assert_eq!(
        (i["method"].as_str(), i["branch"].as_str()),
        (Some("precompiled"), Some("580"))
    );
    let env = &s["python"]["value"][0];
    assert_eq!(
        (env["kind"].as_str(), env["tool"].as_str()),
        (Some("uv"), Some("uv"))
    );
    assert_eq!(
        snap(&["pkg=dnf,yum"])["package_managers"]["value"],
        serde_json::json!(["dnf", "yum"])
    );
    assert_eq!(
        snap(&["secure_boot=off"])["secure_boot"]["value"]["enabled"],
        false
    );

    for (bad, allowed) in [
        ("python.env=pipenv", "uv, venv, conda, poetry, pixi, system"),
        (
            "driver.install=snap",
            "runfile, distribution, nvidia-repo, precompiled",
        ),
        (
            "pkg=brew",
            "apt, dnf, yum, zypper, pacman, apk, winget, choco",
        ),
        ("secure_boot=maybe", "on or off"),
        ("os.id=Rocky Linux", "lower-case letters"),
        ("os.version=9.4;rm", "VERSION_ID"),
    ] {
        let r = assume(&[bad]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains(allowed), "{bad}: {}", r.stderr);
    }
}
