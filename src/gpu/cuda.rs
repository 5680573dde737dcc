//! The CUDA backend: the driver API through cudarc's lower layers, loaded at run time.
//!
//! Only calls that exist in every driver from R450 (CUDA 11.0) are used: the primary context
//! (`cuDevicePrimaryCtxRetain`), `cuMemAlloc_v2`, `cuMemHostAlloc`, `cuModuleLoadDataEx`,
//! `cuLaunchKernel`, events with `cuEventElapsedTime` (v1, as the cuda-12080 bindings call it).
//! cudarc's `CudaContext::new` is not used: it queries an attribute R450/R455 lack
//! (../shared/reference/rust-crates.md section 1).
//!
//! cudarc panics when a library or symbol is missing, so [`CudaBackend::init`] checks that
//! libcuda loads before the first call, cuBLAS is loaded by path ([`super::cublas`]), and the
//! runners call all of this on threads whose panics are caught.

use std::collections::HashMap;
use std::ffi::{c_void, CString};

use cudarc::driver::result as cu;
use cudarc::driver::sys;

use super::{Arg, Backend, Buf, Device, DeviceInfo, GemmType};
use crate::snapshot::GpuCallError;

/// The CUDA driver, loaded at run time, and where to look for cuBLAS.
#[derive(Debug, Default, Clone)]
pub struct CudaBackend {
    /// cuBLAS candidates in order ([`super::cublas::candidates`]); the loader's search by
    /// soname when empty.
    pub cublas: Vec<(Option<u32>, std::path::PathBuf)>,
}

impl CudaBackend {
    /// cuBLAS from the directories of the CUDA runtimes, cuDNN libraries and toolkits the
    /// probes found, newest major the driver supports first.
    pub fn for_snapshot(snap: &crate::snapshot::Snapshot) -> CudaBackend {
        use std::path::{Path, PathBuf};
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut add = |d: PathBuf| {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        };
        for r in snap.runtime_list() {
            if let Some(d) = Path::new(&r.path).parent() {
                add(d.to_path_buf());
            }
        }
        for c in snap.cudnn_list() {
            if let Some(d) = Path::new(&c.path).parent() {
                add(d.to_path_buf());
            }
        }
        if let Some(ts) = snap.cuda.toolkits.get() {
            for t in ts {
                let root = Path::new(&t.root);
                add(root.join("lib64"));
                add(root.join("targets/x86_64-linux/lib"));
                add(root.join("targets/sbsa-linux/lib"));
                add(root.join("bin"));
            }
        }
        let driver_major = snap
            .driver
            .cuda_version()
            .and_then(|v| u32::try_from(v / 1000).ok());
        CudaBackend {
            cublas: super::cublas::candidates(&dirs, driver_major),
        }
    }
}

fn err(call: &str, e: cu::DriverError) -> GpuCallError {
    GpuCallError {
        call: call.to_string(),
        code: Some(e.0 as u32 as i64),
        name: e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        message: e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "no description from the driver".into()),
    }
}

fn check(call: &str, r: sys::CUresult) -> Result<(), GpuCallError> {
    r.result().map_err(|e| err(call, e))
}

impl Backend for CudaBackend {
    fn init(&self) -> Result<i32, GpuCallError> {
        // SAFETY: is_culib_present only tries to dlopen the candidate names.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuCallError {
                call: "dlopen libcuda".into(),
                code: None,
                name: String::new(),
                message: "the CUDA driver library (libcuda.so.1) could not be loaded: no NVIDIA driver is installed for this system or container".into(),
            });
        }
        cu::init().map_err(|e| err("cuInit", e))?;
        let mut v = 0i32;
        // SAFETY: a plain out-parameter.
        check("cuDriverGetVersion", unsafe {
            sys::cuDriverGetVersion(&mut v)
        })?;
        Ok(v)
    }

    fn device_count(&self) -> Result<u32, GpuCallError> {
        cu::device::get_count()
            .map(|n| n.max(0) as u32)
            .map_err(|e| err("cuDeviceGetCount", e))
    }

    fn open(&self, ordinal: u32) -> Result<Box<dyn Device>, GpuCallError> {
        let blas = super::cublas::load(&self.cublas).ok();
        Ok(Box::new(CudaDevice::open(ordinal, blas)?))
    }

    fn cublas(&self) -> Result<String, String> {
        super::cublas::load(&self.cublas).map(|c| c.path.clone())
    }
}

struct CudaDevice {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    info: DeviceInfo,
    allocations: Vec<u64>,
    modules: Vec<sys::CUmodule>,
    functions: HashMap<String, sys::CUfunction>,
    cublas: Option<&'static super::cublas::Cublas>,
    blas: Option<super::cublas::Handle>,
}

