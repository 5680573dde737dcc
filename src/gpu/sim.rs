//! A simulated GPU backend: memory on the host and every kernel of `smoke.ptx` and
//! `stress.ptx` executed on the CPU as the PTX defines it, with faults on request. It lets
//! `check` and `stress` be tested end to end (events, formats, signals, verdicts) on machines
//! without a GPU. Chosen with the hidden variable `GPUDOCTOR_SIM_GPUS=N`; faults with
//! `GPUDOCTOR_SIM_FAULTS` (comma-separated): `stuck-bit` (one memory bit reads back flipped),
//! `bad-fma` (one FMA thread class computes wrong), `bad-gemm` (one element of the fifth GEMM differs),
//! `slow` (each kernel takes 50 ms), `maxwell` (no fp16/bf16 GemmEx), `fragmented` (no allocation over 2 MiB), `noxid` (GPU 0's Xid events not watchable), `xidN` such as `xid79` (Xid N reported once by the simulated watch). Each simulated
//! GPU has `GPUDOCTOR_SIM_MEM_MIB` MiB of memory (default 16). With `GPUDOCTOR_SIM_NVML=1`,
//! `stress` watches the simulated GPUs through the real NVML code (the tests' stand-in
//! libnvidia-ml) instead of the simulated watch.

use std::collections::HashMap;
use std::time::Duration;

use super::stress::{fma_burn_expected, injected_flips, pattern_value, Monitor, Sample};
use super::{Arg, Backend, Buf, Device, DeviceInfo, GemmType};
use crate::snapshot::GpuCallError;

/// What the simulated GPUs do wrong.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimFaults {
    pub stuck_bit: bool,
    pub bad_fma: bool,
    pub bad_gemm: bool,
    pub slow: bool,
    /// `maxwell`: cublasGemmEx answers CUBLAS_STATUS_ARCH_MISMATCH (8) for fp16 and bf16, as
    /// on sm_52 and older.
    pub maxwell: bool,
    /// `xidN`: Xid N on GPU 0, once, during a stress run.
    pub xid: Option<u64>,
    /// `noxid`: GPU 0's Xid events cannot be watched (as on a GPU whose driver offers none).
    pub noxid: bool,
    /// `fragmented`: an allocation over 2 MiB fails with out-of-memory (fragmented memory), so
    /// the memory test holds many small chunks.
    pub fragmented: bool,
}

impl SimFaults {
    pub fn parse(s: &str) -> SimFaults {
        let has = |k: &str| s.split(',').any(|x| x.trim() == k);
        SimFaults {
            stuck_bit: has("stuck-bit"),
            bad_fma: has("bad-fma"),
            bad_gemm: has("bad-gemm"),
            slow: has("slow"),
            maxwell: has("maxwell"),
            noxid: has("noxid"),
            fragmented: has("fragmented"),
            xid: s
                .split(',')
                .find_map(|x| x.trim().strip_prefix("xid")?.parse().ok()),
        }
    }
}

/// `count` simulated GPUs of `mem` bytes each, on PCI buses 0x18, 0x19, ...
#[derive(Debug, Clone)]
pub struct SimBackend {
    pub count: u32,
    pub mem: u64,
    pub faults: SimFaults,
}

impl SimBackend {
    /// From GPUDOCTOR_SIM_GPUS / GPUDOCTOR_SIM_FAULTS, when set.
    pub fn from_env() -> Option<SimBackend> {
        let count: u32 = std::env::var("GPUDOCTOR_SIM_GPUS").ok()?.parse().ok()?;
        Some(SimBackend {
            count,
            mem: std::env::var("GPUDOCTOR_SIM_MEM_MIB")
                .ok()
                .and_then(|m| m.parse::<u64>().ok())
                .unwrap_or(16)
                << 20,
            faults: SimFaults::parse(&std::env::var("GPUDOCTOR_SIM_FAULTS").unwrap_or_default()),
        })
    }
    pub fn bus_id(ordinal: u32) -> String {
        format!("00000000:{:02X}:00.0", 0x18 + ordinal)
    }
}

impl Backend for SimBackend {
    fn init(&self) -> Result<i32, GpuCallError> {
        Ok(12080)
    }
    fn device_count(&self) -> Result<u32, GpuCallError> {
        Ok(self.count)
    }
    fn describe(&self, ordinal: u32) -> Result<DeviceInfo, GpuCallError> {
        Ok(SimDevice::new(ordinal, self.mem, SimFaults::default()).info)
    }
    fn open(&self, ordinal: u32) -> Result<Box<dyn Device>, GpuCallError> {
        Ok(Box::new(SimDevice::new(
            ordinal,
            self.mem,
            self.faults.clone(),
        )))
    }
    fn cublas(&self) -> Result<String, String> {
        Ok("simulated".into())
    }
}

