//! `gpudoctor run` on Windows, under Wine (scripts/test-windows.sh): the command's output passes
//! through, its exit code is gpudoctor's, all 32 bits of it, and a crash code such as the
//! 0xC0000409 Keras users meet is named; and `stress` on the simulated GPU.
#![cfg(windows)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{gpudoctor_run as run, report_file as report, Run};

#[test]
fn output_and_exit_status_pass_through() {
    for code in [0, 1, 3] {
        let r = run()
            .args(["--", "cmd", "/c", &format!("echo hello& exit {code}")])
            .run();
        assert_eq!(r.code, code, "{}", r.stderr);
        assert_eq!(r.stdout.trim_end(), "hello", "{}", r.stdout);
        if code == 0 {
            assert!(r.stderr.contains("ended well (exit 0)"), "{}", r.stderr);
        } else {
            assert!(
                r.stderr.contains(&format!("exited with status {code}")),
                "{}",
                r.stderr
            );
        }
    }
    // Not found: the shell's 127.
    let r = run().args(["--", r"C:\nonexistent\command.exe"]).run();
    assert_eq!(r.code, 127, "{}", r.stderr);
}

/// A process that ends with STATUS_STACK_BUFFER_OVERRUN (cmd's `exit` sets the whole 32-bit
/// code, as the crashing python.exe does): gpudoctor exits with the same code and names it.
#[test]
fn the_keras_crash_code_is_passed_on_and_named() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run()
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "cmd", "/c", "echo Epoch 1/10& exit -1073740791"])
        .run();
    assert_eq!(r.code, -1073740791, "{}", r.stderr);
    assert_eq!(r.stdout.trim_end(), "Epoch 1/10");
    let v = report(&rep);
    assert_eq!(v["exit"]["status"], -1073740791, "{v:#}");
    let text = v["causes"].to_string();
    assert!(text.contains("STATUS_STACK_BUFFER_OVERRUN"), "{v:#}");
    // The GPUs could not be watched here (no driver), and the report says so in Windows terms.
    let unwatched = v["timeline"]["unwatched"].to_string();
    assert!(unwatched.contains("nvml.dll"), "{v:#}");
    assert!(!unwatched.contains("libnvidia-ml"), "{v:#}");
}

/// `stress` on Windows, on the simulated GPU (Wine has no NVIDIA driver): the memory patterns and
/// the verified burn run to a passing report.
#[test]
fn stress_runs_on_the_simulated_gpu() {
    let r = Run::new()
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .args(["stress", "--seconds", "2", "--format", "json"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "pass", "{j:#}");
    let g = &j["snapshot"]["stress"]["gpus"][0];
    assert!(g["tested_bytes"].as_u64().unwrap() > 0, "{g:#}");
    assert!(g["compute_launches"].as_u64().unwrap() >= 1, "{g:#}");
    assert_eq!(g["memory_errors"], 0);
}

/// The command's children count as the run's: cmd's ping is in the process tree while it runs.
#[test]
fn the_process_tree_includes_the_commands_children() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run()
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "cmd", "/c", "ping -n 4 127.0.0.1 >nul"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = report(&rep);
    let most = v["timeline"]["last"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["host_processes"].as_u64())
        .max()
        .unwrap_or(0);
    assert!(most >= 2, "{v:#}");
}
