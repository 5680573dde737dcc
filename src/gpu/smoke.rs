//! The smoke tests `check` runs on each GPU: small, fast, and every result verified on the host.
//!
//! Steps, in order, each timed; the first failure skips the rest of that GPU's steps:
//! 1. `context`: the device's primary context (the driver API, no cudart).
//! 2. `memory`: 64 MiB written from the host, read back, every byte compared.
//! 3. `pcie`: host-to-device and device-to-host copy rates with pinned memory, one GPU at a
//!    time (GPUs sharing a PCIe switch would otherwise each see a share of it).
//! 4. `module`: our own PTX (ISA 7.0, sm_50), JIT-compiled by the driver for this GPU.
//! 5. `kernel`: integer and floating-point results compared exactly with the host's.
//! 6. `d2d`: a device-to-device copy through the SMs, its rate, the copy verified.
//! 7. `sgemm`: with cuBLAS, a 512 x 512 x 512 SGEMM against a host reference.
//! 8. `cudnn`: with cuDNN, a handle created and destroyed (in a helper process: a broken cuDNN
//!    aborts its host), after this process has released the GPU (a GPU in EXCLUSIVE_PROCESS
//!    mode takes one process's context at a time), within the time left.
//!
//! GPUs run in parallel, each on its own thread, all under one deadline; a GPU whose thread
//! misses it is reported with the step it was stuck in. The steps talk to the GPU only through
//! [`Backend`] and [`Device`], so tests drive them with a backend that fails where they ask.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Arg, Backend, Buf, Device, GemmType, SMOKE_PTX};
use crate::probe::breadcrumb;
use crate::probe::deadline::{self, Deadline, Outcome};
use crate::probe::libquery::{self, LibKind};
use crate::snapshot::{GpuCallError, Probed, SmokeGpu, SmokeRun, SmokeStep, StepStatus};

/// Bytes moved by the memory, PCIe and device-to-device steps.
pub const SMOKE_BYTES: usize = 64 << 20;
/// Elements computed by the arithmetic kernel.
pub const ARITH_N: u32 = 1 << 20;
/// SGEMM size (m = n = k).
pub const GEMM_N: u32 = 512;
/// The steps, in order.
pub const STEPS: [&str; 8] = [
    "context", "memory", "pcie", "module", "kernel", "d2d", "sgemm", "cudnn",
];

/// What the smoke tests need besides the backend.
#[derive(Debug, Clone)]
pub struct SmokeOptions {
    /// The whole smoke phase ends by this: what is left of the run's one deadline (in the
    /// `__smoke` child, the deadline its parent sent).
    pub deadline: Deadline,
    /// NVML's GPUs as (index, PCI bus id), to give each CUDA device its NVML index.
    pub nvml_gpus: Vec<(u32, Option<String>)>,
    /// Only these NVML indexes (`--gpu`); None for all.
    pub selected: Option<Vec<u32>>,
    /// The cuDNN step: gpudoctor's own executable (the helper) and the library to load.
    pub cudnn: Option<(PathBuf, PathBuf)>,
}

