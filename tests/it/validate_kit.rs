//! scripts/validate-gpu.sh, the GPU validation kit, run end to end here against the simulated
//! GPU (GPUDOCTOR_SIM_GPUS) with a stand-in `nvidia-smi` that prints a UUID and serial numbers:
//! eight files at most, every step in the summary with its exit status, the stress figures, and
//! nothing identifying left in any file.
// Linux only: the validation kit is a bash script.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;
use std::path::PathBuf;
use std::process::Command;

const UUID: &str = "GPU-3f1a9c2e-7b44-4e0d-9a51-0c6de2b8f417";
const SERIAL: &str = "1652022041234";

#[test]
fn the_kit_runs_on_the_simulated_gpu_and_redacts() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    common::write_script(
        &smi,
        &format!(
            "#!/bin/sh\necho 'GPU 00000000:18:00.0'\necho '    GPU UUID                              : {UUID}'\necho '    Serial Number                         : {SERIAL}'\necho 'NVRM: GPU Board Serial Number: {SERIAL} at {UUID}'\n"
        ),
    );
    let out_dir = d.path().join("out");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(root.join("scripts/validate-gpu.sh"))
        .args(["--quick", "-b", env!("CARGO_BIN_EXE_gpudoctor"), "-o"])
        .arg(&out_dir)
        .env("PATH", path)
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "8")
        .env_remove("OUT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(files.len() <= 8, "{files:?}");
    for f in [
        "summary.md",
        "check.txt",
        "check.json",
        "snapshot.json",
        "stress.txt",
        "stress.json",
        "probes.txt",
        "explain.txt",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    // Each step with its exit status: check fails here (no driver), stress passes on the
    // simulated GPU, and the injected flips are found without failing it.
    assert!(summary.contains("| check --format line | 1 |"), "{summary}");
    assert!(
        summary.contains("| stress --seconds 6 (main run, JSON report) | 0 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| stress --seconds 4 --inject-faults 100 | 0 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| 0 gpudoctor simulated GPU |"),
        "{summary}"
    );
    assert!(
        summary.contains("check --no-smoke / nvidia-smi -q:"),
        "{summary}"
    );
    let stress = std::fs::read_to_string(out_dir.join("stress.txt")).unwrap();
    assert!(
        stress.contains("100 of 100 injected bit flips found"),
        "{stress}"
    );
    // Nothing identifying anywhere; the stand-in's lines are there, redacted.
    let probes = std::fs::read_to_string(out_dir.join("probes.txt")).unwrap();
    assert!(
        probes.contains("GPU UUID                              : REDACTED"),
        "{probes}"
    );
    assert!(
        probes.contains("Board Serial Number: REDACTED at GPU-REDACTED"),
        "{probes}"
    );
    for f in &files {
        let text = std::fs::read_to_string(out_dir.join(f)).unwrap();
        assert!(
            !text.contains(UUID) && !text.contains(SERIAL),
            "{f} keeps an identifier"
        );
    }
}
