//! `gpudoctor stress`: a memory pattern test over nearly all free memory and a verified compute
//! burn on every selected GPU at once, with a health watch, for a set time.
//!
//! Each GPU has a worker thread that owns its [`Device`] and loops until the deadline or a stop
//! request (Ctrl-C, SIGTERM): one memory step over every chunk, then one compute burst. The
//! memory steps are memtest's (cuda_memtest, memtestG80: ../shared/reference/anchors.md §3):
//! own address, walking ones and zeros, fixed 0xAAAAAAAA/0x55555555 and seeded random patterns,
//! each as a moving inversion (fill; verify and write the complement; verify), all generated
//! and verified on the GPU ([`crate::gpu::STRESS_PTX`]). The compute burst is an FMA rotation
//! whose result is known bit for bit, and with cuBLAS an SGEMM whose result is compared with the
//! first one as gpu-burn and DCGM do (|Δ| > 1e-3). Workers report through [`Event`]s; the
//! caller's thread renders them and samples the [`Monitor`] every second.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{Arg, Backend, Buf, Device, GemmType, SMOKE_PTX, STRESS_PTX};
use crate::probe::deadline;
use crate::snapshot::{GpuCallError, MemoryError, StressGpu, StressRun, StressWatch};

/// Mismatches logged per check kernel (the rest are counted).
pub const MAX_LOG: u32 = 1024;
/// Memory errors kept in the report per GPU.
pub const KEEP_ERRORS: usize = 64;
/// FMA burn steps per thread per launch.
pub const FMA_ITERS: u32 = 8192;
/// gpu-burn's fp32 tolerance between GEMM results (anchors.md §2).
pub const GEMM_TOLERANCE: f32 = 1e-3;
/// The most of the free memory the memory test may take (`--memory-fraction`). The rest is
/// for what the driver and cuBLAS allocate while the test runs: the context's own growth,
/// cuBLAS's workspace, and kernels loaded at first use under lazy loading
/// (`CUDA_MODULE_LOADING=LAZY`, the default from CUDA 12.2; CUDA C++ Programming Guide, "Lazy
/// Loading"). 3 % is 2.4 GB of an 80 GB GPU; the default fraction is this cap, which with the
/// compute buffers still covers the 95 % of free memory the design asks for.
pub const MAX_MEMORY_FRACTION: f64 = 0.97;
/// Every kernel `stress` launches, loaded before the memory is taken.
pub const KERNELS: [&str; 6] = [
    "copy_v4",
    "mem_fill",
    "mem_check",
    "mem_flip",
    "fma_burn",
    "cmp_f32",
];

/// The value of word `i` in a pattern (the host twin of the PTX; see stress.ptx).
pub fn pattern_value(mode: u32, i: u64, a: u32) -> u32 {
    let (lo, hi) = (i as u32, (i >> 32) as u32);
    match mode {
        0 => lo ^ hi.wrapping_mul(0x9E37_79B1) ^ a,
        1 => a,
        _ => {
            let mut h = lo.wrapping_mul(0x9E37_79B1) ^ hi.wrapping_mul(0x85EB_CA77) ^ a;
            h ^= h >> 16;
            h = h.wrapping_mul(0x7FEB_352D);
            h ^= h >> 15;
            h = h.wrapping_mul(0x846C_A68B);
            h ^= h >> 16;
            h
        }
    }
}

/// What `fma_burn` computes for each of its 64 thread classes (the host twin of the PTX).
pub fn fma_burn_expected(iters: u32) -> Vec<f32> {
    let (c, s) = (0.6f32, 0.8f32);
    (0..64u32)
        .map(|class| {
            let base = class as f32 * 0.125;
            let mut x = [base + 1.0, base + 2.0, base + 3.0, base + 4.0];
            let mut y = [0.5f32, 0.75, 1.0, 1.25];
            for _ in 0..iters {
                for p in 0..4 {
                    let (xn, yn) = (x[p].mul_add(c, y[p] * -s), x[p].mul_add(s, y[p] * c));
                    x[p] = xn;
                    y[p] = yn;
                }
            }
            x[0] + y[0] + x[1] + y[1] + x[2] + y[2] + x[3] + y[3]
        })
        .collect()
}

