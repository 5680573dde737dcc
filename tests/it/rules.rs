//! Each rule on a snapshot and one-field variations of it, through `check --snapshot`.
//! Base snapshots: the recorded no-driver machine, and the synthetic 2 × H100 host
//! (tests/fixtures/README.md says which is which).

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{check_json as check, finding, snapshot_json};
use serde_json::{json, Value};

fn h100() -> Value {
    snapshot_json("synthetic-2xh100.json")
}

/// Sets (or adds) the value at a JSON pointer; its parent must exist.
fn set(v: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = new;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let obj = v
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent}"));
    obj.insert(key.to_string(), new);
}

#[test]
fn the_recorded_no_driver_machine() {
    let r = check(&snapshot_json("debian12-docker-nodriver.json"), &[]);
    assert_eq!(r.code, 1);
    assert_eq!(r.rules(), vec!["container.no-gpu", "driver.missing"]);
    let v = r.json();
    assert_eq!(
        finding(&v, "driver.missing")["title"],
        "No NVIDIA driver found"
    );
}

#[test]
fn the_healthy_base_has_only_the_memory_warning_on_gpu_1() {
    let r = check(&h100(), &[]);
    assert_eq!(r.code, 0, "a warning does not fail the default gate");
    assert_eq!(r.rules(), vec!["gpu.memory-held"]);
    let v = r.json();
    assert_eq!(v["verdict"], "warn");
    let f = finding(&v, "gpu.memory-held");
    assert_eq!(f["gpu"], 1);
    assert_eq!(f["category"], "gpu_memory_exhausted");
    assert!(
        f["detail"]
            .as_str()
            .unwrap()
            .contains("PID 40211 (python3) holds 66.0 GiB"),
        "{f}"
    );
    // --fail-on warning turns it into a failed gate.
    assert_eq!(check(&h100(), &["--fail-on", "warning"]).code, 1);
    // Without the process, no finding.
    let mut s = h100();
    set(&mut s, "/gpus/value/1/processes/value", json!([]));
    assert!(check(&s, &[]).rules().is_empty());
    // --gpu 0 leaves GPU 1's finding out.
    assert!(check(&h100(), &["--gpu", "0"]).rules().is_empty());
    assert_eq!(check(&h100(), &["--gpu", "7"]).code, 2);
}

#[test]
fn driver_library_mismatch_variations() {
    let mut s = h100();
    set(
        &mut s,
        "/driver/nvml/value/driver_version",
        json!("580.82.07"),
    );
    let r = check(&s, &[]);
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "driver.library-mismatch");
    assert!(f["detail"].as_str().unwrap().contains("580.95.05"));
    assert!(f["detail"].as_str().unwrap().contains("580.82.07"));

    let mut s = h100();
    set(
        &mut s,
        "/driver/nvml",
        json!({"status": "failed", "error": "Driver/library version mismatch", "code": "lib_rm_version_mismatch"}),
    );
    let r = check(&s, &[]);
    assert!(r.rules().contains(&"driver.library-mismatch".to_string()));
    assert!(!r.rules().contains(&"driver.missing".to_string()));

    // A forward-compatibility libcuda (cuda-compat) is newer on purpose.
    let mut s = h100();
    set(
        &mut s,
        "/driver/libcuda/value",
        json!({"path": "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01", "file_version": "590.44.01", "cuda_driver_version": 13010}),
    );
    assert!(!check(&s, &[])
        .rules()
        .contains(&"driver.library-mismatch".to_string()));

    let mut s = h100();
    set(
        &mut s,
        "/driver/libcuda/value/error",
        json!("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"),
    );
    assert!(check(&s, &[])
        .rules()
        .contains(&"driver.library-mismatch".to_string()));
}

