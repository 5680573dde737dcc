//! GPU work: the smoke tests of `check` (and, later, `stress`) run through a narrow backend trait.
//!
//! [`Backend`] and [`Device`] are the only way GPU code reaches a GPU. The real one,
//! [`cuda::CudaBackend`], calls the CUDA driver API ([`cudadrv`]) with our own PTX
//! ([`SMOKE_PTX`]); tests drive the same runners with a backend that fails where they ask. The
//! runners check every result on the host and turn what happened into plain snapshot data
//! ([`crate::snapshot::SmokeRun`]), which rules judge like any other fact.

pub mod cublas;
pub mod cuda;
pub mod cudadrv;
pub mod fmaf;
pub mod sim;
pub mod smoke;
pub mod stress;
pub mod watch;

pub use crate::snapshot::category_of;
use crate::snapshot::GpuCallError;

/// The smoke kernels, PTX ISA 7.0 for sm_50 (see the file's header).
pub const SMOKE_PTX: &str = include_str!("smoke.ptx");
/// The stress kernels (memory patterns, fault injection, FMA burn, result comparison).
pub const STRESS_PTX: &str = include_str!("stress.ptx");

/// A device allocation: an address in the GPU's address space and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buf {
    pub ptr: u64,
    pub bytes: usize,
}

/// A kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Ptr(Buf),
    U32(u32),
    U64(u64),
    F32(f32),
}

/// What the driver says about one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    pub compute_capability: (u32, u32),
    pub total_bytes: u64,
    pub multiprocessors: u32,
    /// "00000000:2B:00.0", NVML's form, to match the GPU with NVML's index.
    pub pci_bus_id: Option<String>,
    /// "GPU-xxxxxxxx-...", for CUDA_VISIBLE_DEVICES in helper processes.
    pub uuid: Option<String>,
}

/// A GPU driver: initialise, count devices, open one.
pub trait Backend: Send + Sync {
    /// Initialises the driver (`cuInit`) and returns the CUDA version it supports.
    fn init(&self) -> Result<i32, GpuCallError>;
    fn device_count(&self) -> Result<u32, GpuCallError>;
    /// What the driver says about a device, without opening it: no context is created. The
    /// runners match a device with `--gpu` by this before [`Backend::open`], so an unselected
    /// GPU is never touched: a primary context takes memory (about 0.5 GB) on a GPU that may
    /// be another job's, and a GPU in EXCLUSIVE_PROCESS mode that another process holds
    /// refuses it (issue 29 item 3).
    fn describe(&self, ordinal: u32) -> Result<DeviceInfo, GpuCallError>;
    /// Opens a device (its primary context) for use on the calling thread.
    fn open(&self, ordinal: u32) -> Result<Box<dyn Device>, GpuCallError>;
    /// cuBLAS: the library that will be used, or why there is none.
    fn cublas(&self) -> Result<String, String>;
}

/// One opened GPU. Every call is synchronous; dropping it frees what it allocated.
pub trait Device {
    fn info(&self) -> &DeviceInfo;
    /// Free and total memory in bytes.
    fn mem_info(&mut self) -> Result<(u64, u64), GpuCallError>;
    fn alloc(&mut self, bytes: usize) -> Result<Buf, GpuCallError>;
    fn free(&mut self, buf: Buf) -> Result<(), GpuCallError>;
    fn upload(&mut self, dst: Buf, src: &[u8]) -> Result<(), GpuCallError>;
    fn download(&mut self, src: Buf, dst: &mut [u8]) -> Result<(), GpuCallError>;
    /// Copies `buf.bytes` between pinned host memory and `buf`, `reps` times after one warm-up;
    /// returns the best rate in GB/s (10^9 bytes per second). The host-to-device direction
    /// overwrites `buf` with the pinned buffer's contents (zeros): measure on a scratch buffer.
    fn pinned_copy_rate(
        &mut self,
        buf: Buf,
        to_device: bool,
        reps: u32,
    ) -> Result<f64, GpuCallError>;
    /// Loads a PTX module (JIT-compiled by the driver); its kernels can then be launched. Modules
    /// loaded earlier stay loaded.
    fn load_module(&mut self, ptx: &str) -> Result<(), GpuCallError>;
    /// Loads the named kernels of the loaded modules onto the GPU now. With lazy loading
    /// (`CUDA_MODULE_LOADING=LAZY`, the default from CUDA 12.2) the driver loads a kernel at
    /// `cuModuleGetFunction`, which needs device memory; after the memory test has taken the
    /// free memory, that can fail with CUDA_ERROR_OUT_OF_MEMORY (CUDA C++ Programming Guide,
    /// "Lazy Loading", "Possible issues: allocators"). The default does nothing.
    fn load_kernels(&mut self, names: &[&str]) -> Result<(), GpuCallError> {
        let _ = names;
        Ok(())
    }
    /// Launches `kernel` of the loaded module on a 1-D grid and waits; returns milliseconds.
    fn launch(
        &mut self,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[Arg],
    ) -> Result<f64, GpuCallError>;
    /// C = A * B with cuBLAS for column-major m x k and k x n matrices of `ty` (C in f32,
    /// accumulated in f32), `reps` times after one warm-up; returns the best milliseconds of one.
    fn gemm(
        &mut self,
        ty: GemmType,
        dims: (u32, u32, u32),
        a: Buf,
        b: Buf,
        c: Buf,
        reps: u32,
    ) -> Result<f64, GpuCallError>;
}

