//! `gpudoctor stress` without a GPU: the runner with the simulated backend (memory and kernels
//! on the CPU, faults on request), and the binary end to end (GPUDOCTOR_SIM_GPUS): formats,
//! verdicts, exit codes, the signal path, bad arguments, and the real no-driver path.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpudoctor::gpu::sim::{SimBackend, SimFaults, SimMonitor};
use gpudoctor::gpu::stress::{
    self, injected_flips, pattern_value, round_steps, Event, MemStep, StressOptions,
};
use gpudoctor::snapshot::StressRun;

fn opts(seconds: f64) -> StressOptions {
    StressOptions {
        duration: Duration::from_secs_f64(seconds),
        memory: true,
        compute: true,
        memory_fraction: 0.97,
        inject_faults: 0,
        nvml_gpus: (0..4).map(|i| (i, Some(SimBackend::bus_id(i)))).collect(),
        selected: None,
        wddm: Vec::new(),
        stop: Arc::new(AtomicBool::new(false)),
        grace: Duration::from_millis(1500),
    }
}

fn sim(count: u32, mib: u64, faults: &str) -> SimBackend {
    SimBackend {
        count,
        mem: mib << 20,
        faults: SimFaults::parse(faults),
    }
}

fn run(b: SimBackend, o: &StressOptions) -> (StressRun, Vec<Event>) {
    let mut events = Vec::new();
    let m = SimMonitor::new(&b.faults);
    let r = stress::run(Arc::new(b), o, Some(Box::new(m)), &mut |e| {
        events.push(e.clone())
    });
    (r, events)
}

#[test]
fn patterns_are_what_memtest_writes() {
    // Own address, inverted; walking bit r % 32; fixed; seeded random, all as moving inversions.
    assert_eq!(pattern_value(0, 5, 0), 5);
    assert_eq!(pattern_value(0, (1 << 32) | 5, 0), 5 ^ 0x9E37_79B1);
    assert_eq!(pattern_value(0, 5, !0), !5);
    assert_eq!(pattern_value(1, 12345, 0xAAAA_AAAA), 0xAAAA_AAAA);
    let r: Vec<u32> = (0..1000).map(|i| pattern_value(2, i, 7)).collect();
    let distinct: std::collections::HashSet<u32> = r.iter().copied().collect();
    assert_eq!(distinct.len(), 1000, "the random pattern does not repeat");
    assert_ne!(
        pattern_value(2, 3, 7),
        pattern_value(2, 3, 8),
        "the seed changes it"
    );
    let steps = round_steps(33);
    assert_eq!(steps.len(), 12);
    assert_eq!(
        steps[3].1,
        MemStep::Fill { mode: 1, a: 1 << 1 },
        "walking bit 33 % 32"
    );
    assert_eq!(
        steps[4].1,
        MemStep::Check {
            mode: 1,
            a: 2,
            then: Some((1, !2))
        }
    );
    // Injected flips land on distinct words, one per stride.
    let f = injected_flips(1000, 10, 12345);
    assert_eq!(f.len(), 10);
    assert_eq!(f[0], (12345 % 100, 12345 & 31));
    assert_eq!(f[9].0, 900 + 12345 % 100);
}

#[test]
fn a_healthy_run_covers_the_memory_and_checks_every_result() {
    let mut o = opts(2.0);
    o.compute = false;
    let (r, events) = run(sim(2, 8, ""), &o);
    assert_eq!(r.gpus.len(), 2);
    for g in &r.gpus {
        assert!(g.memory_rounds >= 1, "{g:?}");
        assert_eq!(g.memory_errors, 0);
        let cov = g.tested_bytes as f64 / g.free_bytes as f64;
        assert!(cov >= 0.95, "coverage {cov}");
        assert_eq!(g.watch.max_temperature_c, Some(61));
    }
    assert!(events.iter().any(|e| matches!(e, Event::Start { .. })));
    assert!(events.iter().any(|e| matches!(e, Event::Progress { .. })));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Done { .. }))
            .count(),
        2
    );
}

/// Every kernel is loaded before the memory test takes 97 % of the free memory: the simulated
/// GPU loads kernels lazily (as CUDA 12.2+ does by default), each taking device memory, so a
/// kernel first used after the fill (mem_fill, fma_burn, ...) failed with out-of-memory.
#[test]
fn kernels_are_loaded_before_the_memory_is_taken() {
    let (r, _) = run(sim(1, 4, ""), &opts(1.0));
    let g = &r.gpus[0];
    assert!(g.failure.is_none(), "{:?}", g.failure);
    assert!(g.compute_launches >= 1, "{g:?}");
    // Memory steps ran after the fill (a whole round may not fit in a second under load).
    assert!(g.tested_bytes > 0 && g.memory_gbps.is_some(), "{g:?}");
}