/// The words and bits `mem_flip` flips (the host twin of the PTX).
pub fn injected_flips(n_words: u64, count: u32, seed: u32) -> Vec<(u64, u32)> {
    if count == 0 || n_words < u64::from(count) {
        return Vec::new();
    }
    let stride = n_words / u64::from(count);
    (0..count)
        .map(|t| {
            let word = u64::from(t) * stride + u64::from(seed) % stride;
            (word, (t.wrapping_mul(7).wrapping_add(seed)) & 31)
        })
        .collect()
}

/// One step of a memory round: fill, or check (and maybe rewrite) a pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemStep {
    Fill {
        mode: u32,
        a: u32,
    },
    Check {
        mode: u32,
        a: u32,
        then: Option<(u32, u32)>,
    },
}

/// The steps of memory round `r`: four moving inversions (own address, walking bit r % 32,
/// 0xAAAAAAAA/0x55555555, random with seed r), each fill → check and write the complement →
/// check. Named for reports.
pub fn round_steps(r: u64) -> Vec<(&'static str, MemStep)> {
    let bit = 1u32 << (r % 32);
    let seed = (r as u32).wrapping_mul(0x2545_F491).wrapping_add(1);
    let inversion = |name: &'static str, mode: u32, a: u32, then: (u32, u32)| {
        vec![
            (name, MemStep::Fill { mode, a }),
            (
                name,
                MemStep::Check {
                    mode,
                    a,
                    then: Some(then),
                },
            ),
            (
                name,
                MemStep::Check {
                    mode: then.0,
                    a: then.1,
                    then: None,
                },
            ),
        ]
    };
    let mut v = inversion("own address", 0, 0, (0, !0));
    v.extend(inversion("walking ones/zeros", 1, bit, (1, !bit)));
    v.extend(inversion(
        "fixed 0xAAAAAAAA/0x55555555",
        1,
        0xAAAA_AAAA,
        (1, 0x5555_5555),
    ));
    v.extend(inversion("random", 2, seed, (2, seed ^ 0x9E37_79B9)));
    v
}

/// Bytes a step reads and writes per byte of memory.
fn traffic(step: &MemStep) -> f64 {
    match step {
        MemStep::Fill { .. } => 1.0,
        MemStep::Check { then: Some(_), .. } => 2.0,
        MemStep::Check { then: None, .. } => 1.0,
    }
}

/// What a stress run does.
#[derive(Debug, Clone)]
pub struct StressOptions {
    pub duration: Duration,
    pub memory: bool,
    pub compute: bool,
    /// Fraction of the memory free at start to test.
    pub memory_fraction: f64,
    /// Bit flips to inject after the first fill (0: none).
    pub inject_faults: u32,
    /// NVML's GPUs as (index, PCI bus id), and the `--gpu` selection of NVML indexes.
    pub nvml_gpus: Vec<(u32, Option<String>)>,
    pub selected: Option<Vec<u32>>,
    /// Set to stop early (a signal); the workers finish their current kernel and free memory.
    pub stop: Arc<AtomicBool>,
    /// How long to wait for workers after the deadline or a stop before giving up on them.
    pub grace: Duration,
}

/// A progress event, for the live view and JSON Lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Start {
        gpu: u32,
        name: String,
        free_bytes: u64,
        tested_bytes: u64,
        seconds: f64,
    },
    Progress {
        gpu: u32,
        elapsed_s: f64,
        memory_rounds: u64,
        memory_errors: u64,
        compute_launches: u64,
        compute_errors: u64,
        gemm_errors: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        memory_gbps: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        fma_gflops: Option<f64>,
    },
    MemoryErrors {
        gpu: u32,
        pattern: String,
        count: u64,
        first: Vec<MemoryError>,
    },
    ComputeErrors {
        gpu: u32,
        test: String,
        count: u64,
    },
    Sample {
        gpu: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        temperature_c: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        power_w: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        sm_mhz: Option<u32>,
        clock_events: Vec<String>,
    },
    Xid {
        gpu: u32,
        xid: u64,
    },
    Failed {
        gpu: u32,
        error: GpuCallError,
    },
    Done {
        gpu: u32,
    },
}