/// Runs the smoke tests. With no driver the result is absent, with why.
pub fn run(backend: Arc<dyn Backend>, opts: &SmokeOptions) -> Probed<SmokeRun> {
    let start = Instant::now();
    let until = opts.deadline.instant();
    let b = backend.clone();
    let init = deadline::spawn("smoke-init", move || {
        breadcrumb::at("cuInit");
        let v = b.init()?;
        breadcrumb::at("cuDeviceGetCount");
        let n = b.device_count()?;
        breadcrumb::at("loading cuBLAS");
        Ok::<_, GpuCallError>((v, n, b.cublas()))
    });
    let mut run = SmokeRun::default();
    let (driver, count) = match init.wait(until) {
        (Outcome::Done(Ok((v, n, blas))), _) => {
            run.cublas = match blas {
                Ok(name) => Probed::found(name),
                Err(why) => Probed::absent(why),
            };
            (v, n)
        }
        (Outcome::Done(Err(e)), _) if e.call == "dlopen libcuda" => {
            return Probed::absent_code("no_driver", format!("not run: {}", e.message));
        }
        (Outcome::Done(Err(e)), _) => {
            run.error = Some(e);
            run.millis = ms(start.elapsed());
            return Probed::found(run);
        }
        (Outcome::TimedOut, took) => {
            run.error = Some(GpuCallError {
                call: "cuInit".into(),
                code: None,
                name: String::new(),
                message: format!(
                    "the driver did not finish initialising within {} ms",
                    took.as_millis()
                ),
            });
            run.millis = ms(start.elapsed());
            return Probed::found(run);
        }
        (Outcome::Panicked(p), _) => {
            run.error = Some(GpuCallError {
                call: "cuInit".into(),
                code: None,
                name: String::new(),
                message: format!("the CUDA library failed: {p}"),
            });
            run.millis = ms(start.elapsed());
            return Probed::found(run);
        }
    };
    run.driver_cuda_version = Some(driver);
    if count > crate::probe::nvml::MAX_GPUS {
        run.error = Some(GpuCallError {
            call: "cuDeviceGetCount".into(),
            code: None,
            name: "NONSENSE_COUNT".into(),
            message: format!(
                "the driver said {count} GPUs, more than any node has (at most {} are tested): its answers are not to be trusted; reload the driver or reboot",
                crate::probe::nvml::MAX_GPUS
            ),
        });
        run.millis = ms(start.elapsed());
        return Probed::found(run);
    }
    let with_blas = run.cublas.is_found();
    let pending: Vec<_> = (0..count)
        .map(|ordinal| {
            let shared: Arc<Mutex<SmokeGpu>> = Arc::new(Mutex::new(SmokeGpu {
                ordinal,
                ..Default::default()
            }));
            let (b, s, o) = (backend.clone(), shared.clone(), opts.clone());
            let p = deadline::spawn("smoke-gpu", move || {
                gpu_steps(b.as_ref(), ordinal, &s, &o, with_blas, until)
            });
            (p, shared)
        })
        .collect();
    for (p, shared) in pending {
        let (outcome, took) = p.wait(until);
        let mut g = shared.lock().map(|g| g.clone()).unwrap_or_default();
        match outcome {
            Outcome::Done(true) => {}
            Outcome::Done(false) => continue, // not selected
            unfinished => record_unfinished(&mut g, unfinished, took),
        }
        run.gpus.push(g);
    }
    run.millis = ms(start.elapsed());
    Probed::found(run)
}

