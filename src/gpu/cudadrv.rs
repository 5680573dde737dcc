//! The CUDA driver library (`libcuda.so.1`, `nvcuda.dll`), opened by the path the probe
//! resolved, with each entry point looked up when it is first called.
//!
//! cudarc's own loader cannot be pointed at a file: it dlopens bare names and tries
//! `libcuda.so` before `libcuda.so.1` (cudarc 0.19 `get_lib_name_candidates`), so a CUDA
//! toolkit's `stubs/` directory on `LD_LIBRARY_PATH` wins and every call answers
//! CUDA_ERROR_STUB_LIBRARY (34) while the real driver is installed. Loading the real file first
//! does not help: glibc matches a bare name against loaded objects by file name and SONAME only,
//! and the stub is another file (checked with a stub `libcuda.so` and a real `libcuda.so.1`,
//! both with SONAME `libcuda.so.1`: the second dlopen returned the stub). So the CUDA backend
//! calls the driver through this table, never through cudarc's `sys` functions.
//!
//! A missing entry point is an error naming it (old drivers lack newer symbols), never a panic,
//! and results are read as plain integers, so a code newer than the bindings is no trouble.

use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

use crate::snapshot::GpuCallError;

/// The loaded driver library.
pub struct Driver {
    lib: libloading::Library,
    /// The file or name it was opened by.
    pub path: String,
}

/// The soname the loader resolves when the probe named no file.
pub const DEFAULT_NAME: &str = if cfg!(windows) {
    "nvcuda.dll"
} else {
    "libcuda.so.1"
};

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();

/// Opens the driver library once per process: `path` (the probe's resolved file) or, without
/// one, [`DEFAULT_NAME`] by the loader's search. A later call with another path gets the first
/// library: NVIDIA libraries are never closed or loaded twice in one process.
pub fn load(path: Option<&str>) -> Result<&'static Driver, GpuCallError> {
    let r = DRIVER.get_or_init(|| {
        let name = path.unwrap_or(DEFAULT_NAME).to_string();
        // SAFETY: loading the NVIDIA driver library runs its initialisers, which is what every
        // CUDA program does; it is kept for the life of the process.
        match unsafe { libloading::Library::new(&name) } {
            Ok(lib) => Ok(Driver { lib, path: name }),
            Err(e) => {
                let mut why = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    why = format!("{why}: {s}");
                    src = s.source();
                }
                Err(format!(
                    "the CUDA driver library ({name}) could not be loaded ({why}): no NVIDIA driver is installed for this system or container"
                ))
            }
        }
    });
    r.as_ref().map_err(|why| GpuCallError {
        call: "dlopen libcuda".into(),
        code: None,
        name: String::new(),
        message: why.clone(),
    })
}

impl Driver {
    /// The entry point `name` as a function of type `F` (a `unsafe extern "C" fn`).
    ///
    /// # Safety
    /// `F` must be the C signature of `name` in the CUDA driver API.
    pub unsafe fn sym<F: Copy>(&self, name: &str) -> Result<F, GpuCallError> {
        // SAFETY: the caller gives the right signature.
        unsafe { self.lib.get::<F>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| GpuCallError {
                call: name.to_string(),
                code: None,
                name: "MISSING_SYMBOL".into(),
                message: format!(
                    "the CUDA driver library {} has no {name} ({e}): it is not an NVIDIA driver's libcuda, or one older than R450; install a current driver",
                    self.path
                ),
            })
    }

    /// Whether the library exports `name` (newer entry points, such as `cuDeviceGetUuid_v2`).
    pub fn has(&self, name: &str) -> bool {
        // SAFETY: only the address is looked up; nothing is called.
        unsafe { self.lib.get::<*const ()>(name.as_bytes()) }.is_ok()
    }

    /// Ok for CUDA_SUCCESS; otherwise the error with its name and text from the driver.
    pub fn check(&self, call: &str, code: c_int) -> Result<(), GpuCallError> {
        if code == 0 {
            return Ok(());
        }
        Err(GpuCallError {
            call: call.to_string(),
            code: Some(i64::from(code)),
            name: self.describe("cuGetErrorName", code).unwrap_or_default(),
            message: self
                .describe("cuGetErrorString", code)
                .unwrap_or_else(|| "no description from the driver".into()),
        })
    }

    /// `cuGetErrorName` or `cuGetErrorString` for `code`, when the driver knows it.
    fn describe(&self, which: &str, code: c_int) -> Option<String> {
        type Describe = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;
        // SAFETY: both entry points have this signature.
        let f: Describe = unsafe { self.sym(which) }.ok()?;
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: a plain out-parameter; the driver returns a static string or an error.
        if unsafe { f(code, &mut s) } != 0 || s.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated static string from the driver.
        Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }
}

/// Calls a driver entry point through [`Driver::sym`] and [`Driver::check`]:
/// `cu!(drv, "cuInit", fn(c_uint), 0)` or, with the name errors report,
/// `cu!(drv, "cuMemAlloc_v2" as "cuMemAlloc", fn(*mut u64, usize), &mut p, n)`.
/// Must be used inside `unsafe`: the signature must match the driver API's.
macro_rules! cu {
    ($d:expr, $sym:literal as $call:literal, fn($($t:ty),* $(,)?) $(, $a:expr)* $(,)?) => {{
        let f: unsafe extern "C" fn($($t),*) -> std::ffi::c_int = $d.sym($sym)?;
        $d.check($call, f($($a),*))
    }};
    ($d:expr, $sym:literal, fn($($t:ty),* $(,)?) $(, $a:expr)* $(,)?) => {
        cu!($d, $sym as $sym, fn($($t),*) $(, $a)*)
    };
}
pub(crate) use cu;