/// One health sample of one GPU (from NVML).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    pub sm_mhz: Option<u32>,
    /// NVML clock event reason bits.
    pub clock_event_reasons: Option<u64>,
    pub ecc_corrected: Option<u64>,
    pub ecc_uncorrected: Option<u64>,
    pub remap_pending: Option<bool>,
    pub pcie_replays: Option<u64>,
}

/// The health watch: samples by NVML index, and Xid events.
pub trait Monitor: Send {
    fn sample(&mut self, index: u32) -> Option<Sample>;
    /// Xid events since the last call as (NVML index, Xid), waiting at most `wait`.
    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)>;
    /// GPUs (NVML index) whose Xid events are not watched, and why.
    fn unwatched(&self) -> Vec<(u32, String)> {
        Vec::new()
    }
    /// Why the watch watched nothing, or stopped (NVML hung).
    fn unavailable(&self) -> Option<String> {
        None
    }
}

/// NVML clock event reasons that mean the GPU slowed itself under load
/// (nvml.h, nvmlClocksEventReason*), by name.
pub const CLOCK_EVENTS: [(u64, &str); 6] = [
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x10, "sync_boost"),
];

/// Folds one sample into a GPU's watch; `base` holds the first sample's counters.
pub fn fold_sample(w: &mut StressWatch, base: &Sample, s: &Sample) {
    w.samples += 1;
    if let Some(t) = s.temperature_c {
        w.max_temperature_c = Some(w.max_temperature_c.map_or(t, |m| m.max(t)));
    }
    if let Some(p) = s.power_w {
        w.max_power_w = Some(w.max_power_w.map_or(p, |m| m.max(p)));
    }
    if let Some(c) = s.sm_mhz {
        w.min_sm_mhz = Some(w.min_sm_mhz.map_or(c, |m| m.min(c)));
    }
    if let Some(bits) = s.clock_event_reasons {
        for (bit, name) in CLOCK_EVENTS {
            if bits & bit != 0 {
                *w.clock_events.entry(name.to_string()).or_insert(0) += 1;
            }
        }
    }
    let delta = |now: Option<u64>, then: Option<u64>| match (now, then) {
        (Some(n), Some(t)) => n.saturating_sub(t),
        _ => 0,
    };
    w.ecc_corrected_delta = w
        .ecc_corrected_delta
        .max(delta(s.ecc_corrected, base.ecc_corrected));
    w.ecc_uncorrected_delta = w
        .ecc_uncorrected_delta
        .max(delta(s.ecc_uncorrected, base.ecc_uncorrected));
    w.pcie_replay_delta = w
        .pcie_replay_delta
        .max(delta(s.pcie_replays, base.pcie_replays));
    w.remap_pending |= s.remap_pending == Some(true) && base.remap_pending != Some(true);
}

fn clock_names(bits: Option<u64>) -> Vec<String> {
    let b = bits.unwrap_or(0);
    CLOCK_EVENTS
        .iter()
        .filter(|(bit, _)| b & bit != 0)
        .map(|(_, n)| (*n).to_string())
        .collect()
}