/// A GPU whose steps did not finish (timed out, or the library panicked): the step it was in
/// failed or timed out, and the rest skipped.
fn record_unfinished(g: &mut SmokeGpu, outcome: Outcome<bool>, took: Duration) {
    let done: Vec<&str> = g.steps.iter().map(|s| s.name.as_str()).collect();
    let stuck = STEPS
        .iter()
        .find(|s| !done.contains(s))
        .copied()
        .unwrap_or("cudnn");
    let (status, message) = match outcome {
        Outcome::Panicked(p) => (StepStatus::Failed, format!("the CUDA library failed: {p}")),
        _ => (
            StepStatus::TimedOut,
            format!(
                "did not finish within {} ms (--timeout); the GPU or the driver may be hung",
                took.as_millis()
            ),
        ),
    };
    g.steps.push(SmokeStep {
        name: stuck.into(),
        status,
        millis: 0,
        detail: String::new(),
        error: Some(GpuCallError {
            call: stuck.into(),
            code: None,
            name: String::new(),
            message,
        }),
    });
    skip_rest(g, stuck);
    g.millis = ms(took);
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// Marks every step after the failed one as skipped.
fn skip_rest(g: &mut SmokeGpu, failed: &str) {
    let from = STEPS
        .iter()
        .position(|s| *s == failed)
        .map_or(STEPS.len(), |i| i + 1);
    for s in STEPS.iter().skip(from) {
        if g.steps.iter().all(|x| x.name != *s) {
            g.steps.push(SmokeStep {
                name: (*s).into(),
                status: StepStatus::Skipped,
                millis: 0,
                detail: format!("not run after the {failed} step failed"),
                error: None,
            });
        }
    }
}

/// Records one step's outcome into the shared result; false when it failed.
fn record(
    shared: &Mutex<SmokeGpu>,
    name: &str,
    started: Instant,
    r: Result<String, GpuCallError>,
) -> bool {
    let (status, detail, error) = match r {
        Ok(d) => (StepStatus::Passed, d, None),
        Err(e) => (StepStatus::Failed, String::new(), Some(e)),
    };
    let ok = status == StepStatus::Passed;
    if let Ok(mut g) = shared.lock() {
        g.steps.push(SmokeStep {
            name: name.into(),
            status,
            millis: ms(started.elapsed()),
            detail,
            error,
        });
        if !ok {
            skip_rest(&mut g, name);
        } else if let Some(next) = STEPS.iter().skip_while(|s| **s != name).nth(1) {
            breadcrumb::at_gpu(g.ordinal, &format!("CUDA device {}: {next}", g.ordinal));
        }
    }
    ok
}

fn skipped(shared: &Mutex<SmokeGpu>, name: &str, why: String) {
    if let Ok(mut g) = shared.lock() {
        g.steps.push(SmokeStep {
            name: name.into(),
            status: StepStatus::Skipped,
            millis: 0,
            detail: why,
            error: None,
        });
    }
}

fn set(shared: &Mutex<SmokeGpu>, f: impl FnOnce(&mut SmokeGpu)) {
    if let Ok(mut g) = shared.lock() {
        f(&mut g);
    }
}

/// A wrong result: the check that failed and what it saw.
fn wrong(check: &str, message: String) -> GpuCallError {
    GpuCallError {
        call: check.into(),
        code: None,
        name: "WRONG_RESULT".into(),
        message,
    }
}

/// One GPU's steps. Returns false when the GPU is not selected (nothing was run on it).
fn gpu_steps(
    backend: &dyn Backend,
    ordinal: u32,
    shared: &Mutex<SmokeGpu>,
    opts: &SmokeOptions,
    with_blas: bool,
    until: Instant,
) -> bool {
    let r = gpu_steps_inner(backend, ordinal, shared, opts, with_blas, until);
    breadcrumb::gpu_done(ordinal);
    r
}

fn gpu_steps_inner(
    backend: &dyn Backend,
    ordinal: u32,
    shared: &Mutex<SmokeGpu>,
    opts: &SmokeOptions,
    with_blas: bool,
    until: Instant,
) -> bool {
    let t = Instant::now();
    breadcrumb::at_gpu(ordinal, &format!("CUDA device {ordinal}: context"));
    // The device is described (no context) and matched with --gpu first: opening it retains
    // its primary context, which takes memory on a GPU that may be another job's, and which a
    // GPU in EXCLUSIVE_PROCESS mode held by another process refuses (issue 29 item 3).
    let info = match backend.describe(ordinal) {
        Ok(i) => i,
        Err(e) => {
            record(shared, "context", t, Err(e));
            set(shared, |g| g.millis = ms(t.elapsed()));
            return true;
        }
    };
    let (index, wanted) = super::nvml_index(&info, &opts.nvml_gpus, opts.selected.as_deref());
    if !wanted {
        return false;
    }
    set(shared, |g| {
        g.index = index;
        g.name = Some(info.name.clone());
        g.pci_bus_id = info.pci_bus_id.clone();
        g.uuid = info.uuid.clone();
        g.compute_capability = Some(format!(
            "{}.{}",
            info.compute_capability.0, info.compute_capability.1
        ));
    });
    let mut dev = match backend.open(ordinal) {
        Ok(d) => d,
        Err(e) => {
            record(shared, "context", t, Err(e));
            set(shared, |g| g.millis = ms(t.elapsed()));
            return true;
        }
    };
    let info = dev.info().clone();
    record(
        shared,
        "context",
        t,
        Ok(format!(
            "primary context on {} (compute {}.{}, {} SMs, {:.1} GiB)",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.multiprocessors,
            info.total_bytes as f64 / (1u64 << 30) as f64
        )),
    );
    // A failed step is recorded in `shared`; the device is released either way.
    let passed = steps_on(dev.as_mut(), shared, with_blas);
    // The primary context is released before the cuDNN helper starts: in EXCLUSIVE_PROCESS
    // compute mode a GPU takes one process's context at a time, and the helper's
    // cudnnCreate would fail while this process holds one (issue 29 item 2; CUDA C++
    // Programming Guide, "Compute Modes").
    drop(dev);
    if passed {
        breadcrumb::at_gpu(ordinal, &format!("CUDA device {ordinal}: cudnn"));
        let uuid = info.uuid.clone().unwrap_or_default();
        cudnn_step(shared, opts, &uuid, until);
    }
    set(shared, |g| g.millis = ms(t.elapsed()));
    true
}

/// What the cuDNN helper may take: the time left before the smoke deadline, less a margin for
/// recording its answer before the deadline (it used to get the whole `--timeout`, capped at
/// 5 s, however little was left: issue 29 item 6). None when too little is left to start it.
pub fn cudnn_limit(until: Instant, now: Instant) -> Option<Duration> {
    let left = until
        .saturating_duration_since(now)
        .checked_sub(CUDNN_MARGIN)?;
    (left >= Duration::from_millis(100)).then_some(left)
}

/// Kept back from the cuDNN helper's limit, to record its outcome before the deadline.
const CUDNN_MARGIN: Duration = Duration::from_millis(250);

fn cudnn_step(shared: &Mutex<SmokeGpu>, opts: &SmokeOptions, uuid: &str, until: Instant) {
    let Some((helper, lib)) = &opts.cudnn else {
        skipped(shared, "cudnn", "no loadable cuDNN found".into());
        return;
    };
    let t = Instant::now();
    let timed_out = |message: String| {
        if let Ok(mut g) = shared.lock() {
            g.steps.push(SmokeStep {
                name: "cudnn".into(),
                status: StepStatus::TimedOut,
                millis: ms(t.elapsed()),
                detail: String::new(),
                error: Some(GpuCallError {
                    call: "cudnn".into(),
                    code: None,
                    name: String::new(),
                    message,
                }),
            });
        }
    };
    let Some(limit) = cudnn_limit(until, t) else {
        timed_out(
            "no time was left for the cuDNN helper before the smoke tests' deadline (--timeout)"
                .into(),
        );
        return;
    };
    let r = cudnn(helper, lib, uuid, limit);
    match r {
        Err(e) if t.elapsed() >= limit => timed_out(format!(
            "the cuDNN helper did not finish within the {} ms left before the smoke tests' deadline (--timeout): {}",
            limit.as_millis(),
            e.message
        )),
        r => {
            record(shared, "cudnn", t, r);
        }
    }
}

/// Steps 2 to 7 on an opened device; true when none failed.
fn steps_on(dev: &mut dyn Device, shared: &Mutex<SmokeGpu>, with_blas: bool) -> bool {
    let sms = dev.info().multiprocessors.max(1);
    // 2. memory
    let t = Instant::now();
    let pattern = host_pattern(SMOKE_BYTES);
    let src = match dev.alloc(SMOKE_BYTES) {
        Ok(b) => b,
        Err(e) => return record(shared, "memory", t, Err(e)),
    };
    let r = dev.upload(src, &pattern).and_then(|_| {
        let mut back = vec![0u8; SMOKE_BYTES];
        dev.download(src, &mut back)?;
        compare_bytes("memory", &pattern, &back)?;
        Ok(format!(
            "{} MiB written from the host and read back; every byte verified",
            SMOKE_BYTES >> 20
        ))
    });
    if !record(shared, "memory", t, r) {
        return false;
    }
    // 3. pcie, on a scratch buffer: a host-to-device copy overwrites it, and `src` must keep
    // the pattern for the d2d step (on an H100 the d2d copy read zeros otherwise).
    let t = Instant::now();
    let r = dev.alloc(SMOKE_BYTES).and_then(|scratch| {
        let r = pcie_rates(dev, scratch);
        let _ = dev.free(scratch);
        r
    });
    let r = r.map(|(h2d, d2h, alongside)| {
        set(shared, |g| {
            g.h2d_gbps = Some(super::round2(h2d));
            g.d2h_gbps = Some(super::round2(d2h));
        });
        format!(
            "pinned copies of {} MiB: host to device {h2d:.1} GB/s, device to host {d2h:.1} GB/s{}",
            SMOKE_BYTES >> 20,
            if alongside {
                " (measured while another GPU's copies ran: it had not finished them within 3 s)"
            } else {
                ""
            }
        )
    });
    if !record(shared, "pcie", t, r) {
        return false;
    }
    // 4. module
    let t = Instant::now();
    let r = dev.load_module(SMOKE_PTX).map(|_| {
        let (a, b) = dev.info().compute_capability;
        format!("gpudoctor's PTX (ISA 7.0, sm_50) JIT-compiled by the driver for sm_{a}{b}")
    });
    if !record(shared, "module", t, r) {
        return false;
    }
    // 5. kernel
    let t = Instant::now();
    let r = arith(dev);
    if !record(shared, "kernel", t, r) {
        return false;
    }
    // 6. d2d
    let t = Instant::now();
    let r = d2d(dev, src, &pattern, sms).map(|gbps| {
        set(shared, |g| g.d2d_gbps = Some(super::round2(gbps)));
        format!(
            "{} MiB copied through the SMs at {gbps:.0} GB/s (read + write); copy verified",
            SMOKE_BYTES >> 20
        )
    });
    let _ = dev.free(src);
    if !record(shared, "d2d", t, r) {
        return false;
    }
    // 7. sgemm
    if with_blas {
        let t = Instant::now();
        let r = sgemm(dev).map(|gflops| {
            set(shared, |g| g.sgemm_gflops = Some(gflops.round()));
            format!("cuBLAS SGEMM {GEMM_N}^3 matches the host reference ({gflops:.0} GFLOP/s)")
        });
        if !record(shared, "sgemm", t, r) {
            return false;
        }
    } else {
        skipped(shared, "sgemm", "cuBLAS is not available".into());
    }
    // 8. cudnn: after the device is released ([`gpu_steps`]).
    true
}

/// The bytes the memory step writes: no run of equal bytes, different in every 256-byte block.
pub fn host_pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            ((i as u32)
                .wrapping_mul(7)
                .wrapping_add((i >> 8) as u32 ^ 0x5a)) as u8
        })
        .collect()
}