/// One simulated GPU.
pub struct SimDevice {
    info: DeviceInfo,
    mem: HashMap<u64, Vec<u8>>,
    next: u64,
    used: u64,
    faults: SimFaults,
    gemm_runs: u32,
    /// fma_burn's expected results for the last iteration count asked for.
    fma_cache: Option<(u32, Vec<f32>)>,
    /// Kernels loaded onto the simulated GPU (lazy loading: at first use or `load_kernels`).
    loaded: std::collections::HashSet<String>,
}

/// Device memory a kernel takes when it is loaded, as under lazy loading
/// (`CUDA_MODULE_LOADING=LAZY`): a kernel first used after the memory is full fails with
/// CUDA_ERROR_OUT_OF_MEMORY. The size is a model, chosen so that on a 4 MiB simulated GPU the
/// five kernels `stress` first launches after its fill do not fit in the 3 % it leaves.
pub const SIM_KERNEL_BYTES: u64 = 32 << 10;

fn oom(call: &str) -> GpuCallError {
    GpuCallError {
        call: call.into(),
        code: Some(2),
        name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
        message: "out of memory".into(),
    }
}

fn bad_arg(call: &str, what: &str) -> GpuCallError {
    GpuCallError {
        call: call.into(),
        code: Some(1),
        name: "CUDA_ERROR_INVALID_VALUE".into(),
        message: what.into(),
    }
}

impl SimDevice {
    pub fn new(ordinal: u32, total: u64, faults: SimFaults) -> SimDevice {
        SimDevice {
            info: DeviceInfo {
                name: "gpudoctor simulated GPU".into(),
                compute_capability: (9, 0),
                total_bytes: total,
                multiprocessors: 4,
                pci_bus_id: Some(SimBackend::bus_id(ordinal)),
                uuid: Some(format!("GPU-00000000-0000-0000-0000-{:012x}", ordinal)),
            },
            mem: HashMap::new(),
            next: 0x7f00_0000_0000,
            used: 0,
            faults,
            gemm_runs: 0,
            fma_cache: None,
            loaded: std::collections::HashSet::new(),
        }
    }
    fn buf(&mut self, b: Option<&Arg>) -> Result<&mut Vec<u8>, GpuCallError> {
        match b {
            Some(Arg::Ptr(p)) => self
                .mem
                .get_mut(&p.ptr)
                .ok_or_else(|| bad_arg("cuLaunchKernel", "unknown pointer")),
            _ => Err(bad_arg("cuLaunchKernel", "not a pointer")),
        }
    }
    /// Loads a kernel (once), taking [`SIM_KERNEL_BYTES`] of device memory.
    fn load_kernel(&mut self, k: &str) -> Result<(), GpuCallError> {
        if self.loaded.contains(k) {
            return Ok(());
        }
        if self.used + SIM_KERNEL_BYTES > self.info.total_bytes {
            return Err(GpuCallError {
                message: format!("out of memory loading kernel {k} (lazy loading)"),
                ..oom("cuModuleGetFunction")
            });
        }
        self.used += SIM_KERNEL_BYTES;
        self.loaded.insert(k.to_string());
        Ok(())
    }
    fn word(v: &[u8], i: usize) -> u32 {
        v.get(i * 4..i * 4 + 4)
            .and_then(|s| <[u8; 4]>::try_from(s).ok())
            .map_or(0, u32::from_le_bytes)
    }
    fn set_word(v: &mut [u8], i: usize, w: u32) {
        if let Some(s) = v.get_mut(i * 4..i * 4 + 4) {
            s.copy_from_slice(&w.to_le_bytes());
        }
    }
    fn add_u64(v: &mut [u8], at: usize, n: u64) -> u64 {
        let old = v
            .get(at..at + 8)
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .map_or(0, u64::from_le_bytes);
        if let Some(s) = v.get_mut(at..at + 8) {
            s.copy_from_slice(&old.wrapping_add(n).to_le_bytes());
        }
        old
    }

