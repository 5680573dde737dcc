//! The CUDA backend: the driver API, loaded at run time from the file the probe resolved
//! ([`super::cudadrv`]; cudarc's loader would take a toolkit's stub `libcuda.so` first).
//!
//! Only calls that exist in every driver from R450 (CUDA 11.0) are used: the primary context
//! (`cuDevicePrimaryCtxRetain`), `cuMemAlloc_v2`, `cuMemHostAlloc`, `cuModuleLoadDataEx`,
//! `cuLaunchKernel`, events with `cuEventElapsedTime` (v1). cudarc's `CudaContext::new` is not
//! used: it queries an attribute R450/R455 lack (../shared/reference/rust-crates.md section 1).
//! cudarc supplies only the driver API's types and constants here.
//!
//! A missing entry point is an error, not a panic; cuBLAS is loaded by path
//! ([`super::cublas`]), and the runners call all of this on threads whose panics are caught.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};

use cudarc::driver::sys;

use super::cudadrv::{self, cu, Driver};
use super::{Arg, Backend, Buf, Device, DeviceInfo, GemmType};
use crate::snapshot::GpuCallError;

/// The CUDA driver, loaded at run time, and where to look for cuBLAS.
#[derive(Debug, Default, Clone)]
pub struct CudaBackend {
    /// The driver library the probe resolved (`snapshot.driver.libcuda`); the loader's search
    /// for `libcuda.so.1` when None.
    pub libcuda: Option<String>,
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
            libcuda: snap.driver.libcuda.get().and_then(|l| l.path.clone()),
            cublas: super::cublas::candidates(&dirs, driver_major),
        }
    }
}

/// The driver library this backend loads (once per process).
fn driver(b: &CudaBackend) -> Result<&'static Driver, GpuCallError> {
    cudadrv::load(b.libcuda.as_deref())
}

impl Backend for CudaBackend {
    fn init(&self) -> Result<i32, GpuCallError> {
        let d = driver(self)?;
        let mut v: c_int = 0;
        // SAFETY: the driver API's signatures; a plain out-parameter.
        unsafe {
            cu!(d, "cuInit", fn(c_uint), 0)?;
            cu!(d, "cuDriverGetVersion", fn(*mut c_int), &mut v)?;
        }
        Ok(v)
    }

    fn device_count(&self) -> Result<u32, GpuCallError> {
        let d = driver(self)?;
        let mut n: c_int = 0;
        // SAFETY: as above.
        unsafe { cu!(d, "cuDeviceGetCount", fn(*mut c_int), &mut n)? };
        Ok(n.max(0) as u32)
    }

    fn describe(&self, ordinal: u32) -> Result<DeviceInfo, GpuCallError> {
        describe(driver(self)?, ordinal).map(|(_, info)| info)
    }

    fn open(&self, ordinal: u32) -> Result<Box<dyn Device>, GpuCallError> {
        let d = driver(self)?;
        let blas = super::cublas::load(&self.cublas).ok();
        Ok(Box::new(CudaDevice::open(d, ordinal, blas)?))
    }

    fn cublas(&self) -> Result<String, String> {
        super::cublas::load(&self.cublas).map(|c| c.path.clone())
    }
}

struct CudaDevice {
    drv: &'static Driver,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    info: DeviceInfo,
    allocations: Vec<u64>,
    modules: Vec<sys::CUmodule>,
    functions: HashMap<String, sys::CUfunction>,
    cublas: Option<&'static super::cublas::Cublas>,
    blas: Option<super::cublas::Handle>,
}

/// The CUDA device handle type, an `int` in the driver API.
type CuDevice = sys::CUdevice;

impl CudaDevice {
    fn open(
        drv: &'static Driver,
        ordinal: u32,
        cublas: Option<&'static super::cublas::Cublas>,
    ) -> Result<CudaDevice, GpuCallError> {
        let (dev, info) = describe(drv, ordinal)?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: as above; released in Drop.
        unsafe {
            cu!(
                drv,
                "cuDevicePrimaryCtxRetain",
                fn(*mut sys::CUcontext, CuDevice),
                &mut ctx,
                dev
            )?
        };
        let d = CudaDevice {
            drv,
            dev,
            ctx,
            info,
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
        unsafe { cu!(self.drv, "cuCtxSetCurrent", fn(sys::CUcontext), self.ctx) }
    }

    /// The kernel `kernel` of the loaded modules, looked up once (`cuModuleGetFunction`, which
    /// under lazy loading is also when the driver loads it onto the GPU).
    fn function(&mut self, kernel: &str) -> Result<sys::CUfunction, GpuCallError> {
        if let Some(f) = self.functions.get(kernel) {
            return Ok(*f);
        }
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
            last = (|| unsafe {
                cu!(
                    self.drv,
                    "cuModuleGetFunction",
                    fn(*mut sys::CUfunction, sys::CUmodule, *const c_char),
                    &mut f,
                    *module,
                    name.as_ptr()
                )
            })()
            .map(|_| f);
            if last.is_ok() {
                break;
            }
        }
        let f = last?;
        self.functions.insert(kernel.to_string(), f);
        Ok(f)
    }