fn compare_bytes(check: &str, want: &[u8], got: &[u8]) -> Result<(), GpuCallError> {
    if want == got {
        return Ok(());
    }
    let bad = want.iter().zip(got).filter(|(a, b)| a != b).count();
    let first = want.iter().zip(got).position(|(a, b)| a != b).unwrap_or(0);
    Err(wrong(
        check,
        format!(
            "{bad} of {} bytes differ after the round trip; the first at offset {first:#x}: wrote {:#04x}, read {:#04x}",
            want.len(),
            want.get(first).copied().unwrap_or(0),
            got.get(first).copied().unwrap_or(0)
        ),
    ))
}

/// What `smoke_arith` computes for element i (see smoke.ptx): exact, on any IEEE 754 host (the
/// FMA is [`super::fmaf::fmaf`], not the C library's).
pub fn expected_arith(i: u32) -> (u32, f32) {
    let mut h = i.wrapping_mul(0x9E37_79B1);
    h ^= h >> 15;
    h = h.wrapping_mul(0x85EB_CA77);
    h ^= h >> 13;
    h = h.wrapping_add(i);
    let mut y = i as f32;
    for _ in 0..8 {
        y = super::fmaf::fmaf(y, 1.0 + 1.0 / 1024.0, 0.5);
    }
    (h, y)
}