/// The input type of a GEMM (the output is f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmType {
    F32,
    F16,
    Bf16,
}

impl GemmType {
    pub const ALL: [GemmType; 3] = [GemmType::F32, GemmType::F16, GemmType::Bf16];
    pub fn bytes(self) -> usize {
        match self {
            GemmType::F32 => 4,
            GemmType::F16 | GemmType::Bf16 => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            GemmType::F32 => "sgemm",
            GemmType::F16 => "hgemm",
            GemmType::Bf16 => "bf16gemm",
        }
    }
    /// The little-endian bytes of `v` in this type (round to nearest even; finite normal
    /// values and zero, which is all the GEMM inputs use).
    pub fn encode(self, v: &[f32]) -> Vec<u8> {
        match self {
            GemmType::F32 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            GemmType::Bf16 => v
                .iter()
                .flat_map(|x| f32_to_bf16(*x).to_le_bytes())
                .collect(),
            GemmType::F16 => v
                .iter()
                .flat_map(|x| f32_to_f16(*x).to_le_bytes())
                .collect(),
        }
    }
    /// The values of little-endian bytes of this type.
    pub fn decode(self, b: &[u8]) -> Vec<f32> {
        match self {
            GemmType::F32 => b
                .chunks_exact(4)
                .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
            GemmType::Bf16 => b
                .chunks_exact(2)
                .map(|w| f32::from_bits(u32::from(u16::from_le_bytes([w[0], w[1]])) << 16))
                .collect(),
            GemmType::F16 => b
                .chunks_exact(2)
                .map(|w| f16_to_f32(u16::from_le_bytes([w[0], w[1]])))
                .collect(),
        }
    }
}

/// bfloat16: the high half of an f32, rounded to nearest even.
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    let round = 0x7FFF + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// IEEE half precision of a finite f32 (normal range; smaller magnitudes become zero, larger
/// ones infinity), rounded to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32 - 127 + 15;
    let man = b & 0x7F_FFFF;
    if exp <= 0 {
        return sign;
    }
    if exp >= 31 {
        return sign | 0x7C00;
    }
    let mut h = ((exp as u32) << 10) | (man >> 13);
    let rest = man & 0x1FFF;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1; // may carry into the exponent, which is still right
    }
    sign | h as u16
}

/// The f32 value of an IEEE half (normal numbers, zero, infinity).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1F);
    let man = u32::from(h & 0x3FF);
    let bits = match exp {
        0 => sign, // zero (subnormals are not used)
        31 => sign | 0x7F80_0000 | (man << 13),
        e => sign | ((e + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// A rate rounded to two decimals for reports.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The NVML index of a CUDA device, matched by PCI bus id (the driver API enumerates fastest
/// first, NVML in PCI order), and whether `--gpu` selects it (an unmatched device is kept).
pub fn nvml_index(
    info: &DeviceInfo,
    nvml_gpus: &[(u32, Option<String>)],
    selected: Option<&[u32]>,
) -> (Option<u32>, bool) {
    let index = info.pci_bus_id.as_ref().and_then(|bus| {
        nvml_gpus
            .iter()
            .find(|(_, b)| b.as_ref().is_some_and(|b| b.eq_ignore_ascii_case(bus)))
            .map(|(i, _)| *i)
    });
    let wanted = match (selected, index) {
        (Some(sel), Some(i)) => sel.contains(&i),
        _ => true,
    };
    (index, wanted)
}