impl CudaDevice {
    fn open(
        ordinal: u32,
        cublas: Option<&'static super::cublas::Cublas>,
    ) -> Result<CudaDevice, GpuCallError> {
        let dev = cu::device::get(ordinal as i32).map_err(|e| err("cuDeviceGet", e))?;
        let attr = |a: sys::CUdevice_attribute, name: &str| -> Result<u32, GpuCallError> {
            // SAFETY: dev came from cuDeviceGet.
            unsafe { cu::device::get_attribute(dev, a) }
                .map(|v| v.max(0) as u32)
                .map_err(|e| err(name, e))
        };
        use sys::CUdevice_attribute as A;
        let major = attr(
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "cuDeviceGetAttribute",
        )?;
        let minor = attr(
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "cuDeviceGetAttribute",
        )?;
        let sms = attr(
            A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "cuDeviceGetAttribute",
        )?;
        let mut name = [0u8; 256];
        // SAFETY: the buffer is as long as we say.
        check("cuDeviceGetName", unsafe {
            sys::cuDeviceGetName(name.as_mut_ptr().cast(), name.len() as i32, dev)
        })?;
        let name = c_text(&name);
        let mut bus = [0u8; 64];
        // SAFETY: as above.
        let pci_bus_id = check("cuDeviceGetPCIBusId", unsafe {
            sys::cuDeviceGetPCIBusId(bus.as_mut_ptr().cast(), bus.len() as i32, dev)
        })
        .ok()
        .map(|_| nvml_bus_id(&c_text(&bus)));
        let uuid = cu::device::get_uuid(dev).ok().map(|u| uuid_text(&u.bytes));
        // SAFETY: dev came from cuDeviceGet.
        let total =
            unsafe { cu::device::total_mem(dev) }.map_err(|e| err("cuDeviceTotalMem", e))?;
        // SAFETY: as above; released in Drop.
        let ctx = unsafe { cu::primary_ctx::retain(dev) }
            .map_err(|e| err("cuDevicePrimaryCtxRetain", e))?;
        let d = CudaDevice {
            dev,
            ctx,
            info: DeviceInfo {
                name,
                compute_capability: (major, minor),
                total_bytes: total as u64,
                multiprocessors: sms,
                pci_bus_id,
                uuid,
            },
            allocations: Vec::new(),
            modules: Vec::new(),
            functions: HashMap::new(),
            cublas,
            blas: None,
        };
        d.current()?;
        Ok(d)
    }

    /// Makes this device's context current on the calling thread.
    fn current(&self) -> Result<(), GpuCallError> {
        // SAFETY: ctx is a retained primary context.
        unsafe { cu::ctx::set_current(self.ctx) }.map_err(|e| err("cuCtxSetCurrent", e))
    }

    /// Times `f` (work queued on the null stream) with events; milliseconds.
    fn timed(
        &self,
        what: &str,
        f: &mut dyn FnMut() -> Result<(), GpuCallError>,
    ) -> Result<f64, GpuCallError> {
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = cu::event::create(flags).map_err(|e| err("cuEventCreate", e))?;
        let stop = match cu::event::create(flags) {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: created above, destroyed once.
                let _ = unsafe { cu::event::destroy(start) };
                return Err(err("cuEventCreate", e));
            }
        };
        let null = std::ptr::null_mut();
        // SAFETY: events created above on this context; destroyed below exactly once.
        let r = (|| unsafe {
            cu::event::record(start, null).map_err(|e| err("cuEventRecord", e))?;
            f()?;
            cu::event::record(stop, null).map_err(|e| err("cuEventRecord", e))?;
            cu::event::synchronize(stop).map_err(|e| err(what, e))?;
            cu::event::elapsed(start, stop).map_err(|e| err("cuEventElapsedTime", e))
        })();
        // SAFETY: as above.
        unsafe {
            let _ = cu::event::destroy(start);
            let _ = cu::event::destroy(stop);
        }
        r.map(f64::from)
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn mem_info(&mut self) -> Result<(u64, u64), GpuCallError> {
        self.current()?;
        cu::mem_get_info()
            .map(|(f, t)| (f as u64, t as u64))
            .map_err(|e| err("cuMemGetInfo", e))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buf, GpuCallError> {
        self.current()?;
        // SAFETY: freed in free() or Drop.
        let ptr = unsafe { cu::malloc_sync(bytes) }.map_err(|e| err("cuMemAlloc", e))?;
        self.allocations.push(ptr);
        Ok(Buf { ptr, bytes })
    }

    fn free(&mut self, buf: Buf) -> Result<(), GpuCallError> {
        self.current()?;
        if let Some(i) = self.allocations.iter().position(|p| *p == buf.ptr) {
            self.allocations.swap_remove(i);
            // SAFETY: allocated by alloc() and not freed before (it was in the list).
            unsafe { cu::free_sync(buf.ptr) }.map_err(|e| err("cuMemFree", e))?;
        }
        Ok(())
    }

    fn upload(&mut self, dst: Buf, src: &[u8]) -> Result<(), GpuCallError> {
        self.current()?;
        let n = src.len().min(dst.bytes);
        // SAFETY: n bytes fit in both.
        check("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(dst.ptr, src.as_ptr().cast(), n)
        })
    }