/// Runs the stress test; `on_event` sees every event in order, on the calling thread.
pub fn run(
    backend: Arc<dyn Backend>,
    opts: &StressOptions,
    mut monitor: Option<Box<dyn Monitor>>,
    on_event: &mut dyn FnMut(&Event),
) -> StressRun {
    let start = Instant::now();
    let mut run = StressRun {
        planned_seconds: opts.duration.as_secs_f64(),
        tests: [(opts.memory, "memory"), (opts.compute, "compute")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| (*n).to_string())
            .collect(),
        ..Default::default()
    };
    let b = backend.clone();
    let init = deadline::spawn("stress-init", move || {
        let v = b.init()?;
        Ok::<_, GpuCallError>((v, b.device_count()?, b.cublas().is_ok()))
    });
    let (count, blas) = match init.wait(start + Duration::from_secs(30)) {
        (deadline::Outcome::Done(Ok((_, n, blas))), _) => (n, blas),
        (deadline::Outcome::Done(Err(e)), _) => {
            run.error = Some(e);
            return run;
        }
        (other, took) => {
            let message = match other {
                deadline::Outcome::Panicked(p) => format!("the CUDA library failed: {p}"),
                _ => format!(
                    "the driver did not initialise within {} ms",
                    took.as_millis()
                ),
            };
            run.error = Some(GpuCallError {
                call: "cuInit".into(),
                message,
                ..Default::default()
            });
            return run;
        }
    };
    let until = start + opts.duration;
    let (tx, rx) = mpsc::channel::<Event>();
    let mut workers = Vec::new();
    for ordinal in 0..count {
        let shared = Arc::new(Mutex::new(StressGpu {
            ordinal,
            ..Default::default()
        }));
        let (b, s, o, t) = (backend.clone(), shared.clone(), opts.clone(), tx.clone());
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let _ = std::thread::Builder::new()
            .name(format!("probe-stress-{ordinal}"))
            .spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    worker(b.as_ref(), ordinal, &s, &o, until, blas, &t)
                }));
                if let Err(p) = r {
                    let msg = crate::probe::deadline::panic_message(p.as_ref());
                    let error = GpuCallError {
                        call: "stress".into(),
                        message: format!("the CUDA library failed: {msg}"),
                        ..Default::default()
                    };
                    if let Ok(mut g) = s.lock() {
                        g.failure = Some(error.clone());
                    }
                    let _ = t.send(Event::Failed {
                        gpu: ordinal,
                        error,
                    });
                }
                d.store(true, Ordering::SeqCst);
            });
        workers.push((shared, done));
    }
    drop(tx);
    // The caller's thread: events, the watch every second, and the end.
    let mut bases: BTreeMap<u32, Sample> = BTreeMap::new();
    let mut watches: BTreeMap<u32, StressWatch> = BTreeMap::new();
    let mut next_sample = Instant::now();
    loop {
        let all_done = workers.iter().all(|(_, d)| d.load(Ordering::SeqCst));
        if all_done {
            while let Ok(e) = rx.try_recv() {
                on_event(&e);
            }
            break;
        }
        if opts.stop.load(Ordering::SeqCst) {
            // Wait up to the grace for the workers to free their memory, then go.
            let t = Instant::now();
            while t.elapsed() < opts.grace && !workers.iter().all(|(_, d)| d.load(Ordering::SeqCst))
            {
                if let Ok(e) = rx.recv_timeout(Duration::from_millis(20)) {
                    on_event(&e);
                }
            }
            while let Ok(e) = rx.try_recv() {
                on_event(&e);
            }
            break;
        }
        if Instant::now() > until + opts.grace {
            break; // a worker is stuck in a kernel: report what is known
        }
        if Instant::now() >= next_sample {
            next_sample += Duration::from_secs(1);
            if let Some(m) = monitor.as_mut() {
                let indexes: Vec<u32> = workers
                    .iter()
                    .filter_map(|(s, _)| s.lock().ok().and_then(|g| g.index))
                    .collect();
                for i in indexes {
                    if let Some(s) = m.sample(i) {
                        let base = bases.entry(i).or_insert_with(|| s.clone()).clone();
                        fold_sample(watches.entry(i).or_default(), &base, &s);
                        on_event(&Event::Sample {
                            gpu: i,
                            temperature_c: s.temperature_c,
                            power_w: s.power_w,
                            sm_mhz: s.sm_mhz,
                            clock_events: clock_names(s.clock_event_reasons),
                        });
                    }
                }
                for (i, xid) in m.xids(Duration::from_millis(10)) {
                    watches.entry(i).or_default().xids.push(xid);
                    on_event(&Event::Xid { gpu: i, xid });
                }
            }
        }
        if let Ok(e) = rx.recv_timeout(Duration::from_millis(100)) {
            on_event(&e);
        }
    }
    if opts.stop.load(Ordering::SeqCst) && run.interrupted_by.is_none() {
        run.interrupted_by = Some("signal".into());
    }
    for (shared, _) in workers {
        let Ok(mut g) = shared.lock().map(|g| g.clone()) else {
            continue;
        };
        if let Some(i) = g.index {
            match watches.remove(&i) {
                Some(w) => g.watch = w,
                None if monitor.is_none() => {
                    g.watch.unavailable = Some("NVML is not available: temperatures, clocks, ECC and Xid events were not watched".into())
                }
                None => {}
            }
            if let Some(why) = monitor.as_ref().and_then(|m| m.unavailable()) {
                g.watch.unavailable = Some(crate::sanitize::clean_line(&why, 300));
            }
            if let Some(m) = monitor.as_ref() {
                g.watch.xids_unwatched = m
                    .unwatched()
                    .into_iter()
                    .find(|(u, _)| *u == i)
                    .map(|(_, why)| crate::sanitize::clean_line(&why, 300));
            }
        }
        run.gpus.push(g);
    }
    // A GPU with neither a name nor a failure was not selected (--gpu) and never ran.
    run.gpus.retain(|g| g.name.is_some() || g.failure.is_some());
    run.seconds = start.elapsed().as_secs_f64();
    run
}