fn arith(dev: &mut dyn Device) -> Result<String, GpuCallError> {
    let n = ARITH_N;
    let bytes = n as usize * 4;
    let out_u = dev.alloc(bytes)?;
    let out_f = dev.alloc(bytes)?;
    let r = (|| {
        dev.launch(
            "smoke_arith",
            n.div_ceil(256),
            256,
            &[Arg::Ptr(out_u), Arg::Ptr(out_f), Arg::U32(n)],
        )?;
        let mut u = vec![0u8; bytes];
        let mut f = vec![0u8; bytes];
        dev.download(out_u, &mut u)?;
        dev.download(out_f, &mut f)?;
        let mut bad = 0u64;
        let mut first: Option<String> = None;
        for i in 0..n {
            let at = i as usize * 4;
            let word = |v: &[u8]| {
                v.get(at..at + 4)
                    .and_then(|s| <[u8; 4]>::try_from(s).ok())
                    .map(u32::from_le_bytes)
                    .unwrap_or(0)
            };
            let (gu, gf) = (word(&u), f32::from_bits(word(&f)));
            let (eu, ef) = expected_arith(i);
            if gu != eu || gf.to_bits() != ef.to_bits() {
                bad += 1;
                if first.is_none() {
                    first = Some(format!(
                        "element {i}: integer {gu:#010x} (expected {eu:#010x}), float {gf:e} (expected {ef:e})"
                    ));
                }
            }
        }
        match first {
            None => Ok(format!(
                "{n} integer and {n} floating-point results match the host's exactly"
            )),
            Some(f) => Err(wrong(
                "smoke_arith results",
                format!("{bad} of {n} elements are wrong; first: {f}"),
            )),
        }
    })();
    let _ = dev.free(out_u);
    let _ = dev.free(out_f);
    r
}