    fn download(&mut self, src: Buf, dst: &mut [u8]) -> Result<(), GpuCallError> {
        self.current()?;
        let n = dst.len().min(src.bytes);
        // SAFETY: n bytes fit in both.
        check("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src.ptr, n)
        })
    }

    fn pinned_copy_rate(
        &mut self,
        buf: Buf,
        to_device: bool,
        reps: u32,
    ) -> Result<f64, GpuCallError> {
        self.current()?;
        // SAFETY: freed below.
        let host =
            unsafe { cu::malloc_host(buf.bytes, 0) }.map_err(|e| err("cuMemHostAlloc", e))?;
        // Defined contents (the trait's promise: a host-to-device copy leaves zeros), and every
        // page touched before the timed copies.
        // SAFETY: host points to buf.bytes writable bytes, allocated just above.
        unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, buf.bytes) };
        let call = if to_device {
            "cuMemcpyHtoDAsync"
        } else {
            "cuMemcpyDtoHAsync"
        };
        let mut best = f64::INFINITY;
        let mut result = Ok(());
        for _ in 0..reps.saturating_add(1) {
            let mut copy = || {
                // SAFETY: host and buf are both buf.bytes long.
                let r = unsafe {
                    if to_device {
                        sys::cuMemcpyHtoDAsync_v2(buf.ptr, host, buf.bytes, std::ptr::null_mut())
                    } else {
                        sys::cuMemcpyDtoHAsync_v2(host, buf.ptr, buf.bytes, std::ptr::null_mut())
                    }
                };
                check(call, r)
            };
            match self.timed(call, &mut copy) {
                Ok(ms) => best = best.min(ms),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // SAFETY: allocated above with cuMemHostAlloc.
        let _ = unsafe { cu::free_host(host) };
        result?;
        Ok(rate_gbps(buf.bytes as f64, best))
    }

    fn load_module(&mut self, ptx: &str) -> Result<(), GpuCallError> {
        self.current()?;
        let image = CString::new(ptx).map_err(|_| GpuCallError {
            call: "cuModuleLoadDataEx".into(),
            code: None,
            name: String::new(),
            message: "the PTX text contains a NUL byte".into(),
        })?;
        let mut log = vec![0u8; 8192];
        let mut opts = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut vals: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated; the log buffer outlives the call.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                image.as_ptr().cast(),
                opts.len() as u32,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        if let Err(mut e) = check("cuModuleLoadDataEx", r) {
            let jit = c_text(&log);
            if !jit.trim().is_empty() {
                e.message = format!("{}; JIT log: {}", e.message, jit.trim());
            }
            return Err(e);
        }
        self.modules.push(module);
        Ok(())
    }

    fn launch(
        &mut self,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[Arg],
    ) -> Result<f64, GpuCallError> {
        self.current()?;
        let f = match self.functions.get(kernel) {
            Some(f) => *f,
            None => {
                let name = CString::new(kernel).unwrap_or_default();
                let mut last = Err(GpuCallError {
                    call: "cuModuleGetFunction".into(),
                    code: None,
                    name: String::new(),
                    message: format!("no module loaded has a kernel named {kernel}"),
                });
                for module in &self.modules {
                    let mut f: sys::CUfunction = std::ptr::null_mut();
                    // SAFETY: module is loaded; name is NUL-terminated.
                    last = check("cuModuleGetFunction", unsafe {
                        sys::cuModuleGetFunction(&mut f, *module, name.as_ptr())
                    })
                    .map(|_| f);
                    if last.is_ok() {
                        break;
                    }
                }
                let f = last?;
                self.functions.insert(kernel.to_string(), f);
                f
            }
        };
        // Each argument in its own 8-byte slot; the driver reads as many bytes as the
        // kernel's parameter has (4 for u32/f32: the low bytes on little-endian machines).
        let mut slots: Vec<u64> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(b) => b.ptr,
                Arg::U32(v) => u64::from(*v),
                Arg::U64(v) => *v,
                Arg::F32(v) => u64::from(v.to_bits()),
            })
            .collect();
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| (s as *mut u64).cast::<c_void>())
            .collect();
        self.timed("cuLaunchKernel", &mut || {
            // SAFETY: the parameters match the kernel's signature (the runners pass them in
            // the order the PTX declares) and live until the launch returns.
            unsafe {
                cu::launch_kernel(
                    f,
                    (grid.max(1), 1, 1),
                    (block.max(1), 1, 1),
                    0,
                    std::ptr::null_mut(),
                    &mut params,
                )
            }
            .map_err(|e| err("cuLaunchKernel", e))
        })
    }

    fn gemm(
        &mut self,
        ty: GemmType,
        (m, n, k): (u32, u32, u32),
        a: Buf,
        b: Buf,
        c: Buf,
        reps: u32,
    ) -> Result<f64, GpuCallError> {
        use super::cublas as cb;
        self.current()?;
        let Some(lib) = self.cublas else {
            return Err(GpuCallError {
                call: "dlopen libcublas".into(),
                code: None,
                name: String::new(),
                message: "cuBLAS could not be loaded".into(),
            });
        };
        let h = match self.blas {
            Some(h) => h,
            None => {
                let h = lib.create()?;
                self.blas = Some(h);
                h
            }
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let op = cb::OP_N;
        let call = if ty == GemmType::F32 {
            "cublasSgemm"
        } else {
            "cublasGemmEx"
        };
        let mut best = f64::INFINITY;
        for _ in 0..reps.saturating_add(1) {
            let ms = self.timed(call, &mut || {
                // SAFETY: a, b and c hold m*k, k*n elements of `ty` and m*n floats (the
                // runners allocate them so).
                let r = unsafe {
                    match ty {
                        GemmType::F32 => (lib.sgemm)(
                            h,
                            op,
                            op,
                            m as i32,
                            n as i32,
                            k as i32,
                            &alpha,
                            a.ptr as *const f32,
                            m as i32,
                            b.ptr as *const f32,
                            k as i32,
                            &beta,
                            c.ptr as *mut f32,
                            m as i32,
                        ),
                        GemmType::F16 | GemmType::Bf16 => {
                            let t = if ty == GemmType::F16 {
                                cb::R_16F
                            } else {
                                cb::R_16BF
                            };
                            (lib.gemm_ex)(
                                h,
                                op,
                                op,
                                m as i32,
                                n as i32,
                                k as i32,
                                (&alpha as *const f32).cast(),
                                a.ptr as *const c_void,
                                t,
                                m as i32,
                                b.ptr as *const c_void,
                                t,
                                k as i32,
                                (&beta as *const f32).cast(),
                                c.ptr as *mut c_void,
                                cb::R_32F,
                                m as i32,
                                cb::COMPUTE_32F,
                                cb::GEMM_DEFAULT,
                            )
                        }
                    }
                };
                cb::check(call, r)
            })?;
            best = best.min(ms);
        }
        Ok(best)
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.current().is_err() {
            return;
        }
        // SAFETY: every handle below was created by this device and is released once.
        unsafe {
            if let (Some(h), Some(lib)) = (self.blas.take(), self.cublas) {
                lib.destroy(h);
            }
            for p in self.allocations.drain(..) {
                let _ = cu::free_sync(p);
            }
            for m in self.modules.drain(..) {
                let _ = cu::module::unload(m);
            }
            let _ = cu::primary_ctx::release(self.dev);
        }
    }
}