/// Sends progress at most once a second.
struct Reporter<'a> {
    tx: &'a mpsc::Sender<Event>,
    gpu: u32,
    started: Instant,
    last: Instant,
}

fn snapshot(shared: &Mutex<StressGpu>) -> StressGpu {
    shared.lock().map(|g| g.clone()).unwrap_or_default()
}

impl Reporter<'_> {
    fn progress(&mut self, shared: &Mutex<StressGpu>, force: bool) {
        if !force && self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last = Instant::now();
        let g = snapshot(shared);
        let _ = self.tx.send(Event::Progress {
            gpu: self.gpu,
            elapsed_s: (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            memory_rounds: g.memory_rounds,
            memory_errors: g.memory_errors,
            compute_launches: g.compute_launches,
            compute_errors: g.compute_errors,
            gemm_errors: g.gemm_errors,
            memory_gbps: g.memory_gbps,
            fma_gflops: g.fma_gflops,
        });
    }
}

fn update(shared: &Mutex<StressGpu>, f: impl FnOnce(&mut StressGpu)) {
    if let Ok(mut g) = shared.lock() {
        f(&mut g);
    }
}

fn worker(
    backend: &dyn Backend,
    ordinal: u32,
    shared: &Mutex<StressGpu>,
    opts: &StressOptions,
    until: Instant,
    blas: bool,
    tx: &mpsc::Sender<Event>,
) {
    let mut dev = match backend.open(ordinal) {
        Ok(d) => d,
        Err(error) => {
            update(shared, |g| g.failure = Some(error.clone()));
            let _ = tx.send(Event::Failed {
                gpu: ordinal,
                error,
            });
            return;
        }
    };
    let info = dev.info().clone();
    let (index, wanted) = super::nvml_index(&info, &opts.nvml_gpus, opts.selected.as_deref());
    if !wanted {
        return;
    }
    let gpu = index.unwrap_or(ordinal);
    update(shared, |g| {
        g.index = index;
        g.name = Some(info.name.clone());
    });
    let r = stress_device(dev.as_mut(), gpu, shared, opts, until, blas, tx);
    if let Err(error) = r {
        update(shared, |g| g.failure = Some(error.clone()));
        let _ = tx.send(Event::Failed { gpu, error });
    }
    drop(dev); // frees every allocation
    let _ = tx.send(Event::Done { gpu });
}

fn stopped(opts: &StressOptions, until: Instant) -> bool {
    opts.stop.load(Ordering::SeqCst) || Instant::now() >= until
}

/// Memory and compute buffers of one GPU.
struct Plan {
    chunks: Vec<Buf>,
    errs: Buf,
    fma_expect: Buf,
    fma_errs: Buf,
    gemms: Vec<GemmSet>,
}

/// One GEMM type's buffers: inputs A and B, the first result C0 and each later result C1.
struct GemmSet {
    ty: GemmType,
    n: u32,
    a: Buf,
    b: Buf,
    c0: Buf,
    c1: Buf,
}

fn zero(dev: &mut dyn Device, b: Buf) -> Result<(), GpuCallError> {
    dev.upload(b, &vec![0u8; b.bytes])
}

