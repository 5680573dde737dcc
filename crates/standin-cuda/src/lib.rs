//! A stand-in for the CUDA driver library (`libcuda.so.1`, `nvcuda.dll`) for tests: every
//! entry point gpudoctor's `src/gpu/cudadrv.rs` / `cuda.rs` calls, answered on the host, with
//! device memory in host memory and our PTX modules run by `ptx-interp`, so `check`'s smoke
//! steps and `stress` go end to end through the real driver-API code without a GPU. Built by
//! the tests (tests/it/standin_gpu.rs); never part of the shipped binary.
//!
//! Signatures and result codes are cuda.h's (CUDA 12.x; CUresult values there). Faults on
//! demand, from the environment:
//! - `STANDIN_DEVICE_COUNT` (1), `STANDIN_CC` ("9.0"), `STANDIN_SMS` (2), `STANDIN_MEM_MIB` (256);
//! - `STANDIN_STUCK_BIT=1`: byte 400 of every allocation of 1 MiB or more keeps bit 3 inverted
//!   from what was written (a stuck memory cell);
//! - `STANDIN_LAUNCH_ERROR=CODE[@N]`: launch N (1-based, default 1) and every later one fail
//!   with CODE (700, CUDA_ERROR_ILLEGAL_ADDRESS, is sticky as on a GPU: every later call fails);
//! - `STANDIN_LAUNCH=hang` (never returns) or `slow:MS` (each launch takes MS more);
//! - `STANDIN_THREADS=KERNEL:N`: only the first N threads of each launch of KERNEL run (the
//!   others do nothing). For speed only: `fma_burn:64` runs each of the FMA burn's 64 thread
//!   classes once instead of its 2048 threads x 8192 steps, which take seconds in the
//!   interpreter;
//! - `STANDIN_FMA=faulty`: `fma.rn.f32` rounds twice (a GPU whose FMA units compute wrong);
//! - `STANDIN_ALLOC_LIMIT_MIB=N`: an allocation of more than N MiB is out of memory (2);
//! - `STANDIN_EXCLUSIVE=FILE`: EXCLUSIVE_PROCESS compute mode across processes: a primary
//!   context is refused with CUDA_ERROR_DEVICE_UNAVAILABLE (46) while FILE names another live
//!   process, and this process's retain writes its pid there until the release.
#![allow(clippy::missing_safety_doc)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ptx_interp::{Error, Memory, Module};

type CUresult = c_int;

const SUCCESS: CUresult = 0;
const INVALID_VALUE: CUresult = 1;
const OUT_OF_MEMORY: CUresult = 2;
const NOT_INITIALIZED: CUresult = 3;
const INVALID_DEVICE: CUresult = 101;
const DEVICE_UNAVAILABLE: CUresult = 46;
const NO_BINARY_FOR_GPU: CUresult = 209;
const INVALID_PTX: CUresult = 218;
const INVALID_HANDLE: CUresult = 400;
const NOT_FOUND: CUresult = 500;
const ILLEGAL_ADDRESS: CUresult = 700;
const LAUNCH_TIMEOUT: CUresult = 702;
const MISALIGNED_ADDRESS: CUresult = 716;
const LAUNCH_FAILED: CUresult = 719;

fn env_u64(name: &str, dflt: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(dflt)
}

fn device_count() -> u32 {
    env_u64("STANDIN_DEVICE_COUNT", 1) as u32
}

fn cc() -> (u32, u32) {
    let s = std::env::var("STANDIN_CC").unwrap_or_else(|_| "9.0".into());
    let (a, b) = s.split_once('.').unwrap_or(("9", "0"));
    (a.parse().unwrap_or(9), b.parse().unwrap_or(0))
}

fn total_bytes() -> u64 {
    env_u64("STANDIN_MEM_MIB", 256) << 20
}

#[derive(Default)]
struct Alloc {
    device: u32,
    data: Vec<u8>,
}