/// `--memory-fraction` above the cap is refused with the reason, not run into out-of-memory.
#[test]
fn a_memory_fraction_above_the_cap_says_why() {
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .args(["stress", "--seconds", "1", "--memory-fraction", "0.99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("between 0.1 and 0.97") && err.contains("lazy loading"),
        "{err}"
    );
}

#[test]
fn a_stuck_bit_is_found_with_its_address() {
    let mut o = opts(1.5);
    o.compute = false;
    let (r, events) = run(sim(1, 4, "stuck-bit"), &o);
    let g = &r.gpus[0];
    assert!(g.memory_errors >= 2, "{g:?}");
    let e = &g.first_memory_errors[0];
    assert_eq!(
        (e.offset, e.flipped_bits),
        (400, 0x8),
        "word 100, bit 3: {e:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::MemoryErrors { .. })));
}

/// A memory error says which allocation chunk it is in and where in that chunk: with memory
/// in several chunks, the same offset in two chunks is two different words.
#[test]
fn a_memory_error_names_its_chunk() {
    let mut o = opts(1.5);
    o.compute = false;
    let (r, _) = run(sim(1, 8, "stuck-bit,fragmented"), &o);
    let g = &r.gpus[0];
    let chunks: std::collections::BTreeSet<u32> =
        g.first_memory_errors.iter().map(|e| e.chunk).collect();
    assert!(chunks.len() >= 2, "{:?}", g.first_memory_errors);
    for e in &g.first_memory_errors {
        assert_eq!(e.offset, 400, "{e:?}");
        assert!(e.chunk_bytes > 400 && e.chunk_bytes <= 2 << 20, "{e:?}");
    }
}

/// Each moving inversion writes the complement of its pattern, word for word; the random one
/// used to write a second random pattern instead.
#[test]
fn every_inversion_writes_the_complement() {
    for r in 0..40 {
        let steps = round_steps(r);
        for s in steps.chunks(3) {
            let (
                MemStep::Fill { mode, a },
                MemStep::Check {
                    then: Some((tm, ta)),
                    ..
                },
            ) = (s[0].1, s[1].1)
            else {
                panic!("not fill, check-and-rewrite: {s:?}");
            };
            for i in [0u64, 1, 2, 77, 1 << 20, (3 << 32) | 9] {
                assert_eq!(
                    pattern_value(tm, i, ta),
                    !pattern_value(mode, i, a),
                    "round {r}, {}, word {i}",
                    s[0].0
                );
            }
        }
    }
}

#[test]
fn every_injected_flip_is_reported() {
    let mut o = opts(1.0);
    o.compute = false;
    o.inject_faults = 300;
    let (r, _) = run(sim(1, 4, ""), &o);
    let g = &r.gpus[0];
    assert_eq!((g.injected_flips, g.injected_found), (300, 300));
    assert_eq!(
        g.memory_errors, 300,
        "each flip once: the rewrite repairs it"
    );
}

#[test]
fn wrong_compute_results_fail_the_gpu() {
    let mut o = opts(1.5);
    o.memory = false;
    let (r, _) = run(sim(1, 4, "bad-fma,bad-gemm"), &o);
    let g = &r.gpus[0];
    assert!(g.compute_launches >= 2);
    assert_eq!(
        g.compute_errors % 64,
        0,
        "whole thread classes: {}",
        g.compute_errors
    );
    assert!(g.compute_errors > 0);
    assert_eq!(g.gemm_errors, 1, "one element once (the third SGEMM)");
}

#[test]
fn the_gpu_selection() {
    let mut o = opts(0.5);
    o.selected = Some(vec![1]);
    let (r, _) = run(sim(3, 4, ""), &o);
    let idx: Vec<Option<u32>> = r.gpus.iter().map(|g| g.index).collect();
    assert_eq!(idx, [Some(1)]);
}

#[test]
fn a_stop_request_ends_the_run_quickly() {
    let o = opts(60.0);
    let stop = o.stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let t = Instant::now();
    let (r, _) = run(sim(2, 4, ""), &o);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(r.interrupted_by.as_deref(), Some("signal"));
    assert_eq!(r.gpus.len(), 2);
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.env("GPUDOCTOR_SIM_MEM_MIB", "4").env("NO_COLOR", "1");
    c
}

#[test]
fn formats_and_exit_codes_through_the_binary() {
    // Healthy: exit 0, the JSON report of check's contract.
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .args(["stress", "--seconds", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "gpudoctor.report/1");
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["snapshot"]["stress"]["gpus"].as_array().unwrap().len(), 2);
    // A faulty GPU: exit 1 (gpu-burn would exit 0), the finding names what failed.
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_FAULTS", "stuck-bit")
        .args(["stress", "--seconds", "1", "--format", "jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["event"], "start");
    assert!(lines
        .iter()
        .any(|l| l["event"] == "memory_errors" && l["first"][0]["offset"] == 400));
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "report");
    let f = common::finding(&last["report"], "stress.memory");
    assert_eq!(
        (f["severity"].as_str(), f["category"].as_str()),
        (Some("error"), Some("stress_failure"))
    );
    // Xid 79 under load: hardware_fault; human output; progress lines on stderr.
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_FAULTS", "xid79")
        .args(["stress", "--seconds", "1.5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("[✗] Stress test: 1 GPU(s)"), "{stdout}");
    assert!(stdout.contains("✗ GPU 0 (gpudoctor simulated GPU): Xid 79 (GPU_HAS_FALLEN_OFF_THE_BUS) during the test"), "{stdout}");
    assert!(
        stdout.contains("rule stress.watch · hardware_fault"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("GPU 0: Xid 79"), "{stderr}");
    assert!(
        stderr.contains("GPU 0: ") && stderr.contains("rounds"),
        "a final progress line: {stderr}"
    );
}

/// An application-class Xid (31, an illegal address) while gpudoctor's own kernels kept
/// verifying came from another process, as on the H100 of docs/validation/h100-2026-11-23-run1:
/// a warning, not a failed GPU. The same Xid with wrong results of our own fails the GPU.
#[test]
fn an_application_xid_from_another_process_is_not_a_gpu_fault() {
    let run = |faults: &str| {
        let out = bin()
            .env("GPUDOCTOR_SIM_GPUS", "1")
            .env("GPUDOCTOR_SIM_FAULTS", faults)
            .args(["stress", "--seconds", "1.5", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let xid: Vec<serde_json::Value> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["evidence"]["xid"] == 31)
            .cloned()
            .collect();
        assert_eq!(xid.len(), 1, "{v:#}");
        (out.status.code(), xid[0].clone())
    };
    let (code, f) = run("xid31");
    assert_eq!(code, Some(0));
    assert_eq!(
        (f["severity"].as_str(), f["category"].as_str()),
        (Some("warning"), Some("application_error"))
    );
    assert!(f["title"]
        .as_str()
        .unwrap()
        .ends_with("Xid 31 (FIFO_ERROR_MMU_ERR_FLT) from another process during the test"));
    let (code, f) = run("xid31,stuck-bit");
    assert_eq!(code, Some(1));
    assert_eq!(
        (f["severity"].as_str(), f["category"].as_str()),
        (Some("error"), Some("hardware_fault"))
    );
}

/// `--inject-faults` on a healthy GPU proves detection without failing it (the H100 run of
/// docs/validation/h100-2026-11-23-run1 exited 1 with "100 memory word(s) read back wrong", all
/// of them its own flips); a real stuck bit still fails, with the GPU's index in the fix.
#[test]
fn injected_flips_alone_do_not_fail_the_gpu() {
    let run = |faults: &str| {
        let out = bin()
            .env("GPUDOCTOR_SIM_GPUS", "1")
            .env("GPUDOCTOR_SIM_FAULTS", faults)
            .args([
                "stress",
                "--seconds",
                "2",
                "--inject-faults",
                "50",
                "--json",
            ])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v["findings"].as_array().unwrap().clone())
    };
    let (code, f) = run("");
    assert_eq!(code, Some(0), "{f:#?}");
    assert!(f.iter().all(|f| f["severity"] == "info"), "{f:#?}");
    assert!(f.iter().any(|f| f["title"]
        .as_str()
        .unwrap()
        .contains("50 of 50 injected bit flips found")));
    assert!(!f
        .iter()
        .any(|f| f["title"].as_str().unwrap().contains("read back wrong")));
    let (code, f) = run("stuck-bit");
    assert_eq!(code, Some(1));
    let wrong = f
        .iter()
        .find(|f| f["title"].as_str().unwrap().contains("read back wrong"))
        .expect("the stuck bit is an error");
    let cmds: Vec<&str> = wrong["fix"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(cmds.contains(&"sudo nvidia-smi -r -i 0"), "{cmds:?}");
    assert!(!cmds.iter().any(|c| c.ends_with(" N")), "{cmds:?}");
}

/// A GPU whose Xid events cannot be registered is said so (info), and the rest of the watch runs.
#[test]
fn a_gpu_without_xid_events_is_named() {
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .env("GPUDOCTOR_SIM_FAULTS", "noxid")
        // 3 s: under load (two builds on 2 CPUs) a 1 s run twice ended before the watch's first
        // sample.
        .args(["stress", "--seconds", "3", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["title"]
                .as_str()
                .unwrap()
                .ends_with("Xid events not watched")
        })
        .collect();
    assert_eq!(f.len(), 1, "GPU 0 only: {v:#}");
    assert_eq!(f[0]["gpu"], 0);
    assert!(f[0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("nvmlDeviceRegisterEvents(Xid): Not Supported."));
    let g = &v["snapshot"]["stress"]["gpus"];
    assert!(
        g[0]["watch"]["samples"].as_u64().unwrap() >= 1,
        "the rest of the watch ran"
    );
    assert!(g[1]["watch"].get("xids_unwatched").is_none());
}

/// A watch whose NVML calls hang after `ok` samples (a wedged driver).
struct HangingMonitor {
    ok: u32,
}

impl gpudoctor::gpu::stress::Monitor for HangingMonitor {
    fn sample(&mut self, _index: u32) -> Option<gpudoctor::gpu::stress::Sample> {
        if self.ok == 0 {
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        self.ok -= 1;
        Some(gpudoctor::gpu::stress::Sample {
            temperature_c: Some(50),
            ..Default::default()
        })
    }
    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        std::thread::sleep(wait);
        Vec::new()
    }
}

/// NVML hanging in the middle of a run: the run still ends on time (the watch runs on its own
/// thread), keeps the samples taken before, and says the watch stopped. Before, the stress loop
/// called NVML itself and hung for good.
#[test]
fn a_watch_that_hangs_does_not_hang_the_run() {
    use gpudoctor::gpu::watch::{DeadMonitor, ThreadedMonitor};
    let o = opts(7.0);
    let t = Instant::now();
    let m = ThreadedMonitor::start(Box::new(HangingMonitor { ok: 2 }));
    let r = stress::run(Arc::new(sim(1, 4, "")), &o, Some(Box::new(m)), &mut |_| {});
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let w = &r.gpus[0].watch;
    // The loop reads the newest sample once a second: under load two of the worker's samples
    // can fall between two reads, but the last one before the hang is always kept.
    assert!((1..=2).contains(&w.samples), "{w:?}");
    assert!(
        w.unavailable
            .as_deref()
            .is_some_and(|u| u.starts_with("NVML stopped answering")),
        "{w:?}"
    );
    // A watch that never opened says why.
    let m = DeadMonitor("NVML did not answer within 5 s".into());
    let r = stress::run(
        Arc::new(sim(1, 4, "")),
        &opts(0.5),
        Some(Box::new(m)),
        &mut |_| {},
    );
    assert_eq!(
        r.gpus[0].watch.unavailable.as_deref(),
        Some("NVML did not answer within 5 s")
    );
}

#[cfg(unix)]
fn interrupted(signal: i32, code: i32) {
    let child = bin()
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .args(["stress", "--minutes", "10", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "exited {took:?} after the signal"
    );
    assert_eq!(out.status.code(), Some(code));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = if signal == libc::SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    assert_eq!(v["snapshot"]["stress"]["interrupted_by"], name);
    let f = common::finding(&v, "stress.run");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Interrupted by {name} after")),
        "{f}"
    );
    assert_eq!(
        v["snapshot"]["stress"]["gpus"].as_array().unwrap().len(),
        2,
        "the partial summary"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_gives_130_and_the_partial_report() {
    interrupted(libc::SIGINT, 130);
}

#[cfg(unix)]
#[test]
fn sigterm_gives_143() {
    interrupted(libc::SIGTERM, 143);
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        vec!["stress", "--seconds", "0"],
        vec!["stress", "--minutes", "-1"],
        vec!["stress", "--memory-fraction", "1.5"],
        vec!["stress", "--memory-fraction", "1.0"],
        vec!["stress", "--tests", "memory,disk"],
        vec!["stress", "--inject-faults", "5000"],
        vec!["stress", "--minutes", "1", "--seconds", "5"],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error"),
            "{args:?}"
        );
    }
}

#[test]
fn without_a_driver_stress_fails_at_once_in_every_format() {
    if common::has_driver() {
        eprintln!("skipping: this machine has an NVIDIA driver");
        return;
    }
    for format in ["human", "json", "jsonl"] {
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
            .args(["stress", "--seconds", "30", "--format", format])
            .output()
            .unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{format}: {:?}",
            t.elapsed()
        );
        assert_eq!(out.status.code(), Some(1), "{format}");
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            s.contains("No NVIDIA driver: the stress test cannot run"),
            "{format}: {s}"
        );
        assert!(s.contains("driver_missing"), "{format}: {s}");
    }
}

#[test]
fn half_and_bfloat16_conversions() {
    use gpudoctor::gpu::{f16_to_f32, f32_to_bf16, f32_to_f16, GemmType};
    // IEEE 754 binary16 and bfloat16 bit patterns of known values.
    assert_eq!(f32_to_f16(1.0), 0x3C00);
    assert_eq!(f32_to_f16(0.5), 0x3800);
    assert_eq!(f32_to_f16(-2.0), 0xC000);
    assert_eq!(f32_to_f16(65504.0), 0x7BFF);
    assert_eq!(f32_to_f16(1.0 / 256.0), 0x1C00);
    assert_eq!(
        f32_to_f16(1.0 + 1.0 / 2048.0),
        0x3C00,
        "a tie rounds to even"
    );
    assert_eq!(
        f32_to_f16(1.0 + 3.0 / 2048.0),
        0x3C02,
        "a tie rounds to even (up)"
    );
    assert_eq!(f32_to_bf16(1.0), 0x3F80);
    assert_eq!(f32_to_bf16(-0.75), 0xBF40);
    assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    // The stress GEMM inputs k/256 are exact in every type.
    let v: Vec<f32> = (0..256).map(|k| k as f32 / 256.0).collect();
    for ty in GemmType::ALL {
        assert_eq!(ty.decode(&ty.encode(&v)), v, "{ty:?}");
    }
}

#[test]
fn gemm_types_an_old_gpu_lacks_are_skipped_not_failed() {
    // cublasGemmEx with fp16 on sm_52 answers ARCH_MISMATCH (8), not NOT_SUPPORTED (15).
    let mut o = opts(1.0);
    o.memory = false;
    let (r, _) = run(sim(1, 4, "maxwell"), &o);
    let g = &r.gpus[0];
    assert!(g.failure.is_none(), "{g:?}");
    assert_eq!(g.gemm_types, ["sgemm"]);
    assert_eq!(g.gemm_skipped.len(), 2, "{:?}", g.gemm_skipped);
    assert!(g.gemm_skipped[0].contains("CUBLAS_STATUS_ARCH_MISMATCH"));
    assert!(g.gemm_launches >= 1);
}

#[test]
fn every_gemm_type_runs_and_is_compared() {
    let mut o = opts(1.5);
    o.memory = false;
    let (r, _) = run(sim(1, 4, "bad-gemm"), &o);
    let g = &r.gpus[0];
    assert_eq!(g.gemm_types, ["sgemm", "hgemm", "bf16gemm"]);
    assert!(g.hgemm_gflops.is_some() && g.bf16_gflops.is_some());
    assert!(g.gemm_launches >= 3, "{g:?}");
    assert_eq!(g.gemm_errors, 1, "one element of one fp16 result");
}

/// The FMA burn's values keep their size (Minsky's circle map has determinant 1): finite,
/// bounded, different per thread class, and changed by more steps.
#[test]
fn the_fma_burn_values_stay_bounded() {
    let v = stress::fma_burn_expected(stress::FMA_ITERS);
    assert_eq!(v.len(), 64);
    for x in &v {
        assert!(x.is_finite() && x.abs() < 1000.0, "{v:?}");
    }
    let distinct: std::collections::HashSet<u32> = v.iter().map(|x| x.to_bits()).collect();
    assert!(distinct.len() > 32, "{v:?}");
    assert_ne!(v, stress::fma_burn_expected(stress::FMA_ITERS + 4));
    assert_eq!(
        stress::fma_burn_expected(10),
        stress::fma_burn_expected(8),
        "the kernel runs iters & !3 steps"
    );
}

/// A run too short for one round of the memory patterns does not pass silently: a warning
/// (exit 0 under --fail-on error, verdict warn) that says so and how to run longer. It used to
/// pass with 0 rounds.
#[test]
fn a_run_without_a_full_memory_round_warns() {
    let out = bin()
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_FAULTS", "slow")
        .args(["stress", "--seconds", "0.5", "--tests", "memory", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["snapshot"]["stress"]["gpus"][0]["memory_rounds"], 0);
    assert_eq!(v["verdict"], "warn", "{v:#}");
    let f = common::finding(&v, "stress.memory");
    assert_eq!(f["severity"], "warning", "{f:#}");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .ends_with("the memory test did not complete a round"),
        "{f:#}"
    );
    assert_eq!(
        f["fix"]["commands"][0],
        "gpudoctor stress --minutes 5 --gpu 0"
    );
}

/// A simulated backend whose GPU `held` refuses a context (another job holds it in
/// EXCLUSIVE_PROCESS mode: CUDA_ERROR_DEVICE_UNAVAILABLE, 46) and which counts opens.
struct Held {
    sim: SimBackend,
    held: u32,
    opened: std::sync::atomic::AtomicU32,
}

impl gpudoctor::gpu::Backend for Held {
    fn init(&self) -> Result<i32, gpudoctor::snapshot::GpuCallError> {
        self.sim.init()
    }
    fn device_count(&self) -> Result<u32, gpudoctor::snapshot::GpuCallError> {
        self.sim.device_count()
    }
    fn describe(
        &self,
        ordinal: u32,
    ) -> Result<gpudoctor::gpu::DeviceInfo, gpudoctor::snapshot::GpuCallError> {
        self.sim.describe(ordinal)
    }
    fn open(
        &self,
        ordinal: u32,
    ) -> Result<Box<dyn gpudoctor::gpu::Device>, gpudoctor::snapshot::GpuCallError> {
        if ordinal == self.held {
            return Err(gpudoctor::snapshot::GpuCallError {
                call: "cuDevicePrimaryCtxRetain".into(),
                code: Some(46),
                name: "CUDA_ERROR_DEVICE_UNAVAILABLE".into(),
                message: "held by another process".into(),
            });
        }
        self.opened
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.sim.open(ordinal)
    }
    fn cublas(&self) -> Result<String, String> {
        self.sim.cublas()
    }
}

/// `stress --gpu 0` beside a GPU another job holds exclusively: that GPU is never opened (no
/// context retained on it) and not reported failed. Every GPU used to be opened before the
/// selection was applied (issue 29 item 3).
#[test]
fn an_unselected_gpu_is_never_opened() {
    let b = Arc::new(Held {
        sim: sim(2, 4, ""),
        held: 1,
        opened: std::sync::atomic::AtomicU32::new(0),
    });
    let mut o = opts(0.5);
    o.selected = Some(vec![0]);
    let m = SimMonitor::new(&SimFaults::default());
    let r = stress::run(b.clone(), &o, Some(Box::new(m)), &mut |_| {});
    assert_eq!(b.opened.load(std::sync::atomic::Ordering::SeqCst), 1);
    let failed: Vec<_> = r.gpus.iter().filter(|g| g.failure.is_some()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let idx: Vec<Option<u32>> = r.gpus.iter().map(|g| g.index).collect();
    assert_eq!(idx, [Some(0)]);
    assert!(r.gpus[0].memory_rounds > 0 || r.gpus[0].compute_launches > 0);
}

/// A GPU under Windows' WDDM gets at most 85 % of its free memory tested, however much is asked
/// for: at the usual 97 % WDDM pages the test's memory out to system RAM (issue 29 item 4).
/// The other GPU of the run keeps the fraction asked for.
#[test]
fn a_wddm_gpu_is_not_overcommitted() {
    let mut o = opts(0.3);
    o.compute = false;
    o.wddm = vec![1];
    let (r, _) = run(sim(2, 64, ""), &o);
    let frac = |i: u32| {
        let g = r.gpus.iter().find(|g| g.index == Some(i)).unwrap();
        g.tested_bytes as f64 / g.free_bytes as f64
    };
    assert!(frac(1) <= stress::WDDM_MAX_MEMORY_FRACTION, "{}", frac(1));
    assert!(frac(1) > 0.80, "{}", frac(1));
    assert!(frac(0) > 0.90, "{}", frac(0));
    assert_eq!(stress::memory_fraction_for(0.97, true), 0.85);
    assert_eq!(stress::memory_fraction_for(0.5, true), 0.5);
    assert_eq!(stress::memory_fraction_for(0.97, false), 0.97);
}