/// GB/s (10^9 bytes per second) from bytes and milliseconds.
pub fn rate_gbps(bytes: f64, ms: f64) -> f64 {
    if ms > 0.0 && ms.is_finite() {
        bytes / (ms / 1000.0) / 1e9
    } else {
        0.0
    }
}

/// Text up to the first NUL.
fn c_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned()
}

/// "0000:2b:00.0" (the driver API's form) as NVML writes it: "00000000:2B:00.0".
pub fn nvml_bus_id(s: &str) -> String {
    let s = s.trim();
    match s.split_once(':') {
        Some((dom, rest)) if dom.len() < 8 && dom.chars().all(|c| c.is_ascii_hexdigit()) => {
            format!("{:0>8}:{}", dom, rest).to_ascii_uppercase()
        }
        _ => s.to_ascii_uppercase(),
    }
}

/// "GPU-" and the 16 bytes in the 8-4-4-4-12 form nvidia-smi prints.
fn uuid_text(b: &[std::ffi::c_char; 16]) -> String {
    let hex: Vec<String> = b.iter().map(|x| format!("{:02x}", *x as u8)).collect();
    let j = |r: std::ops::Range<usize>| hex.get(r).map(|s| s.concat()).unwrap_or_default();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        j(0..4),
        j(4..6),
        j(6..8),
        j(8..10),
        j(10..16)
    )
}