#[test]
fn driver_missing_reasons() {
    // nouveau bound to the GPUs, no NVIDIA module.
    let mut s = h100();
    set(
        &mut s,
        "/driver/kernel_module",
        json!({"status": "absent", "why": "not loaded", "code": "not_loaded"}),
    );
    set(
        &mut s,
        "/driver/sys_module_version",
        json!({"status": "absent", "why": "not loaded", "code": "not_loaded"}),
    );
    set(
        &mut s,
        "/driver/nvml",
        json!({"status": "failed", "error": "driver not loaded", "code": "driver_not_loaded"}),
    );
    set(
        &mut s,
        "/driver/libcuda",
        json!({"status": "absent", "why": "not found", "code": "not_found"}),
    );
    set(
        &mut s,
        "/gpus",
        json!({"status": "absent", "why": "no NVML"}),
    );
    let mut nouveau = s.clone();
    set(
        &mut nouveau,
        "/driver/pci_devices/value/0/driver",
        json!("nouveau"),
    );
    set(&mut nouveau, "/driver/nouveau_loaded/value", json!(true));
    let v = check(&nouveau, &[]).json();
    let f = finding(&v, "driver.missing");
    assert!(f["title"].as_str().unwrap().contains("nouveau"), "{f}");
    assert!(f["fix"]["commands"][0]
        .as_str()
        .unwrap()
        .contains("blacklist nouveau"));

    // GPUs on the bus, nothing bound.
    let mut unbound = s.clone();
    set(
        &mut unbound,
        "/driver/pci_devices/value/0/driver",
        Value::Null,
    );
    set(
        &mut unbound,
        "/driver/pci_devices/value/1/driver",
        Value::Null,
    );
    let v = check(&unbound, &[]).json();
    let f = finding(&v, "driver.missing");
    assert_eq!(
        f["title"],
        "NVIDIA GPUs are present but the NVIDIA kernel module is not loaded"
    );
    assert!(f["detail"].as_str().unwrap().contains("0000:18:00.0"));

    // Module loaded, /dev/nvidia-uvm missing.
    let mut s = h100();
    set(
        &mut s,
        "/driver/device_nodes/value",
        json!([
        {"path": "/dev/nvidia0", "readable": true, "writable": true},
        {"path": "/dev/nvidia1", "readable": true, "writable": true},
        {"path": "/dev/nvidiactl", "readable": true, "writable": true}]),
    );
    let v = check(&s, &[]).json();
    assert!(finding(&v, "driver.missing")["title"]
        .as_str()
        .unwrap()
        .contains("nvidia-uvm"));

    // Module loaded, no device nodes at all (on a bare host).
    let mut s = h100();
    set(&mut s, "/driver/device_nodes/value", json!([]));
    let v = check(&s, &[]).json();
    assert!(finding(&v, "driver.missing")["title"]
        .as_str()
        .unwrap()
        .contains("device nodes"));
}

#[test]
fn device_permissions() {
    let mut s = h100();
    set(
        &mut s,
        "/driver/device_nodes/value/4/writable",
        json!(false),
    );
    let v = check(&s, &[]).json();
    let f = finding(&v, "driver.device-permissions");
    assert_eq!(f["evidence"]["not_accessible"], json!(["/dev/nvidiactl"]));
}

#[test]
fn container_without_gpu() {
    let mut s = h100();
    set(&mut s, "/host/value/container", json!("docker"));
    set(
        &mut s,
        "/host/value/container_markers",
        json!(["/.dockerenv"]),
    );
    assert!(
        check(&s, &[])
            .rules()
            .iter()
            .all(|r| r != "container.no-gpu"),
        "a container with GPUs is fine"
    );
    set(&mut s, "/driver/device_nodes/value", json!([]));
    let v = check(&s, &[]).json();
    assert!(finding(&v, "container.no-gpu")["fix"]["commands"][0]
        .as_str()
        .unwrap()
        .contains("--gpus all"));
    let mut k = h100();
    set(&mut k, "/host/value/container", json!("kubernetes"));
    set(&mut k, "/env/NVIDIA_VISIBLE_DEVICES", json!("void"));
    let v = check(&k, &[]).json();
    assert!(finding(&v, "container.no-gpu")["detail"]
        .as_str()
        .unwrap()
        .contains("NVIDIA_VISIBLE_DEVICES"));
}

#[test]
fn expected_gpu_count() {
    assert!(check(&h100(), &["--expect-gpus", "2"])
        .rules()
        .iter()
        .all(|r| r != "gpus.expected-count"));
    let r = check(&h100(), &["--expect-gpus", "8"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "gpus.expected-count");
    assert_eq!(
        f["evidence"],
        json!({"expected": 8, "nvml_gpus": 2, "pci_gpus": 2})
    );
    assert_eq!(f["title"], "2 of 8 expected GPUs are usable");
}

#[test]
fn cuda_visible_devices() {
    let mut s = h100();
    set(&mut s, "/env/CUDA_VISIBLE_DEVICES", json!(""));
    let r = check(&s, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        finding(&r.json(), "env.cuda-visible-devices")["title"],
        "CUDA_VISIBLE_DEVICES hides every GPU"
    );
    set(&mut s, "/env/CUDA_VISIBLE_DEVICES", json!("0,3,1"));
    let v = check(&s, &[]).json();
    let f = finding(&v, "env.cuda-visible-devices");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["evidence"]["ignored"], json!(["3", "1"]));
    set(&mut s, "/env/CUDA_VISIBLE_DEVICES", json!("1"));
    assert!(check(&s, &[])
        .rules()
        .iter()
        .all(|r| r != "env.cuda-visible-devices"));
}