    /// Times `f` (work queued on the null stream) with events; milliseconds.
    fn timed(
        &self,
        what: &str,
        f: &mut dyn FnMut() -> Result<(), GpuCallError>,
    ) -> Result<f64, GpuCallError> {
        let d = self.drv;
        let create = || -> Result<sys::CUevent, GpuCallError> {
            let mut e: sys::CUevent = std::ptr::null_mut();
            // SAFETY: a plain out-parameter; CU_EVENT_DEFAULT is 0.
            unsafe { cu!(d, "cuEventCreate", fn(*mut sys::CUevent, c_uint), &mut e, 0)? };
            Ok(e)
        };
        let destroy = |e: sys::CUevent| {
            // SAFETY: e was created by create() and is destroyed once.
            let _ = (|| unsafe { cu!(d, "cuEventDestroy_v2", fn(sys::CUevent), e) })();
        };
        let start = create()?;
        let stop = match create() {
            Ok(s) => s,
            Err(e) => {
                destroy(start);
                return Err(e);
            }
        };
        let null: sys::CUstream = std::ptr::null_mut();
        // SAFETY: events created above on this context; destroyed below exactly once.
        let r = (|| unsafe {
            cu!(
                d,
                "cuEventRecord",
                fn(sys::CUevent, sys::CUstream),
                start,
                null
            )?;
            f()?;
            cu!(
                d,
                "cuEventRecord",
                fn(sys::CUevent, sys::CUstream),
                stop,
                null
            )?;
            let sync: unsafe extern "C" fn(sys::CUevent) -> c_int = d.sym("cuEventSynchronize")?;
            d.check(what, sync(stop))?;
            let mut ms: f32 = 0.0;
            cu!(
                d,
                "cuEventElapsedTime",
                fn(*mut f32, sys::CUevent, sys::CUevent),
                &mut ms,
                start,
                stop
            )?;
            Ok(ms)
        })();
        destroy(start);
        destroy(stop);
        r.map(f64::from)
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn mem_info(&mut self) -> Result<(u64, u64), GpuCallError> {
        self.current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: plain out-parameters.
        unsafe {
            cu!(
                self.drv,
                "cuMemGetInfo_v2" as "cuMemGetInfo",
                fn(*mut usize, *mut usize),
                &mut free,
                &mut total
            )?
        };
        Ok((free as u64, total as u64))
    }

    fn alloc(&mut self, bytes: usize) -> Result<Buf, GpuCallError> {
        self.current()?;
        let mut ptr: u64 = 0;
        // SAFETY: a plain out-parameter; freed in free() or Drop.
        unsafe {
            cu!(self.drv, "cuMemAlloc_v2" as "cuMemAlloc", fn(*mut u64, usize), &mut ptr, bytes)?
        };
        self.allocations.push(ptr);
        Ok(Buf { ptr, bytes })
    }

    fn free(&mut self, buf: Buf) -> Result<(), GpuCallError> {
        self.current()?;
        if let Some(i) = self.allocations.iter().position(|p| *p == buf.ptr) {
            self.allocations.swap_remove(i);
            // SAFETY: allocated by alloc() and not freed before (it was in the list).
            unsafe { cu!(self.drv, "cuMemFree_v2" as "cuMemFree", fn(u64), buf.ptr)? };
        }
        Ok(())
    }

    fn upload(&mut self, dst: Buf, src: &[u8]) -> Result<(), GpuCallError> {
        self.current()?;
        let n = src.len().min(dst.bytes);
        // SAFETY: n bytes fit in both.
        unsafe {
            cu!(
                self.drv,
                "cuMemcpyHtoD_v2" as "cuMemcpyHtoD",
                fn(u64, *const c_void, usize),
                dst.ptr,
                src.as_ptr().cast(),
                n
            )
        }
    }

    fn download(&mut self, src: Buf, dst: &mut [u8]) -> Result<(), GpuCallError> {
        self.current()?;
        let n = dst.len().min(src.bytes);
        // SAFETY: n bytes fit in both.
        unsafe {
            cu!(
                self.drv,
                "cuMemcpyDtoH_v2" as "cuMemcpyDtoH",
                fn(*mut c_void, u64, usize),
                dst.as_mut_ptr().cast(),
                src.ptr,
                n
            )
        }
    }

    fn pinned_copy_rate(
        &mut self,
        buf: Buf,
        to_device: bool,
        reps: u32,
    ) -> Result<f64, GpuCallError> {
        self.current()?;
        let d = self.drv;
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: a plain out-parameter; freed below.
        unsafe {
            cu!(
                d,
                "cuMemHostAlloc",
                fn(*mut *mut c_void, usize, c_uint),
                &mut host,
                buf.bytes,
                0
            )?
        };
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
                let null: sys::CUstream = std::ptr::null_mut();
                // SAFETY: host and buf are both buf.bytes long.
                unsafe {
                    if to_device {
                        cu!(
                            d,
                            "cuMemcpyHtoDAsync_v2" as "cuMemcpyHtoDAsync",
                            fn(u64, *const c_void, usize, sys::CUstream),
                            buf.ptr,
                            host,
                            buf.bytes,
                            null
                        )
                    } else {
                        cu!(
                            d,
                            "cuMemcpyDtoHAsync_v2" as "cuMemcpyDtoHAsync",
                            fn(*mut c_void, u64, usize, sys::CUstream),
                            host,
                            buf.ptr,
                            buf.bytes,
                            null
                        )
                    }
                }
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
        let _ = unsafe { cu!(d, "cuMemFreeHost", fn(*mut c_void), host) };
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
        // SAFETY: the image is NUL-terminated; the log buffer outlives the call; the options
        // are enum values (ints).
        let r = unsafe {
            cu!(
                self.drv,
                "cuModuleLoadDataEx",
                fn(
                    *mut sys::CUmodule,
                    *const c_void,
                    c_uint,
                    *mut sys::CUjit_option,
                    *mut *mut c_void,
                ),
                &mut module,
                image.as_ptr().cast(),
                opts.len() as c_uint,
                opts.as_mut_ptr(),
                vals.as_mut_ptr()
            )
        };
        if let Err(mut e) = r {
            let jit = c_text(&log);
            if !jit.trim().is_empty() {
                e.message = format!("{}; JIT log: {}", e.message, jit.trim());
            }
            return Err(e);
        }
        self.modules.push(module);
        Ok(())
    }

    fn load_kernels(&mut self, names: &[&str]) -> Result<(), GpuCallError> {
        self.current()?;
        for k in names {
            self.function(k)?;
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
        self.current()?;
        let f = self.function(kernel)?;
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
        let d = self.drv;
        self.timed("cuLaunchKernel", &mut || {
            let null: sys::CUstream = std::ptr::null_mut();
            // SAFETY: the parameters match the kernel's signature (the runners pass them in
            // the order the PTX declares) and live until the launch returns.
            unsafe {
                cu!(
                    d,
                    "cuLaunchKernel",
                    fn(
                        sys::CUfunction,
                        c_uint,
                        c_uint,
                        c_uint,
                        c_uint,
                        c_uint,
                        c_uint,
                        c_uint,
                        sys::CUstream,
                        *mut *mut c_void,
                        *mut *mut c_void,
                    ),
                    f,
                    grid.max(1),
                    1,
                    1,
                    block.max(1),
                    1,
                    1,
                    0,
                    null,
                    params.as_mut_ptr(),
                    std::ptr::null_mut()
                )
            }
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
            let d = self.drv;
            for p in self.allocations.drain(..) {
                let _ = (|| cu!(d, "cuMemFree_v2", fn(u64), p))();
            }
            for m in self.modules.drain(..) {
                let _ = (|| cu!(d, "cuModuleUnload", fn(sys::CUmodule), m))();
            }
            let dev = self.dev;
            let _ = (|| cu!(d, "cuDevicePrimaryCtxRelease_v2", fn(CuDevice), dev))();
        }
    }
}

/// The device `ordinal` and what the driver says of it. Only device-management calls, which
/// need `cuInit` but no context (CUDA Driver API, "Device Management"): nothing is allocated
/// on the GPU.
fn describe(drv: &Driver, ordinal: u32) -> Result<(CuDevice, DeviceInfo), GpuCallError> {
    let mut dev: CuDevice = 0;
    // SAFETY: the driver API's signature; a plain out-parameter.
    unsafe {
        cu!(
            drv,
            "cuDeviceGet",
            fn(*mut CuDevice, c_int),
            &mut dev,
            ordinal as c_int
        )?
    };
    let attr = |a: sys::CUdevice_attribute| -> Result<u32, GpuCallError> {
        let mut v: c_int = 0;
        // SAFETY: dev came from cuDeviceGet; the attribute is an enum value (an int).
        unsafe {
            cu!(
                drv,
                "cuDeviceGetAttribute",
                fn(*mut c_int, c_int, CuDevice),
                &mut v,
                a as c_int,
                dev
            )?
        };
        Ok(v.max(0) as u32)
    };
    use sys::CUdevice_attribute as A;
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let sms = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    // cuDeviceGetName and cuDeviceGetPCIBusId: a string into a buffer of the given length.
    let text = |call: &str, len: usize| -> Result<String, GpuCallError> {
        let mut buf = vec![0u8; len];
        // SAFETY: both calls have this signature; the buffer is as long as we say.
        let f: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> c_int =
            unsafe { drv.sym(call)? };
        drv.check(call, unsafe {
            f(buf.as_mut_ptr().cast(), len as c_int, dev)
        })?;
        Ok(c_text(&buf))
    };
    let name = text("cuDeviceGetName", 256)?;
    let pci_bus_id = text("cuDeviceGetPCIBusId", 64)
        .ok()
        .map(|b| nvml_bus_id(&b));
    let uuid = device_uuid(drv, dev).ok();
    let mut total: usize = 0;
    // SAFETY: dev came from cuDeviceGet; a plain out-parameter.
    unsafe {
        cu!(drv, "cuDeviceTotalMem_v2" as "cuDeviceTotalMem", fn(*mut usize, CuDevice), &mut total, dev)?
    };
    Ok((
        dev,
        DeviceInfo {
            name,
            compute_capability: (major, minor),
            total_bytes: total as u64,
            multiprocessors: sms,
            pci_bus_id,
            uuid,
        },
    ))
}

/// The device's UUID as nvidia-smi and `CUDA_VISIBLE_DEVICES` name it.
///
/// `cuDeviceGetUuid` (v1) gives a MIG instance its parent GPU's UUID, which in
/// `CUDA_VISIBLE_DEVICES` selects no device inside a MIG-partitioned GPU; `cuDeviceGetUuid_v2`
/// (CUDA 11.4 drivers, R470 on) gives the instance its own. v2 is called only when the driver
/// exports it (R450/R460 do not), and an answer that differs from v1's is a MIG instance
/// ("MIG-…", the form nvidia-smi -L prints from R470; NVIDIA MIG User Guide, "CUDA Device
/// Enumeration").
fn device_uuid(drv: &Driver, dev: CuDevice) -> Result<String, GpuCallError> {
    let read = |sym: &'static str| -> Result<[c_char; 16], GpuCallError> {
        let mut u = [0 as c_char; 16];
        // SAFETY: both versions take a 16-byte CUuuid out-parameter and a device.
        let f: unsafe extern "C" fn(*mut c_char, CuDevice) -> c_int = unsafe { drv.sym(sym)? };
        // SAFETY: as above.
        drv.check(sym, unsafe { f(u.as_mut_ptr(), dev) })?;
        Ok(u)
    };
    let v1 = read("cuDeviceGetUuid")?;
    let v2 = if drv.has("cuDeviceGetUuid_v2") {
        read("cuDeviceGetUuid_v2").ok()
    } else {
        None
    };
    Ok(uuid_name(&v1, v2.as_ref()))
}

/// "GPU-…" from v1's bytes, or "MIG-…" from v2's when they differ (a MIG instance).
pub fn uuid_name(v1: &[c_char; 16], v2: Option<&[c_char; 16]>) -> String {
    match v2 {
        Some(u) if u != v1 => format!("MIG-{}", uuid_text(u)),
        _ => format!("GPU-{}", uuid_text(v1)),
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

/// The 16 bytes in the 8-4-4-4-12 form nvidia-smi prints.
fn uuid_text(b: &[c_char; 16]) -> String {
    let hex: Vec<String> = b.iter().map(|x| format!("{:02x}", *x as u8)).collect();
    let j = |r: std::ops::Range<usize>| hex.get(r).map(|s| s.concat()).unwrap_or_default();
    format!(
        "{}-{}-{}-{}-{}",
        j(0..4),
        j(4..6),
        j(6..8),
        j(8..10),
        j(10..16)
    )
}