#[derive(Default)]
struct State {
    init: bool,
    allocs: BTreeMap<u64, Alloc>,
    next: u64,
    used: HashMap<u32, u64>,
    modules: Vec<Option<Module>>,
    /// (module, kernel name) by function handle - 1.
    functions: Vec<(usize, String)>,
    host: HashMap<usize, std::alloc::Layout>,
    launches: u64,
    sticky: Option<CUresult>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    match STATE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Runs `f` on the state, after cuInit; a sticky error answers every call.
fn with<T>(f: impl FnOnce(&mut State) -> Result<T, CUresult>) -> Result<T, CUresult> {
    let mut g = state();
    let s = g.get_or_insert_with(|| State {
        next: 0x7f00_0000_0000,
        ..Default::default()
    });
    if !s.init {
        return Err(NOT_INITIALIZED);
    }
    if let Some(e) = s.sticky {
        return Err(e);
    }
    f(s)
}

fn code(r: Result<(), CUresult>) -> CUresult {
    match r {
        Ok(()) => SUCCESS,
        Err(e) => e,
    }
}

thread_local! {
    static CURRENT: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

fn current() -> Result<u32, CUresult> {
    CURRENT.with(|c| c.get()).ok_or(INVALID_VALUE)
}

/// Device memory as the interpreter sees it: the allocations, by address.
struct DevMem<'a> {
    allocs: &'a mut BTreeMap<u64, Alloc>,
    stuck: bool,
}

impl DevMem<'_> {
    fn find(&mut self, addr: u64, len: usize) -> Result<(&mut Alloc, usize), Error> {
        let (base, a) = self
            .allocs
            .range_mut(..=addr)
            .next_back()
            .ok_or_else(|| Error(format!("illegal address {addr:#x}")))?;
        let off = (addr - base) as usize;
        if off + len > a.data.len() {
            return Err(Error(format!("illegal address {addr:#x} (+{len})")));
        }
        Ok((a, off))
    }
}

impl Memory for DevMem<'_> {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), Error> {
        let (a, off) = self.find(addr, out.len())?;
        out.copy_from_slice(&a.data[off..off + out.len()]);
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Error> {
        let stuck = self.stuck;
        let (a, off) = self.find(addr, data.len())?;
        a.data[off..off + data.len()].copy_from_slice(data);
        // The stuck cell: byte 400 of a large allocation stores bit 3 inverted.
        if stuck && a.data.len() >= 1 << 20 && (off..off + data.len()).contains(&400) {
            a.data[400] ^= 0x08;
        }
        Ok(())
    }
}

fn stuck() -> bool {
    std::env::var("STANDIN_STUCK_BIT").as_deref() == Ok("1")
}

// ---- initialisation and devices ----

