//! The embedded PTX kernels, assembled offline by the real `ptxas` (from the PyPI wheel
//! nvidia-cuda-nvcc-cu12, installed by scripts/test-setup.sh) for sm_50 ... sm_90 and every
//! newer plain `sm_NN` target that ptxas knows: a broken kernel fails CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Command;

/// Targets the smoke issue names; each must be known to ptxas and assemble.
const REQUIRED: [u32; 9] = [50, 52, 60, 70, 75, 80, 86, 89, 90];

fn ptxas() -> PathBuf {
    if let Some(p) = std::env::var_os("GPUDOCTOR_PTXAS") {
        return PathBuf::from(p);
    }
    let venv = std::env::var_os("GPUDOCTOR_TEST_VENV").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-test"),
        PathBuf::from,
    );
    let p = venv.join("nvcc/bin/ptxas");
    assert!(
        p.exists(),
        "ptxas not found at {}: run scripts/test-setup.sh (or set GPUDOCTOR_PTXAS)",
        p.display()
    );
    p
}

/// Every plain `sm_NN` target in ptxas's list of allowed --gpu-name values.
fn known_targets() -> Vec<u32> {
    let out = Command::new(ptxas()).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v: Vec<u32> = text
        .split(['\'', ',', ' ', '\n'])
        .filter_map(|w| w.strip_prefix("sm_"))
        .filter_map(|n| n.parse().ok())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Assembles `ptx` for `sm_{target}`; Ok(ptxas's -v output) or Err(its errors).
fn assemble(ptx: &str, target: u32) -> Result<String, String> {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k.ptx");
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas())
        .arg("-v")
        .arg(format!("-arch=sm_{target}"))
        .arg(&src)
        .arg("-o")
        .arg(d.path().join("k.cubin"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && d.path().join("k.cubin").exists() {
        Ok(text)
    } else {
        Err(text)
    }
}

#[test]
fn smoke_ptx_assembles_for_every_target() {
    let known = known_targets();
    for t in REQUIRED {
        assert!(known.contains(&t), "ptxas does not know sm_{t}: {known:?}");
    }
    let targets: Vec<u32> = known.into_iter().filter(|t| *t >= 50).collect();
    assert!(targets.len() >= REQUIRED.len());
    let modules: [(&str, &str, &[&str]); 2] = [
        (
            "smoke",
            gpudoctor::gpu::SMOKE_PTX,
            &["smoke_arith", "copy_v4"],
        ),
        (
            "stress",
            gpudoctor::gpu::STRESS_PTX,
            &["mem_fill", "mem_check", "mem_flip", "fma_burn", "cmp_f32"],
        ),
    ];
    for t in &targets {
        for (name, ptx, entries) in modules {
            let log = assemble(ptx, *t)
                .unwrap_or_else(|e| panic!("the {name} PTX does not assemble for sm_{t}:\n{e}"));
            for entry in entries {
                assert!(
                    log.contains(&format!("Compiling entry function '{entry}' for 'sm_{t}'")),
                    "no {entry} for sm_{t}:\n{log}"
                );
            }
        }
    }
    eprintln!("assembled for {} targets: {targets:?}", targets.len());
}

#[test]
fn the_ptx_is_for_the_oldest_driver() {
    // ISA 7.0 / sm_50: what R450 (CUDA 11.0) JIT-compiles (rust-crates.md section 1), for every
    // GPU from compute capability 5.0 (GTX 750 / 750 Ti; sm_52 left them out, issue 29 item 5).
    for ptx in [gpudoctor::gpu::SMOKE_PTX, gpudoctor::gpu::STRESS_PTX] {
        let head: Vec<&str> = ptx.lines().filter(|l| l.starts_with('.')).take(3).collect();
        assert_eq!(head, [".version 7.0", ".target sm_50", ".address_size 64"]);
    }
}

#[test]
fn a_broken_kernel_fails() {
    // The same check catches a mistake: an undeclared register.
    let broken = gpudoctor::gpu::SMOKE_PTX.replacen(
        "add.s32 \t%r6, %r6, %r5;",
        "add.s32 \t%r6, %r6, %r99;",
        1,
    );
    assert_ne!(
        broken,
        gpudoctor::gpu::SMOKE_PTX,
        "the replacement must change the kernel"
    );
    let err = assemble(&broken, 90).unwrap_err();
    assert!(err.contains("%r99"), "{err}");
}

/// The FMA burn's loop is all FFMA: every arithmetic instruction between BURN_LOOP and
/// BURN_DONE (but the counter) is `fma.rn.f32`, and there are at least 64 of them. The old body
/// paired each FFMA with an FMUL (6 flops per 4 instructions: 75 % of the FMA peak at most).
/// (On sm_90 ptxas turns it into 64 FFMA and no FMUL; checked with nvdisasm.)
#[test]
fn the_fma_burn_loop_is_all_fma() {
    let ptx = gpudoctor::gpu::STRESS_PTX;
    let body = ptx
        .split("BURN_LOOP:")
        .nth(1)
        .and_then(|s| s.split("BURN_DONE:").next())
        .unwrap();
    let ops: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('@'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let fma = ops.iter().filter(|o| **o == "fma.rn.f32").count();
    let other: Vec<&&str> = ops
        .iter()
        .filter(|o| !matches!(**o, "fma.rn.f32" | "setp.ge.u32" | "add.s32" | "bra.uni"))
        .collect();
    assert!(fma >= 64, "{fma} FFMA in the loop: {ops:?}");
    assert!(other.is_empty(), "not FMA: {other:?}");
    assert_eq!(
        gpudoctor::gpu::stress::FMA_ITERS % 4,
        0,
        "the loop is unrolled four times"
    );
}