#[test]
fn debug_injection_variables() {
    let mut s = h100();
    set(
        &mut s,
        "/env/CUDA_INJECTION64_PATH",
        json!("/opt/tool/libinject.so"),
    );
    let v = check(&s, &[]).json();
    assert_eq!(
        finding(&v, "env.debug-injection")["fix"]["commands"],
        json!(["unset CUDA_INJECTION64_PATH"])
    );
}

#[test]
fn stub_libcuda_ahead_of_the_driver() {
    let mut s = h100();
    set(
        &mut s,
        "/driver/libcuda_files/value",
        json!([
        {"path": "/usr/local/cuda-12.4/lib64/stubs/libcuda.so", "origin": "LD_LIBRARY_PATH", "stub": true},
        {"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "origin": "ld.so.cache", "stub": false}]),
    );
    let v = check(&s, &[]).json();
    assert!(finding(&v, "libs.stub-libcuda")["detail"]
        .as_str()
        .unwrap()
        .contains("stubs/libcuda.so"));
    let mut s = h100();
    set(
        &mut s,
        "/driver/libcuda/value/error",
        json!("CUDA_ERROR_STUB_LIBRARY (34)"),
    );
    assert!(check(&s, &[])
        .rules()
        .contains(&"libs.stub-libcuda".to_string()));
}

#[test]
fn runtimes_of_two_majors_on_the_search_path() {
    let mut s = h100();
    set(
        &mut s,
        "/cuda/runtimes/value",
        json!([
        {"path": "/usr/local/cuda-11.8/lib64/libcudart.so.11.8.89", "origins": ["LD_LIBRARY_PATH"], "soname_major": 11, "api_version": {"status": "found", "value": 11080}, "on_search_path": true},
        {"path": "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "origins": ["ld.so.cache"], "soname_major": 12, "api_version": {"status": "found", "value": 12040}, "on_search_path": true}]),
    );
    let v = check(&s, &[]).json();
    assert_eq!(
        finding(&v, "libs.path-conflict")["evidence"]["majors"],
        json!([11, 12])
    );
    // The same two, one only reachable through pip's RPATH: no conflict.
    set(
        &mut s,
        "/cuda/runtimes/value/0/on_search_path",
        json!(false),
    );
    assert!(check(&s, &[])
        .rules()
        .iter()
        .all(|r| r != "libs.path-conflict"));
}

#[test]
fn cpu_only_torch_and_jax_without_plugin() {
    let mut s = h100();
    set(
        &mut s,
        "/python/value/0/torch",
        json!({"version": "2.7.1+cpu"}),
    );
    set(
        &mut s,
        "/python/value/0/packages",
        json!([{"name": "jax", "version": "0.4.30"}, {"name": "jaxlib", "version": "0.4.30"}, {"name": "torch", "version": "2.7.1+cpu"}]),
    );
    let r = check(&s, &[]);
    let v = r.json();
    let titles: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "framework.cpu-only-build")
        .map(|f| f["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        vec![
            "PyTorch 2.7.1+cpu is a CPU-only build",
            "JAX 0.4.30 has no CUDA plugin: it runs on the CPU"
        ]
    );
    // With the plugin, JAX is fine.
    set(
        &mut s,
        "/python/value/0/packages",
        json!([{"name": "jax", "version": "0.4.30"}, {"name": "jax-cuda12-plugin", "version": "0.4.30"}, {"name": "jaxlib", "version": "0.4.30"}]),
    );
    let v = check(&s, &[]).json();
    assert_eq!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "framework.cpu-only-build")
            .count(),
        1
    );
}

#[test]
fn a_probe_that_timed_out() {
    let mut s = h100();
    set(
        &mut s,
        "/probes/2",
        json!({"name": "nvml", "millis": 10002, "outcome": "timeout"}),
    );
    let v = check(&s, &[]).json();
    assert_eq!(finding(&v, "probe.timeout")["category"], "probe_timeout");
}

#[test]
fn only_and_skip_select_rules_by_prefix_or_category() {
    let s = snapshot_json("debian12-docker-nodriver.json");
    assert_eq!(
        check(&s, &["--only", "driver."]).rules(),
        vec!["driver.missing"]
    );
    assert_eq!(
        check(&s, &["--only", "container_no_gpu"]).rules(),
        vec!["container.no-gpu"]
    );
    let r = check(&s, &["--skip", "driver", "--skip", "container"]);
    assert!(r.rules().is_empty());
    assert_eq!(r.code, 0);
}

#[test]
fn a_snapshot_with_fields_from_a_newer_gpudoctor_is_still_read() {
    let mut s = h100();
    set(&mut s, "/health", json!({"ecc": "from a later version"}));
    set(&mut s, "/gpus/value/0/row_remap", json!({"pending": false}));
    let r = check(&s, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.rules(), vec!["gpu.memory-held"]);
}

#[test]
fn a_framework_without_its_cuda_runtime() {
    // The venv's pip CUDA runtime removed: torch 2.7.1+cu126 has no libcudart.so.12 to load.
    let mut s = h100();
    set(&mut s, "/cuda/runtimes/value", json!([]));
    let r = check(&s, &[]);
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "compat.cuda-runtime");
    assert_eq!(f["category"], "cuda_runtime_mismatch");
    assert_eq!(
        f["title"],
        "torch 2.7.1+cu126 has no CUDA 12 runtime to load"
    );
    assert!(
        f["fix"]["commands"][0]
            .as_str()
            .unwrap()
            .contains("whl/cu126"),
        "{f}"
    );
    // A CUDA 12.4 runtime on the library path is older than the 12.6 it was built with: a warning.
    set(
        &mut s,
        "/cuda/runtimes/value",
        json!([{"path": "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "origins": ["LD_LIBRARY_PATH"], "soname_major": 12, "api_version": {"status": "found", "value": 12040}, "on_search_path": true}]),
    );
    let v = check(&s, &[]).json();
    assert_eq!(finding(&v, "compat.cuda-runtime")["severity"], "warning");
    // A 12.6 one serves it.
    set(
        &mut s,
        "/cuda/runtimes/value/0/api_version/value",
        json!(12060),
    );
    assert!(check(&s, &[])
        .rules()
        .iter()
        .all(|r| r != "compat.cuda-runtime"));
}

#[test]
fn a_cudnn_wheel_of_the_wrong_major() {
    let mut s = h100();
    set(
        &mut s,
        "/python/value/0/packages/1/version",
        json!("8.9.7.29"),
    );
    set(&mut s, "/cudnn/value/0/version/value", json!("8.9.7"));
    let v = check(&s, &[]).json();
    let f = finding(&v, "compat.cudnn");
    assert_eq!(f["severity"], "error");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("needs cuDNN 9 (9.5.1.17)"),
        "{f}"
    );
}

#[test]
fn the_driver_against_an_assumed_older_driver() {
    // The same host, but what if it ran R535?
    let r = check(&h100(), &["--assume", "driver=535.104.05"]);
    assert_eq!(
        r.rules(),
        vec!["gpu.memory-held"],
        "cu126 runs on R535 (CUDA 12.2) by minor-version compatibility"
    );
    let r = check(&h100(), &["--assume", "driver=470.82.01"]);
    let v = r.json();
    assert_eq!(
        finding(&v, "compat.driver-too-old")["evidence"]["requires"],
        "525.60.13"
    );
}

#[test]
fn forward_compatibility_on_a_supported_and_an_unsupported_branch() {
    // cuda-compat 13.1 on an R535 kernel module: supported (forward-compatibility table).
    let mut s = h100();
    set(
        &mut s,
        "/driver/kernel_module/value/version",
        json!("535.216.01"),
    );
    set(
        &mut s,
        "/driver/sys_module_version/value",
        json!("535.216.01"),
    );
    set(
        &mut s,
        "/driver/nvml/value/driver_version",
        json!("535.216.01"),
    );
    set(
        &mut s,
        "/driver/libcuda/value",
        json!({"path": "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01", "file_version": "590.44.01", "cuda_driver_version": 13010}),
    );
    let r = check(&s, &[]);
    assert!(
        r.rules()
            .iter()
            .all(|r| r != "compat.forward-compat" && r != "driver.library-mismatch"),
        "{}",
        r.stdout
    );
    // The same package on R550: not a supported base branch.
    for p in [
        "/driver/kernel_module/value/version",
        "/driver/sys_module_version/value",
        "/driver/nvml/value/driver_version",
    ] {
        set(&mut s, p, json!("550.127.08"));
    }
    let v = check(&s, &[]).json();
    let f = finding(&v, "compat.forward-compat");
    assert_eq!(
        f["title"],
        "cuda-compat 13.1 does not support kernel driver R550"
    );
    assert_eq!(f["category"], "driver_library_mismatch");
    // And never on GeForce.
    let mut g = s.clone();
    for p in [
        "/driver/kernel_module/value/version",
        "/driver/sys_module_version/value",
        "/driver/nvml/value/driver_version",
    ] {
        set(&mut g, p, json!("535.216.01"));
    }
    set(
        &mut g,
        "/gpus/value/0/name/value",
        json!("NVIDIA GeForce RTX 4090"),
    );
    let v = check(&g, &[]).json();
    assert!(finding(&v, "compat.forward-compat")["detail"]
        .as_str()
        .unwrap()
        .contains("804"));
}

fn real_h100() -> Value {
    snapshot_json("h100-580.159.04-real.json")
}

/// A healthy H100 recorded on a real machine (driver 580.159.04, open module): no error, and
/// nothing but the matrix not knowing its JAX yet. Any other finding here is a false one.
#[test]
fn a_real_healthy_h100_has_no_false_findings() {
    let r = check(&real_h100(), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    for rule in r.rules() {
        assert_eq!(
            rule, "matrix.stale",
            "a false finding on a healthy H100: {}",
            r.stdout
        );
    }
}

/// The module flavour against the GPU: open modules drive Turing (7.5) and newer only;
/// Blackwell and Grace Hopper need the open modules.
#[test]
fn the_module_flavor_must_drive_the_gpu() {
    let flavored = |flavor: &str, name: &str, cc: &str| {
        let mut s = real_h100();
        set(&mut s, "/driver/kernel_module/value/flavor", json!(flavor));
        set(&mut s, "/gpus/value/0/name/value", json!(name));
        set(&mut s, "/gpus/value/0/compute_capability/value", json!(cc));
        check(&s, &[])
    };
    let r = flavored("proprietary", "NVIDIA B200", "10.0");
    assert_eq!(r.code, 1);
    let v = r.json();
    let f = finding(&v, "driver.module-flavor");
    assert_eq!(f["category"], "arch_unsupported");
    assert_eq!(f["gpu"], 0);
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("needs the open kernel module"));
    let r = flavored("open", "Tesla V100-SXM2-16GB", "7.0");
    let v = r.json();
    let f = finding(&v, "driver.module-flavor");
    assert!(f["title"]
        .as_str()
        .unwrap()
        .contains("open kernel module does not drive a compute 7.0 GPU"));
    // The right flavours, and an unknown one, say nothing.
    for (flavor, name, cc) in [
        ("open", "NVIDIA B200", "10.0"),
        ("proprietary", "Tesla V100-SXM2-16GB", "7.0"),
        ("proprietary", "NVIDIA H100 80GB HBM3", "9.0"),
        ("open", "NVIDIA H100 80GB HBM3", "9.0"),
        ("unknown", "NVIDIA B200", "10.0"),
    ] {
        assert!(
            !flavored(flavor, name, cc)
                .rules()
                .contains(&"driver.module-flavor".to_string()),
            "{flavor} {name}"
        );
    }
}

/// A fix command that names a GPU names it by its index, never a placeholder a person would
/// have to fill in (`-i <index>`, `-i N`): compute mode and a pending MIG change on GPU 1.
#[test]
fn per_gpu_fix_commands_name_the_gpu() {
    let mut s = h100();
    set(
        &mut s,
        "/gpus/value/1/compute_mode",
        json!({"status": "found", "value": "prohibited"}),
    );
    set(
        &mut s,
        "/gpus/value/1/mig_mode",
        json!({"status": "found", "value": {"current": false, "pending": true}}),
    );
    let v = check(&s, &[]).json();
    let cmds: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["fix"]["commands"].as_array().cloned().unwrap_or_default())
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(
        cmds.contains(&"sudo nvidia-smi -i 1 -c DEFAULT".to_string()),
        "{cmds:?}"
    );
    assert!(
        cmds.contains(&"sudo nvidia-smi -r -i 1".to_string()),
        "{cmds:?}"
    );
    for c in &cmds {
        assert!(!c.contains("<index>") && !c.ends_with(" N"), "{c}");
    }
}

/// A smoke test stuck in `context` (the driver bringing the GPU up) on a node with persistence
/// mode off and no nvidia-persistenced: the finding names persistence mode as the likely cause
/// and the fix enables it. The same timeout with persistence on says nothing of it.
#[test]
fn a_context_timeout_without_persistence_names_it() {
    let mut s = h100();
    let smoke = json!({"status": "found", "value": {"gpus": [{"ordinal": 0, "steps": [
        {"name": "context", "status": "timed_out", "millis": 0, "detail": "",
         "error": {"call": "context", "name": "", "message": "did not finish within 2900 ms (--timeout); the GPU or the driver may be hung"}}
    ], "millis": 2900}], "millis": 2900}});
    set(&mut s, "/smoke", smoke);
    let with = check(&s, &[]).json();
    let f = finding(&with, "smoke.failed");
    assert!(
        !f["detail"].as_str().unwrap().contains("Persistence"),
        "{f:#}"
    );
    set(&mut s, "/driver/daemons/value/0/running", json!(false));
    for i in 0..2 {
        set(
            &mut s,
            &format!("/gpus/value/{i}/persistence_mode"),
            json!({"status": "found", "value": false}),
        );
    }
    let v = check(&s, &[]).json();
    let f = finding(&v, "smoke.failed");
    assert!(
        f["detail"]
            .as_str()
            .unwrap()
            .contains("Persistence mode is off on GPU 0, 1"),
        "{f:#}"
    );
    assert_eq!(
        f["fix"]["commands"][0],
        "sudo systemctl enable --now nvidia-persistenced"
    );
    assert_eq!(f["evidence"]["persistence_mode_off"], json!([0, 1]));
    assert!(f["evidence"]["error"].is_object(), "{f:#}");
}

/// A Jetson (the recorded no-driver machine with the Tegra markers of a Jetson AGX Orin): no
/// nvidia module and no NVML by design, so no "No NVIDIA driver found" with a discrete-GPU fix.
/// Without libcuda.so.1 it is still unfit (an error naming Jetson's own fix); with it, an info.
#[test]
fn a_jetson_is_said_to_be_one_instead_of_driverless() {
    let mut s = snapshot_json("debian12-docker-nodriver.json");
    set(
        &mut s,
        "/host/value/tegra",
        json!({"l4t": "R35.4.1", "soc": "tegra234", "model": "NVIDIA Jetson AGX Orin Developer Kit",
               "markers": ["/etc/nv_tegra_release", "/proc/device-tree/compatible: nvidia,tegra234"]}),
    );
    let r = check(&s, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(r.rules(), vec!["container.no-gpu", "host.tegra"]);
    let v = r.json();
    let f = finding(&v, "host.tegra");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["category"], "driver_missing");
    assert_eq!(
        f["title"],
        "NVIDIA Jetson/Tegra board (NVIDIA Jetson AGX Orin Developer Kit, tegra234, Jetson Linux R35.4.1) without its CUDA driver (libcuda.so.1)"
    );
    assert!(f["detail"].as_str().unwrap().contains("no NVML"), "{f:#}");

    // Jetson Linux's libcuda loads: an info, nothing fails.
    set(
        &mut s,
        "/driver/libcuda",
        json!({"status": "found", "value": {"path": "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", "cuda_driver_version": 11040}}),
    );
    set(&mut s, "/host/value/container", Value::Null);
    let r = check(&s, &[]);
    let v = r.json();
    assert_eq!(r.rules(), vec!["host.tegra"], "{:#}", v["findings"]);
    assert_eq!(r.code, 0);
    let f = finding(&v, "host.tegra");
    assert_eq!(f["severity"], "info");
    assert_eq!(
        f["title"],
        "NVIDIA Jetson/Tegra board (NVIDIA Jetson AGX Orin Developer Kit, tegra234, Jetson Linux R35.4.1): integrated GPU"
    );
}