/// Host-to-device and device-to-host rates with pinned memory, measured on `scratch`.
/// One GPU's pinned copies at a time, process-wide: GPUs behind one PCIe switch (or sharing
/// the host's root port or memory bandwidth) measured at once each see a share of the link
/// and would all look degraded.
static PCIE_COPIES: Mutex<()> = Mutex::new(());

/// How long a GPU waits for another GPU's copies before measuring anyway: a GPU stuck in a
/// copy must not make every other GPU time out in this step too.
const PCIE_WAIT: Duration = Duration::from_secs(3);

/// Host-to-device and device-to-host rates, measured while no other GPU of this process
/// copies; the third value says the wait for the others ran out (measured alongside them).
fn pcie_rates(dev: &mut dyn Device, scratch: Buf) -> Result<(f64, f64, bool), GpuCallError> {
    let waited = Instant::now();
    let guard = loop {
        match PCIE_COPIES.try_lock() {
            Ok(g) => break Some(g),
            // A thread that panicked while holding it left nothing half-done to protect.
            Err(std::sync::TryLockError::Poisoned(p)) => break Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if waited.elapsed() < PCIE_WAIT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::sync::TryLockError::WouldBlock) => break None,
        }
    };
    let shared = guard.is_none();
    let h2d = dev.pinned_copy_rate(scratch, true, 3)?;
    let d2h = dev.pinned_copy_rate(scratch, false, 3)?;
    drop(guard);
    Ok((h2d, d2h, shared))
}

fn d2d(dev: &mut dyn Device, src: Buf, pattern: &[u8], sms: u32) -> Result<f64, GpuCallError> {
    let dst = dev.alloc(src.bytes)?;
    let r = (|| {
        let vecs = (src.bytes / 16) as u64;
        let args = [Arg::Ptr(dst), Arg::Ptr(src), Arg::U64(vecs)];
        let mut best = f64::INFINITY;
        for _ in 0..4 {
            best = best.min(dev.launch("copy_v4", sms * 4, 256, &args)?);
        }
        let mut back = vec![0u8; src.bytes];
        dev.download(dst, &mut back)?;
        compare_bytes("copy_v4 result", pattern, &back)?;
        Ok(super::cuda::rate_gbps(2.0 * src.bytes as f64, best))
    })();
    let _ = dev.free(dst);
    r
}