#[no_mangle]
pub extern "C" fn cuInit(_flags: c_uint) -> CUresult {
    let mut g = state();
    let s = g.get_or_insert_with(|| State {
        next: 0x7f00_0000_0000,
        ..Default::default()
    });
    s.init = true;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> CUresult {
    if v.is_null() {
        return INVALID_VALUE;
    }
    *v = env_u64("STANDIN_CUDA_VERSION", 12080) as c_int;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> CUresult {
    if n.is_null() {
        return INVALID_VALUE;
    }
    *n = device_count() as c_int;
    SUCCESS
}

fn name_of(e: CUresult) -> &'static CStr {
    match e {
        0 => c"CUDA_SUCCESS",
        1 => c"CUDA_ERROR_INVALID_VALUE",
        2 => c"CUDA_ERROR_OUT_OF_MEMORY",
        3 => c"CUDA_ERROR_NOT_INITIALIZED",
        46 => c"CUDA_ERROR_DEVICE_UNAVAILABLE",
        101 => c"CUDA_ERROR_INVALID_DEVICE",
        209 => c"CUDA_ERROR_NO_BINARY_FOR_GPU",
        218 => c"CUDA_ERROR_INVALID_PTX",
        400 => c"CUDA_ERROR_INVALID_HANDLE",
        500 => c"CUDA_ERROR_NOT_FOUND",
        700 => c"CUDA_ERROR_ILLEGAL_ADDRESS",
        702 => c"CUDA_ERROR_LAUNCH_TIMEOUT",
        716 => c"CUDA_ERROR_MISALIGNED_ADDRESS",
        719 => c"CUDA_ERROR_LAUNCH_FAILED",
        999 => c"CUDA_ERROR_UNKNOWN",
        _ => c"CUDA_ERROR_STANDIN_OTHER",
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(e: CUresult, s: *mut *const c_char) -> CUresult {
    if s.is_null() {
        return INVALID_VALUE;
    }
    *s = name_of(e).as_ptr();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(e: CUresult, s: *mut *const c_char) -> CUresult {
    if s.is_null() {
        return INVALID_VALUE;
    }
    *s = match e {
        700 => c"an illegal memory access was encountered (stand-in)",
        2 => c"out of memory (stand-in)",
        _ => c"an error from the stand-in libcuda",
    }
    .as_ptr();
    SUCCESS
}

fn valid_device(d: c_int) -> Result<u32, CUresult> {
    u32::try_from(d)
        .ok()
        .filter(|d| *d < device_count())
        .ok_or(INVALID_DEVICE)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(d: *mut c_int, ordinal: c_int) -> CUresult {
    code(with(|_| {
        let o = valid_device(ordinal)?;
        *d = o as c_int;
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(v: *mut c_int, attr: c_int, d: c_int) -> CUresult {
    code(with(|_| {
        valid_device(d)?;
        let (ma, mi) = cc();
        *v = match attr {
            75 => ma as c_int,                        // COMPUTE_CAPABILITY_MAJOR
            76 => mi as c_int,                        // COMPUTE_CAPABILITY_MINOR
            16 => env_u64("STANDIN_SMS", 2) as c_int, // MULTIPROCESSOR_COUNT
            _ => 0,
        };
        Ok(())
    }))
}

unsafe fn put_text(dst: *mut c_char, len: c_int, text: &str) {
    let n = (len.max(0) as usize).min(text.len() + 1);
    if n == 0 {
        return;
    }
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().take(n - 1).enumerate() {
        *dst.add(i) = *b as c_char;
    }
    *dst.add(n - 1) = 0;
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, d: c_int) -> CUresult {
    code(with(|_| {
        valid_device(d)?;
        put_text(name, len, "NVIDIA H100 80GB HBM3 (stand-in)");
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(bus: *mut c_char, len: c_int, d: c_int) -> CUresult {
    code(with(|_| {
        let o = valid_device(d)?;
        put_text(bus, len, &format!("0000:{:02x}:00.0", 0x2b + o));
        Ok(())
    }))
}

unsafe fn uuid(u: *mut u8, d: c_int) -> CUresult {
    code(with(|_| {
        let o = valid_device(d)?;
        let mut b = [
            0x11u8, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x55, 0x55,
            0x55, 0x55,
        ];
        b[15] = 0x55u8.wrapping_add(o as u8);
        std::ptr::copy_nonoverlapping(b.as_ptr(), u, 16);
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(u: *mut u8, d: c_int) -> CUresult {
    uuid(u, d)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(u: *mut u8, d: c_int) -> CUresult {
    uuid(u, d)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(b: *mut usize, d: c_int) -> CUresult {
    code(with(|_| {
        valid_device(d)?;
        *b = total_bytes() as usize;
        Ok(())
    }))
}

// ---- contexts ----

/// Another live process named in the exclusive-mode file, if any.
fn held_elsewhere(file: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    let Ok(pid) = text.trim().parse::<u32>() else {
        return false;
    };
    pid != std::process::id() && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(c: *mut *mut c_void, d: c_int) -> CUresult {
    code(with(|_| {
        let o = valid_device(d)?;
        if let Ok(file) = std::env::var("STANDIN_EXCLUSIVE") {
            if held_elsewhere(&file) {
                return Err(DEVICE_UNAVAILABLE);
            }
            let _ = std::fs::write(&file, std::process::id().to_string());
        }
        *c = (o as usize + 1) as *mut c_void;
        Ok(())
    }))
}

#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(d: c_int) -> CUresult {
    if let Ok(file) = std::env::var("STANDIN_EXCLUSIVE") {
        if !held_elsewhere(&file) {
            let _ = std::fs::remove_file(file);
        }
    }
    code(valid_device(d).map(|_| ()))
}

#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(c: *mut c_void) -> CUresult {
    let h = c as usize;
    if h == 0 || h > device_count() as usize {
        return INVALID_VALUE;
    }
    CURRENT.with(|x| x.set(Some(h as u32 - 1)));
    SUCCESS
}

// ---- memory ----

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    code(with(|s| {
        let d = current()?;
        let used = s.used.get(&d).copied().unwrap_or(0);
        *free = total_bytes().saturating_sub(used) as usize;
        *total = total_bytes() as usize;
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(p: *mut u64, bytes: usize) -> CUresult {
    code(with(|s| {
        let d = current()?;
        if bytes == 0 {
            return Err(INVALID_VALUE);
        }
        let limit = env_u64("STANDIN_ALLOC_LIMIT_MIB", u64::MAX >> 20) << 20;
        let used = s.used.get(&d).copied().unwrap_or(0);
        if bytes as u64 > limit || used + bytes as u64 > total_bytes() {
            return Err(OUT_OF_MEMORY);
        }
        // 512-byte aligned, with a gap: an overrun is an illegal address, not a neighbour.
        let at = s.next;
        s.next += (bytes as u64).div_ceil(512) * 512 + 4096;
        s.allocs.insert(
            at,
            Alloc {
                device: d,
                data: vec![0xA5; bytes],
            },
        );
        *s.used.entry(d).or_insert(0) += bytes as u64;
        *p = at;
        Ok(())
    }))
}

#[no_mangle]
pub extern "C" fn cuMemFree_v2(p: u64) -> CUresult {
    code(with(|s| {
        let a = s.allocs.remove(&p).ok_or(INVALID_VALUE)?;
        if let Some(u) = s.used.get_mut(&a.device) {
            *u = u.saturating_sub(a.data.len() as u64);
        }
        Ok(())
    }))
}

fn map_err(e: &Error) -> CUresult {
    if e.0.contains("misaligned") {
        MISALIGNED_ADDRESS
    } else if e.0.contains("illegal address") {
        ILLEGAL_ADDRESS
    } else if e.0.contains("hung") {
        LAUNCH_TIMEOUT
    } else {
        LAUNCH_FAILED
    }
}

unsafe fn htod(dst: u64, src: *const c_void, n: usize) -> CUresult {
    code(with(|s| {
        let data = std::slice::from_raw_parts(src.cast::<u8>(), n);
        let mut m = DevMem {
            allocs: &mut s.allocs,
            stuck: stuck(),
        };
        m.write(dst, data).map_err(|_| INVALID_VALUE)
    }))
}

unsafe fn dtoh(dst: *mut c_void, src: u64, n: usize) -> CUresult {
    code(with(|s| {
        let out = std::slice::from_raw_parts_mut(dst.cast::<u8>(), n);
        let mut m = DevMem {
            allocs: &mut s.allocs,
            stuck: false,
        };
        m.read(src, out).map_err(|_| INVALID_VALUE)
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize) -> CUresult {
    htod(dst, src, n)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, n: usize) -> CUresult {
    dtoh(dst, src, n)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    n: usize,
    _stream: *mut c_void,
) -> CUresult {
    htod(dst, src, n)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    n: usize,
    _stream: *mut c_void,
) -> CUresult {
    dtoh(dst, src, n)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    p: *mut *mut c_void,
    bytes: usize,
    _flags: c_uint,
) -> CUresult {
    code(with(|s| {
        let layout =
            std::alloc::Layout::from_size_align(bytes.max(1), 4096).map_err(|_| INVALID_VALUE)?;
        let q = std::alloc::alloc(layout);
        if q.is_null() {
            return Err(OUT_OF_MEMORY);
        }
        s.host.insert(q as usize, layout);
        *p = q.cast();
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    code(with(|s| {
        let layout = s.host.remove(&(p as usize)).ok_or(INVALID_VALUE)?;
        std::alloc::dealloc(p.cast(), layout);
        Ok(())
    }))
}

// ---- modules and launches ----

/// CU_JIT_ERROR_LOG_BUFFER and CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES (cuda.h, CUjit_option).
const JIT_ERROR_LOG_BUFFER: c_int = 5;
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    m: *mut *mut c_void,
    image: *const c_void,
    n: c_uint,
    opts: *const c_int,
    vals: *const *mut c_void,
) -> CUresult {
    let mut log: Option<(*mut c_char, usize)> = None;
    let mut buf: *mut c_char = std::ptr::null_mut();
    let mut size = 0usize;
    for i in 0..n as usize {
        match *opts.add(i) {
            JIT_ERROR_LOG_BUFFER => buf = (*vals.add(i)).cast(),
            JIT_ERROR_LOG_BUFFER_SIZE_BYTES => size = *vals.add(i) as usize,
            _ => {}
        }
    }
    if !buf.is_null() && size > 0 {
        log = Some((buf, size));
    }
    let text = CStr::from_ptr(image.cast()).to_string_lossy().into_owned();
    code(with(|s| {
        let d = current()?;
        let module = match ptx_interp::parse(&text) {
            Ok(m) => m,
            Err(e) => {
                if let Some((b, n)) = log {
                    put_text(b, n as c_int, &format!("ptxas (stand-in): {e}"));
                }
                return Err(INVALID_PTX);
            }
        };
        // PTX for sm_XY is JIT-compiled for GPUs of compute capability X.Y and later only.
        let want: u32 = module
            .target
            .trim_start_matches("sm_")
            .parse()
            .map_err(|_| INVALID_PTX)?;
        let (ma, mi) = cc();
        if want > ma * 10 + mi {
            if let Some((b, n)) = log {
                put_text(
                    b,
                    n as c_int,
                    &format!(
                        "ptxas (stand-in): the module is for sm_{want}, the GPU is sm_{ma}{mi}"
                    ),
                );
            }
            return Err(NO_BINARY_FOR_GPU);
        }
        let _ = d;
        s.modules.push(Some(module));
        *m = s.modules.len() as *mut c_void;
        Ok(())
    }))
}

#[no_mangle]
pub extern "C" fn cuModuleUnload(m: *mut c_void) -> CUresult {
    code(with(|s| {
        let i = (m as usize).checked_sub(1).ok_or(INVALID_HANDLE)?;
        let slot = s.modules.get_mut(i).ok_or(INVALID_HANDLE)?;
        *slot = None;
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    f: *mut *mut c_void,
    m: *mut c_void,
    name: *const c_char,
) -> CUresult {
    let name = CStr::from_ptr(name).to_string_lossy().into_owned();
    code(with(|s| {
        let i = (m as usize).checked_sub(1).ok_or(INVALID_HANDLE)?;
        let module = s
            .modules
            .get(i)
            .and_then(Option::as_ref)
            .ok_or(INVALID_HANDLE)?;
        if module.kernel(&name).is_err() {
            return Err(NOT_FOUND);
        }
        s.functions.push((i, name));
        *f = s.functions.len() as *mut c_void;
        Ok(())
    }))
}

/// STANDIN_LAUNCH_ERROR=CODE[@N].
fn launch_error(n: u64) -> Option<CUresult> {
    let v = std::env::var("STANDIN_LAUNCH_ERROR").ok()?;
    let (c, at) = match v.split_once('@') {
        Some((c, at)) => (c, at.parse().unwrap_or(1)),
        None => (v.as_str(), 1),
    };
    let c: CUresult = c.parse().ok()?;
    (n >= at).then_some(c)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    _shared: c_uint,
    _stream: *mut c_void,
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> CUresult {
    match std::env::var("STANDIN_LAUNCH").as_deref() {
        Ok("hang") => loop {
            std::thread::sleep(Duration::from_secs(1000));
        },
        Ok(x) if x.starts_with("slow:") => {
            let ms = x.trim_start_matches("slow:").parse().unwrap_or(0);
            std::thread::sleep(Duration::from_millis(ms));
        }
        _ => {}
    }
    if gy != 1 || gz != 1 || by != 1 || bz != 1 {
        return INVALID_VALUE;
    }
    code(with(|s| {
        s.launches += 1;
        if let Some(e) = launch_error(s.launches) {
            if e == ILLEGAL_ADDRESS {
                s.sticky = Some(e);
            }
            return Err(e);
        }
        let (mi, name) = (f as usize)
            .checked_sub(1)
            .and_then(|i| s.functions.get(i))
            .cloned()
            .ok_or(INVALID_HANDLE)?;
        let module = s
            .modules
            .get(mi)
            .and_then(Option::as_ref)
            .ok_or(INVALID_HANDLE)?;
        let kernel = module.kernel(&name).map_err(|_| INVALID_HANDLE)?.clone();
        // Each parameter as the kernel declares it: 4 or 8 bytes from its pointer.
        let mut values = Vec::new();
        for (i, n) in kernel.param_sizes().into_iter().enumerate() {
            let p = *params.add(i);
            let mut b = [0u8; 8];
            std::ptr::copy_nonoverlapping(p.cast::<u8>(), b.as_mut_ptr(), n);
            values.push(u64::from_le_bytes(b));
        }
        ptx_interp::set_faulty_fma(std::env::var("STANDIN_FMA").as_deref() == Ok("faulty"));
        let mut m = DevMem {
            allocs: &mut s.allocs,
            stuck: stuck(),
        };
        let all = u64::from(gx.max(1)) * u64::from(bx.max(1));
        let run = std::env::var("STANDIN_THREADS")
            .ok()
            .and_then(|v| {
                let (k, n) = v.split_once(':')?;
                (k == name).then(|| n.parse::<u64>().ok())?
            })
            .map_or(all, |n| n.min(all));
        match ptx_interp::launch_threads(&kernel, gx, bx, 0..run, &values, &mut m) {
            Ok(_) => Ok(()),
            Err(e) => {
                // Errors in a kernel are sticky on a GPU: the context is unusable after them.
                let c = map_err(&e);
                s.sticky = Some(c);
                Err(c)
            }
        }
    }))
}

// ---- events ----

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(e: *mut *mut c_void, _flags: c_uint) -> CUresult {
    *e = Box::into_raw(Box::new(None::<Instant>)).cast();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(e: *mut c_void, _stream: *mut c_void) -> CUresult {
    if e.is_null() {
        return INVALID_HANDLE;
    }
    *e.cast::<Option<Instant>>() = Some(Instant::now());
    code(with(|_| Ok(())))
}

#[no_mangle]
pub extern "C" fn cuEventSynchronize(_e: *mut c_void) -> CUresult {
    code(with(|_| Ok(())))
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    a: *mut c_void,
    b: *mut c_void,
) -> CUresult {
    let (Some(a), Some(b)) = (*a.cast::<Option<Instant>>(), *b.cast::<Option<Instant>>()) else {
        return INVALID_HANDLE;
    };
    *ms = (b.saturating_duration_since(a).as_secs_f64() * 1000.0) as f32;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(e: *mut c_void) -> CUresult {
    if !e.is_null() {
        drop(Box::from_raw(e.cast::<Option<Instant>>()));
    }
    SUCCESS
}