    /// mem_check: compares each word with the pattern (the stuck bit shows at word 100), logs
    /// the mismatches, and rewrites the next pattern when asked.
    fn mem_check(&mut self, args: &[Arg], stuck: bool) -> Result<(), GpuCallError> {
        let n = u64_of(args.get(1));
        let (mode, a) = (u32_of(args.get(2)), u32_of(args.get(3)));
        let max_log = u64::from(u32_of(args.get(5)));
        let (tm, ta, rewrite) = (
            u32_of(args.get(6)),
            u32_of(args.get(7)),
            u32_of(args.get(8)),
        );
        let mut bad: Vec<(u64, u32, u32)> = Vec::new();
        {
            let b = self.buf(args.first())?;
            for i in 0..n as usize {
                let e = pattern_value(mode, i as u64, a);
                let got = Self::word(b, i);
                if got != e {
                    bad.push((i as u64, e, got));
                }
                if rewrite != 0 {
                    let mut w = pattern_value(tm, i as u64, ta);
                    if stuck && i == 100 {
                        w ^= 0x8;
                    }
                    Self::set_word(b, i, w);
                }
            }
        }
        let errs = self.buf(args.get(4))?;
        for (i, e, got) in bad {
            Self::add_u64(errs, 0, 1);
            let slot = Self::add_u64(errs, 8, 1);
            if slot < max_log {
                let at = 16 + slot as usize * 16;
                if let Some(s) = errs.get_mut(at..at + 16) {
                    s[..8].copy_from_slice(&i.to_le_bytes());
                    s[8..].copy_from_slice(&((u64::from(e) << 32) | u64::from(got)).to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// fma_burn: counts the threads whose result differs from the expected values (one class
    /// of them wrong with the bad_fma fault).
    fn fma_burn(&mut self, args: &[Arg], threads: u64) -> Result<(), GpuCallError> {
        let iters = u32_of(args.get(2));
        let want = match self.fma_cache.take() {
            Some((i, v)) if i == iters => v,
            _ => fma_burn_expected(iters),
        };
        self.fma_cache = Some((iters, want.clone()));
        let expect = self.buf(args.first())?.clone();
        let mut bad = 0u64;
        for (c, w) in want.iter().enumerate() {
            let class_threads = threads / 64 + u64::from((c as u64) < threads % 64);
            let mut got = *w;
            if self.faults.bad_fma && c == 5 {
                got = f32::from_bits(got.to_bits() ^ 1);
            }
            if got.to_bits() != Self::word(&expect, c) {
                bad += class_threads;
            }
        }
        let errs = self.buf(args.get(1))?;
        Self::add_u64(errs, 0, bad);
        Ok(())
    }
}

fn u32_of(a: Option<&Arg>) -> u32 {
    match a {
        Some(Arg::U32(v)) => *v,
        _ => 0,
    }
}
fn u64_of(a: Option<&Arg>) -> u64 {
    match a {
        Some(Arg::U64(v)) => *v,
        _ => 0,
    }
}

impl Device for SimDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn mem_info(&mut self) -> Result<(u64, u64), GpuCallError> {
        Ok((
            self.info.total_bytes.saturating_sub(self.used),
            self.info.total_bytes,
        ))
    }
    fn alloc(&mut self, bytes: usize) -> Result<Buf, GpuCallError> {
        if self.used + bytes as u64 > self.info.total_bytes
            || (self.faults.fragmented && bytes > 2 << 20)
        {
            return Err(oom("cuMemAlloc"));
        }
        let p = self.next;
        self.next += bytes as u64 + 4096;
        self.used += bytes as u64;
        self.mem.insert(p, vec![0; bytes]);
        Ok(Buf { ptr: p, bytes })
    }
    fn free(&mut self, buf: Buf) -> Result<(), GpuCallError> {
        if self.mem.remove(&buf.ptr).is_some() {
            self.used -= buf.bytes as u64;
        }
        Ok(())
    }
    fn upload(&mut self, dst: Buf, src: &[u8]) -> Result<(), GpuCallError> {
        let m = self
            .mem
            .get_mut(&dst.ptr)
            .ok_or_else(|| bad_arg("cuMemcpyHtoD", "unknown pointer"))?;
        let n = src.len().min(m.len());
        m[..n].copy_from_slice(&src[..n]);
        Ok(())
    }
    fn download(&mut self, src: Buf, dst: &mut [u8]) -> Result<(), GpuCallError> {
        let m = self
            .mem
            .get(&src.ptr)
            .ok_or_else(|| bad_arg("cuMemcpyDtoH", "unknown pointer"))?;
        let n = dst.len().min(m.len());
        dst[..n].copy_from_slice(&m[..n]);
        Ok(())
    }
    fn pinned_copy_rate(&mut self, b: Buf, to: bool, _r: u32) -> Result<f64, GpuCallError> {
        // As on a real GPU (seen on an H100): a host-to-device copy from a fresh pinned buffer
        // leaves the device buffer holding zeros.
        if to {
            let m = self
                .mem
                .get_mut(&b.ptr)
                .ok_or_else(|| bad_arg("cuMemcpyHtoDAsync", "unknown pointer"))?;
            m.iter_mut().for_each(|x| *x = 0);
        }
        Ok(50.0)
    }
    fn load_module(&mut self, _ptx: &str) -> Result<(), GpuCallError> {
        Ok(())
    }
    fn load_kernels(&mut self, names: &[&str]) -> Result<(), GpuCallError> {
        for k in names {
            self.load_kernel(k)?;
        }
        Ok(())
    }
    fn launch(
        &mut self,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[Arg],
    ) -> Result<f64, GpuCallError> {
        self.load_kernel(kernel)?;
        if self.faults.slow {
            std::thread::sleep(Duration::from_millis(50));
        }
        let stuck = self.faults.stuck_bit;
        match kernel {
            "smoke_arith" => {
                let n = u32_of(args.get(2));
                let (mut u, mut f) = (
                    Vec::with_capacity(n as usize * 4),
                    Vec::with_capacity(n as usize * 4),
                );
                for i in 0..n {
                    let (a, b) = super::smoke::expected_arith(i);
                    u.extend_from_slice(&a.to_le_bytes());
                    f.extend_from_slice(&b.to_le_bytes());
                }
                *self.buf(args.first())? = u;
                *self.buf(args.get(1))? = f;
            }
            "copy_v4" => {
                let src = self.buf(args.get(1))?.clone();
                let dst = self.buf(args.first())?;
                let n = dst.len().min(src.len());
                dst[..n].copy_from_slice(&src[..n]);
            }
            "mem_fill" => {
                let (n, mode, a) = (
                    u64_of(args.get(1)),
                    u32_of(args.get(2)),
                    u32_of(args.get(3)),
                );
                let b = self.buf(args.first())?;
                for i in 0..n as usize {
                    Self::set_word(b, i, pattern_value(mode, i as u64, a));
                }
                if stuck && n > 100 {
                    // Word 100's bit 3 is stuck at the opposite of what was written.
                    let w = Self::word(b, 100);
                    Self::set_word(b, 100, w ^ 0x8);
                }
            }
            "mem_check" => self.mem_check(args, stuck)?,
            "mem_flip" => {
                let (n, count, seed) = (
                    u64_of(args.get(1)),
                    u32_of(args.get(2)),
                    u32_of(args.get(3)),
                );
                let b = self.buf(args.first())?;
                for (w, bit) in injected_flips(n, count, seed) {
                    let v = Self::word(b, w as usize);
                    Self::set_word(b, w as usize, v ^ (1 << bit));
                }
            }
            "fma_burn" => self.fma_burn(args, u64::from(grid) * u64::from(block))?,
            "cmp_f32" => {
                let n = u64_of(args.get(2)) as usize;
                let tol = match args.get(3) {
                    Some(Arg::F32(t)) => *t,
                    _ => 0.0,
                };
                let a = self.buf(args.first())?.clone();
                let b = self.buf(args.get(1))?.clone();
                let bad = (0..n)
                    .filter(|i| {
                        let d = (f32::from_bits(Self::word(&a, *i))
                            - f32::from_bits(Self::word(&b, *i)))
                        .abs();
                        d.is_nan() || d > tol
                    })
                    .count();
                let errs = self.buf(args.get(4))?;
                Self::add_u64(errs, 0, bad as u64);
            }
            k => {
                return Err(GpuCallError {
                    call: "cuModuleGetFunction".into(),
                    code: Some(500),
                    name: "CUDA_ERROR_NOT_FOUND".into(),
                    message: format!("no kernel named {k}"),
                })
            }
        }
        Ok(if self.faults.slow { 50.0 } else { 1.0 })
    }
    fn gemm(
        &mut self,
        ty: GemmType,
        (m, n, k): (u32, u32, u32),
        a: Buf,
        b: Buf,
        c: Buf,
        _reps: u32,
    ) -> Result<f64, GpuCallError> {
        if self.faults.maxwell && ty != GemmType::F32 {
            return Err(GpuCallError {
                call: "cublasGemmEx".into(),
                code: Some(8),
                name: "CUBLAS_STATUS_ARCH_MISMATCH".into(),
                message: "cuBLAS returned an error".into(),
            });
        }
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let av = ty.decode(self.mem.get(&a.ptr).map(Vec::as_slice).unwrap_or(&[]));
        let bv = ty.decode(self.mem.get(&b.ptr).map(Vec::as_slice).unwrap_or(&[]));
        let f = |v: &[f32], i: usize| v.get(i).copied().unwrap_or(0.0);
        let mut out = vec![0u8; m * n * 4];
        for col in 0..n {
            for row in 0..m {
                let s: f32 = (0..k)
                    .map(|i| f(&av, i * m + row) * f(&bv, col * k + i))
                    .sum();
                Self::set_word(&mut out, col * m + row, s.to_bits());
            }
        }
        self.gemm_runs += 1;
        // The fifth GEMM: the first comparison run of the second type (after three reference runs).
        if self.faults.bad_gemm && self.gemm_runs == 5 {
            let w = Self::word(&out, 7);
            Self::set_word(&mut out, 7, (f32::from_bits(w) + 1.0).to_bits());
        }
        if let Some(cv) = self.mem.get_mut(&c.ptr) {
            let len = cv.len().min(out.len());
            cv[..len].copy_from_slice(&out[..len]);
        }
        Ok(1.0)
    }
}

/// The simulated watch: a steady temperature, and one Xid on GPU 0 when asked for. With
/// `GPUDOCTOR_SIM_PROCS=FILE`, the GPUs' compute processes are read from FILE at each sample,
/// one `GPU PID BYTES` a line (a test's child rewrites it as it "allocates"), and memory in use
/// is their sum: the process lists NVML gives, for `gpudoctor run`'s timeline.
pub struct SimMonitor {
    pub xid: Option<u64>,
    pub noxid: bool,
    sent: bool,
    count: u32,
    mem: u64,
    procs: Option<std::path::PathBuf>,
}

impl SimMonitor {
    pub fn new(faults: &SimFaults) -> SimMonitor {
        SimMonitor {
            xid: faults.xid,
            noxid: faults.noxid,
            sent: false,
            count: 0,
            mem: 0,
            procs: None,
        }
    }

    /// The watch of `b`'s GPUs, with the process lists of `GPUDOCTOR_SIM_PROCS`.
    pub fn for_backend(b: &SimBackend) -> SimMonitor {
        SimMonitor {
            count: b.count,
            mem: b.mem,
            procs: std::env::var_os("GPUDOCTOR_SIM_PROCS").map(std::path::PathBuf::from),
            ..SimMonitor::new(&b.faults)
        }
    }

    fn processes(&self, index: u32) -> Option<Vec<crate::snapshot::GpuProcess>> {
        let text = std::fs::read_to_string(self.procs.as_ref()?).ok()?;
        let mut out = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(g), Some(pid), Some(bytes)) = (f.first(), f.get(1), f.get(2)) else {
                continue;
            };
            if g.parse::<u32>().ok() != Some(index) {
                continue;
            }
            let (Ok(pid), Ok(bytes)) = (pid.parse::<u32>(), bytes.parse::<u64>()) else {
                continue;
            };
            out.push(crate::snapshot::GpuProcess {
                pid,
                name: std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .ok()
                    .map(|s| crate::sanitize::clean_line(s.trim(), 64)),
                used_bytes: Some(bytes),
            });
        }
        Some(out)
    }
}

impl Monitor for SimMonitor {
    fn sample(&mut self, index: u32) -> Option<Sample> {
        let processes = self.processes(index);
        let memory = processes.as_ref().map(|p| {
            let used: u64 = p
                .iter()
                .filter_map(|x| x.used_bytes)
                .sum::<u64>()
                .min(self.mem);
            crate::snapshot::GpuMemory {
                total_bytes: self.mem,
                used_bytes: used,
                free_bytes: self.mem - used,
            }
        });
        Some(Sample {
            memory,
            processes,
            temperature_c: Some(61),
            power_w: Some(312.5),
            sm_mhz: Some(1980),
            clock_event_reasons: Some(0),
            ecc_corrected: Some(0),
            ecc_uncorrected: Some(0),
            remap_pending: Some(false),
            pcie_replays: Some(0),
        })
    }
    fn gpus(&self) -> Vec<u32> {
        (0..self.count).collect()
    }
    fn unwatched(&self) -> Vec<(u32, String)> {
        if self.noxid {
            vec![(0, "nvmlDeviceRegisterEvents(Xid): Not Supported".into())]
        } else {
            Vec::new()
        }
    }
    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        std::thread::sleep(wait);
        if let (Some(x), false) = (self.xid, self.sent) {
            self.sent = true;
            return vec![(0, x)];
        }
        Vec::new()
    }
}