/// Small integers in [-2, 2]: every product and sum of the SGEMM is exact in f32 (and in TF32),
/// so the tolerance only has to absorb a different summation order.
fn gemm_input(len: usize, salt: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + salt) % 5) as f32 - 2.0)
        .collect()
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn sgemm(dev: &mut dyn Device) -> Result<f64, GpuCallError> {
    let n = GEMM_N as usize;
    let (a, b) = (gemm_input(n * n, 1), gemm_input(n * n, 3));
    let bytes = n * n * 4;
    let (da, db, dc) = (dev.alloc(bytes)?, dev.alloc(bytes)?, dev.alloc(bytes)?);
    let r = (|| {
        dev.upload(da, &to_bytes(&a))?;
        dev.upload(db, &to_bytes(&b))?;
        let ms = dev.gemm(GemmType::F32, (GEMM_N, GEMM_N, GEMM_N), da, db, dc, 3)?;
        let mut back = vec![0u8; bytes];
        dev.download(dc, &mut back)?;
        let c: Vec<f32> = back
            .chunks_exact(4)
            .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        check_gemm(&a, &b, &c, n)?;
        Ok(2.0 * (n as f64).powi(3) / (ms / 1000.0) / 1e9)
    })();
    for d in [da, db, dc] {
        let _ = dev.free(d);
    }
    r
}

/// Compares a column-major C = A * B with a host reference (f64 sums).
pub fn check_gemm(a: &[f32], b: &[f32], c: &[f32], n: usize) -> Result<(), GpuCallError> {
    let mut bad = 0usize;
    let mut first = None;
    for col in 0..n {
        for row in 0..n {
            let mut want = 0f64;
            for k in 0..n {
                want += f64::from(*a.get(k * n + row).unwrap_or(&0.0))
                    * f64::from(*b.get(col * n + k).unwrap_or(&0.0));
            }
            let got = f64::from(*c.get(col * n + row).unwrap_or(&f32::NAN));
            // Relative 1e-5 of the magnitude, as the inputs make every partial sum exact.
            let close = (got - want).abs() <= 1e-5 * want.abs().max(1.0);
            // NaN compares false: a NaN result is wrong too.
            if !close {
                bad += 1;
                first.get_or_insert((row, col, got, want));
            }
        }
    }
    match first {
        None => Ok(()),
        Some((r, c2, got, want)) => Err(wrong(
            "cublasSgemm result",
            format!(
                "{bad} of {} elements differ from the host reference; first C[{r},{c2}] = {got} (expected {want})",
                n * n
            ),
        )),
    }
}

fn cudnn(
    helper: &std::path::Path,
    lib: &std::path::Path,
    uuid: &str,
    limit: Duration,
) -> Result<String, GpuCallError> {
    let target = lib.to_string_lossy();
    let env: Vec<(&str, &str)> = if uuid.is_empty() {
        Vec::new()
    } else {
        vec![("CUDA_VISIBLE_DEVICES", uuid)]
    };
    let fail = |code: Option<i64>, name: String, message: String| GpuCallError {
        call: "cudnnCreate".into(),
        code,
        name,
        message,
    };
    match libquery::query_with_env(helper, LibKind::CudnnHandle, &target, limit, &env) {
        Ok(a) if a.value == Some(1) => Ok(format!(
            "a cuDNN handle created and destroyed with {target}"
        )),
        Ok(a) => {
            let text = a.error.unwrap_or_default();
            let name = if text.starts_with("CUDNN_STATUS_") {
                text
            } else {
                String::new()
            };
            Err(fail(
                a.status,
                name,
                format!("cuDNN ({target}) could not create a handle on this GPU"),
            ))
        }
        Err(e) => Err(fail(None, String::new(), e)),
    }
}