fn read_u64s(dev: &mut dyn Device, b: Buf, n: usize) -> Result<Vec<u64>, GpuCallError> {
    let mut raw = vec![0u8; n * 8];
    dev.download(b, &mut raw)?;
    Ok(raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

fn stress_device(
    dev: &mut dyn Device,
    gpu: u32,
    shared: &Mutex<StressGpu>,
    opts: &StressOptions,
    until: Instant,
    blas: bool,
    tx: &mpsc::Sender<Event>,
) -> Result<(), GpuCallError> {
    dev.load_module(STRESS_PTX)?;
    dev.load_module(SMOKE_PTX)?;
    // Every kernel onto the GPU before the memory test takes the free memory: under lazy
    // loading a kernel first used later would need memory that is no longer there.
    dev.load_kernels(&KERNELS)?;
    let (free0, _total) = dev.mem_info()?;
    let sms = dev.info().multiprocessors.max(1);
    let grid = sms * 8;
    // The reference: device-to-device copy rate, measured here.
    let copy_bytes = ((free0 / 16) as usize).clamp(1 << 20, 256 << 20) & !15;
    let (s, d) = (dev.alloc(copy_bytes)?, dev.alloc(copy_bytes)?);
    let mut best = f64::INFINITY;
    for _ in 0..4 {
        let args = [Arg::Ptr(d), Arg::Ptr(s), Arg::U64((copy_bytes / 16) as u64)];
        best = best.min(dev.launch("copy_v4", grid, 256, &args)?);
    }
    dev.free(s)?;
    dev.free(d)?;
    let copy_gbps = super::cuda::rate_gbps(2.0 * copy_bytes as f64, best);
    update(shared, |g| g.copy_gbps = Some(super::round2(copy_gbps)));
    // Compute buffers first (small), then memory chunks up to the fraction of free memory.
    let expect = fma_burn_expected(FMA_ITERS);
    let fma_expect = dev.alloc(64 * 4)?;
    dev.upload(
        fma_expect,
        &expect
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect::<Vec<u8>>(),
    )?;
    let fma_errs = dev.alloc(8)?;
    zero(dev, fma_errs)?;
    let errs = dev.alloc(16 + 16 * MAX_LOG as usize)?;
    zero(dev, errs)?;
    let mut gemms = Vec::new();
    if opts.compute && blas {
        // 4096^3 keeps a GPU busy for milliseconds per GEMM while its four buffers of each type
        // stay under 1 % of an 80 GB GPU's memory (the pattern test wants the rest).
        let n: u32 = if free0 >= 4 << 30 { 4096 } else { 256 };
        let nn = n as usize * n as usize;
        // Inputs k/256 (k < 256): exact in f32, f16 and bf16, so every type sees the same values.
        let mut seed = 0x1234_5678u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed & 0xFF) as f32 / 256.0
        };
        let av: Vec<f32> = (0..nn).map(|_| next()).collect();
        let bv: Vec<f32> = (0..nn).map(|_| next()).collect();
        for ty in GemmType::ALL {
            let (a, b) = (dev.alloc(nn * ty.bytes())?, dev.alloc(nn * ty.bytes())?);
            let (c0, c1) = (dev.alloc(nn * 4)?, dev.alloc(nn * 4)?);
            dev.upload(a, &ty.encode(&av))?;
            dev.upload(b, &ty.encode(&bv))?;
            // The timed runs also leave the reference result in C0.
            match dev.gemm(ty, (n, n, n), a, b, c0, 2) {
                Ok(ms) => {
                    let gf = (2.0 * f64::from(n).powi(3) / (ms / 1000.0) / 1e9).round();
                    update(shared, |g| {
                        g.gemm_types.push(ty.name().to_string());
                        match ty {
                            GemmType::F32 => g.sgemm_gflops = Some(gf),
                            GemmType::F16 => g.hgemm_gflops = Some(gf),
                            GemmType::Bf16 => g.bf16_gflops = Some(gf),
                        }
                    });
                    gemms.push(GemmSet {
                        ty,
                        n,
                        a,
                        b,
                        c0,
                        c1,
                    });
                }
                // CUBLAS_STATUS_NOT_SUPPORTED (15): bf16 before Ampere, for one;
                // CUBLAS_STATUS_ARCH_MISMATCH (8): GemmEx with fp16 on sm_52 and older.
                Err(e)
                    if matches!(e.code, Some(15) | Some(8))
                        && e.call.starts_with("cublas")
                        && ty != GemmType::F32 =>
                {
                    for x in [a, b, c0, c1] {
                        dev.free(x)?;
                    }
                    update(shared, |g| {
                        g.gemm_skipped.push(format!(
                            "{}: not supported on this GPU ({})",
                            ty.name(),
                            e.name
                        ))
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }
    let mut chunks = Vec::new();
    if opts.memory {
        let target = (free0 as f64 * opts.memory_fraction) as u64;
        let mut have: u64 = chunks_bytes(&[fma_expect, fma_errs, errs]);
        for g in &gemms {
            have += chunks_bytes(&[g.a, g.b, g.c0, g.c1]);
        }
        let mut chunk: u64 = 1 << 30;
        // Chunks of 1 GiB, halved on out-of-memory down to 1 MiB (cuda_memtest shrinks its
        // request the same way, anchors.md section 3).
        while have < target && chunk >= 1 << 20 {
            let want = chunk.min(target - have) & !15;
            if want < 1 << 20 {
                break;
            }
            match dev.alloc(want as usize) {
                Ok(b) => {
                    have += want;
                    chunks.push(b);
                }
                Err(e) if e.code == Some(2) => chunk /= 2,
                Err(e) => return Err(e),
            }
        }
    }
    let tested: u64 = chunks_bytes(&chunks);
    update(shared, |g| {
        g.free_bytes = free0;
        g.tested_bytes = tested;
    });
    let _ = tx.send(Event::Start {
        gpu,
        name: dev.info().name.clone(),
        free_bytes: free0,
        tested_bytes: tested,
        seconds: opts.duration.as_secs_f64(),
    });
    let plan = Plan {
        chunks,
        errs,
        fma_expect,
        fma_errs,
        gemms,
    };
    let mut rep = Reporter {
        tx,
        gpu,
        started: Instant::now(),
        last: Instant::now(),
    };
    let (mut mem_bytes, mut mem_ms) = (0f64, 0f64);
    let (mut flops, mut fma_ms) = (0f64, 0f64);
    let mut round: u64 = 0;
    let mut step_i = 0usize;
    let mut steps = round_steps(0);
    let mut injected: Vec<(u64, u32)> = Vec::new();
    let mut kept = 0usize;
    while !stopped(opts, until) {
        if opts.memory && !plan.chunks.is_empty() {
            let Some((pattern, step)) = steps.get(step_i).copied() else {
                break;
            };
            for (ci, c) in plan.chunks.iter().enumerate() {
                let words = (c.bytes / 4) as u64;
                let ms = match step {
                    MemStep::Fill { mode, a } => dev.launch(
                        "mem_fill",
                        grid * 4,
                        256,
                        &[Arg::Ptr(*c), Arg::U64(words), Arg::U32(mode), Arg::U32(a)],
                    )?,
                    MemStep::Check { mode, a, then } => {
                        let (tm, ta) = then.unwrap_or((0, 0));
                        dev.launch(
                            "mem_check",
                            grid * 4,
                            256,
                            &[
                                Arg::Ptr(*c),
                                Arg::U64(words),
                                Arg::U32(mode),
                                Arg::U32(a),
                                Arg::Ptr(plan.errs),
                                Arg::U32(MAX_LOG),
                                Arg::U32(tm),
                                Arg::U32(ta),
                                Arg::U32(u32::from(then.is_some())),
                            ],
                        )?
                    }
                };
                mem_ms += ms;
                mem_bytes += traffic(&step) * c.bytes as f64;
                if round == 0 && step_i == 0 && ci == 0 && opts.inject_faults > 0 {
                    let n = opts.inject_faults.min(MAX_LOG);
                    dev.launch(
                        "mem_flip",
                        n.div_ceil(256),
                        256,
                        &[Arg::Ptr(*c), Arg::U64(words), Arg::U32(n), Arg::U32(12345)],
                    )?;
                    injected = injected_flips(words, n, 12345);
                    update(shared, |g| g.injected_flips = injected.len() as u64);
                }
                if let MemStep::Check { .. } = step {
                    let head = read_u64s(dev, plan.errs, 2)?;
                    let count = head.first().copied().unwrap_or(0);
                    if count > 0 {
                        let logged =
                            head.get(1).copied().unwrap_or(0).min(u64::from(MAX_LOG)) as usize;
                        let all = read_u64s(dev, plan.errs, 2 + 2 * logged)?;
                        let errors: Vec<MemoryError> = all
                            .get(2..)
                            .unwrap_or(&[])
                            .chunks_exact(2)
                            .map(|p| {
                                let (e, a) = ((p[1] >> 32) as u32, p[1] as u32);
                                MemoryError {
                                    offset: p[0] * 4,
                                    expected: e,
                                    actual: a,
                                    flipped_bits: e ^ a,
                                    pattern: pattern.to_string(),
                                }
                            })
                            .collect();
                        if ci == 0 && !injected.is_empty() {
                            let found = injected
                                .iter()
                                .filter(|(w, bit)| {
                                    errors
                                        .iter()
                                        .any(|e| e.offset == w * 4 && e.flipped_bits == 1 << bit)
                                })
                                .count() as u64;
                            update(shared, |g| g.injected_found += found);
                            injected.clear();
                        }
                        let first: Vec<MemoryError> = errors.iter().take(8).cloned().collect();
                        update(shared, |g| {
                            g.memory_errors += count;
                            for e in errors.iter().take(KEEP_ERRORS.saturating_sub(kept)) {
                                g.first_memory_errors.push(e.clone());
                            }
                        });
                        kept = (kept + errors.len()).min(KEEP_ERRORS);
                        let _ = tx.send(Event::MemoryErrors {
                            gpu,
                            pattern: pattern.into(),
                            count,
                            first,
                        });
                        zero(dev, plan.errs)?;
                    }
                }
                if stopped(opts, until) {
                    break;
                }
            }
            step_i += 1;
            if step_i >= steps.len() {
                step_i = 0;
                round += 1;
                steps = round_steps(round);
                update(shared, |g| g.memory_rounds = round);
            }
            if mem_ms > 0.0 {
                let r = super::round2(super::cuda::rate_gbps(mem_bytes, mem_ms));
                update(shared, |g| g.memory_gbps = Some(r));
            }
        }
        if opts.compute && !stopped(opts, until) {
            let ms = dev.launch(
                "fma_burn",
                grid,
                256,
                &[
                    Arg::Ptr(plan.fma_expect),
                    Arg::Ptr(plan.fma_errs),
                    Arg::U32(FMA_ITERS),
                ],
            )?;
            fma_ms += ms;
            flops += f64::from(grid) * 256.0 * f64::from(FMA_ITERS) * 24.0;
            let bad = take_errors(dev, plan.fma_errs, gpu, "fma", tx)?;
            let gf = if fma_ms > 0.0 {
                Some((flops / (fma_ms / 1000.0) / 1e9).round())
            } else {
                None
            };
            update(shared, |g| {
                g.compute_launches += 1;
                g.compute_errors += bad;
                g.fma_gflops = gf;
            });
            for g in &plan.gemms {
                let n = g.n;
                dev.gemm(g.ty, (n, n, n), g.a, g.b, g.c1, 0)?;
                dev.launch(
                    "cmp_f32",
                    grid * 4,
                    256,
                    &[
                        Arg::Ptr(g.c0),
                        Arg::Ptr(g.c1),
                        Arg::U64(u64::from(n) * u64::from(n)),
                        Arg::F32(GEMM_TOLERANCE),
                        Arg::Ptr(plan.fma_errs),
                    ],
                )?;
                let bad = take_errors(dev, plan.fma_errs, gpu, g.ty.name(), tx)?;
                update(shared, |s| {
                    s.gemm_launches += 1;
                    s.gemm_errors += bad;
                });
            }
        }
        if !opts.memory && !opts.compute {
            break;
        }
        rep.progress(shared, false);
    }
    rep.progress(shared, true);
    Ok(())
}

/// Reads a compute error counter, resets it, and reports a non-zero count as an event.
fn take_errors(
    dev: &mut dyn Device,
    counter: Buf,
    gpu: u32,
    test: &str,
    tx: &mpsc::Sender<Event>,
) -> Result<u64, GpuCallError> {
    let bad = read_u64s(dev, counter, 1)?.first().copied().unwrap_or(0);
    if bad > 0 {
        zero(dev, counter)?;
        let _ = tx.send(Event::ComputeErrors {
            gpu,
            test: test.into(),
            count: bad,
        });
    }
    Ok(bad)
}

fn chunks_bytes(b: &[Buf]) -> u64 {
    b.iter().map(|c| c.bytes as u64).sum()
}
