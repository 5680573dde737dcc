//! cuBLAS, loaded at run time by path: the smoke SGEMM and the stress GEMMs.
//!
//! cudarc's own loader tries bare names only, never `.so.13`, and `.12` before `.11`, so on a
//! host whose cuBLAS comes from a pip wheel (`nvidia/cu13/lib`, `nvidia/cublas/lib`) or from
//! CUDA 13 alone, the GEMMs were skipped. Here the candidates come from what the probes found
//! (the directories of every CUDA runtime, the toolkits), then the loader's own search by
//! soname, newest major the driver supports first. Only five entry points are used, each in
//! every cuBLAS since 11.0.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::snapshot::GpuCallError;

pub type Handle = *mut c_void;

type CreateFn = unsafe extern "C" fn(*mut Handle) -> c_int;
type DestroyFn = unsafe extern "C" fn(Handle) -> c_int;
#[allow(clippy::type_complexity)]
type SgemmFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const f32,
    *const f32,
    c_int,
    *const f32,
    c_int,
    *const f32,
    *mut f32,
    c_int,
) -> c_int;
#[allow(clippy::type_complexity)]
type GemmExFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> c_int;

/// cublasOperation_t CUBLAS_OP_N.
pub const OP_N: c_int = 0;
/// cudaDataType_t values (library_types.h).
pub const R_32F: c_int = 0;
pub const R_16F: c_int = 2;
pub const R_16BF: c_int = 14;
/// cublasComputeType_t CUBLAS_COMPUTE_32F (cuBLAS 11 and newer).
pub const COMPUTE_32F: c_int = 68;
/// cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT.
pub const GEMM_DEFAULT: c_int = -1;

/// A loaded cuBLAS and its entry points; kept for the life of the process.
pub struct Cublas {
    pub path: String,
    _lib: libloading::Library,
    create: CreateFn,
    destroy: DestroyFn,
    pub sgemm: SgemmFn,
    pub gemm_ex: GemmExFn,
}

// SAFETY: function pointers into a library that is never unloaded; cuBLAS handles are used by
// one thread at a time (each device's own).
unsafe impl Sync for Cublas {}
unsafe impl Send for Cublas {}

/// The name of a cublasStatus_t (cublas_api.h, mined into knowledge/cublas.yaml).
pub fn status_name(code: c_int) -> String {
    if code == 0 {
        return "CUBLAS_STATUS_SUCCESS".to_string();
    }
    crate::knowledge::codes::by_num("cublas", i64::from(code))
        .map_or_else(|| format!("CUBLAS_STATUS_{code}"), |c| c.name.clone())
}

/// A cuBLAS status as a call error (None for success).
pub fn check(call: &str, code: c_int) -> Result<(), GpuCallError> {
    if code == 0 {
        return Ok(());
    }
    Err(GpuCallError {
        call: call.to_string(),
        code: Some(i64::from(code)),
        name: status_name(code),
        message: "cuBLAS returned an error".into(),
    })
}

/// The sonames to try by the loader's own search, newest first.
fn sonames() -> Vec<(u32, String)> {
    [13u32, 12, 11]
        .iter()
        .map(|m| {
            let name = if cfg!(windows) {
                format!("cublas64_{m}.dll")
            } else {
                format!("libcublas.so.{m}")
            };
            (*m, name)
        })
        .collect()
}

/// The major version a cuBLAS file name carries ("libcublas.so.12.4.5.8" → 12,
/// "cublas64_13.dll" → 13).
pub fn file_major(name: &str) -> Option<u32> {
    if let Some(rest) = name.strip_prefix("libcublas.so.") {
        return rest.split('.').next()?.parse().ok();
    }
    let rest = name.strip_prefix("cublas64_")?.strip_suffix(".dll")?;
    rest.split('_').next()?.parse().ok()
}

/// Where to look, in order: for each directory given (those of the CUDA runtimes and toolkits
/// the probes found), the cuBLAS files in it and in a pip wheel's sibling `cublas/lib`; then
/// the loader's search by soname. Majors newer than the driver's CUDA major come last: such a
/// cuBLAS loads but cannot start on this driver.
pub fn candidates(dirs: &[PathBuf], driver_major: Option<u32>) -> Vec<(Option<u32>, PathBuf)> {
    let mut found: Vec<(Option<u32>, PathBuf)> = Vec::new();
    let mut push = |major: Option<u32>, p: PathBuf| {
        if !found.iter().any(|(_, q)| q == &p) {
            found.push((major, p));
        }
    };
    for d in dirs {
        let mut look = vec![d.clone()];
        // nvidia/cuda_runtime/lib → nvidia/cublas/lib (the CUDA 11 and 12 wheels).
        if let Some(nvidia) = d.parent().and_then(Path::parent) {
            look.push(nvidia.join("cublas").join("lib"));
        }
        for dir in look {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<String> = rd
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| file_major(n).is_some() && !n.contains("Lt"))
                .collect();
            // The shortest name of each major is its soname link.
            names.sort_by_key(|n| (std::cmp::Reverse(file_major(n)), n.len()));
            for n in names {
                push(file_major(&n), dir.join(n));
            }
        }
    }
    for (m, name) in sonames() {
        push(Some(m), PathBuf::from(name));
    }
    if let Some(dm) = driver_major {
        // A stable sort: the order found stays within each group.
        found.sort_by_key(|(m, _)| m.is_some_and(|m| m > dm));
    }
    found
}

static LOADED: OnceLock<Result<Cublas, String>> = OnceLock::new();

/// Loads the first candidate that opens and has the entry points; the same one for the rest of
/// the process. The error says what was tried.
pub fn load(cands: &[(Option<u32>, PathBuf)]) -> Result<&'static Cublas, String> {
    LOADED
        .get_or_init(|| {
            let mut tried = Vec::new();
            for (_, p) in cands {
                match open(p) {
                    Ok(c) => return Ok(c),
                    Err(e) => tried.push(format!("{}: {e}", p.display())),
                }
            }
            Err(format!(
                "no cuBLAS could be loaded (it comes with the CUDA toolkit or the nvidia-cublas wheel); tried {}",
                crate::sanitize::clean_line(&tried.join("; "), 600)
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn open(p: &Path) -> Result<Cublas, String> {
    // SAFETY: loading cuBLAS runs its initialisers, which only register with the CUDA runtime.
    let lib = unsafe { libloading::Library::new(p) }.map_err(|e| first_line(&e.to_string()))?;
    // SAFETY: the symbols are looked up by their C names with the signatures of cublas_api.h.
    unsafe {
        let create = *lib
            .get::<CreateFn>(b"cublasCreate_v2\0")
            .map_err(|e| first_line(&e.to_string()))?;
        let destroy = *lib
            .get::<DestroyFn>(b"cublasDestroy_v2\0")
            .map_err(|e| first_line(&e.to_string()))?;
        let sgemm = *lib
            .get::<SgemmFn>(b"cublasSgemm_v2\0")
            .map_err(|e| first_line(&e.to_string()))?;
        let gemm_ex = *lib
            .get::<GemmExFn>(b"cublasGemmEx\0")
            .map_err(|e| first_line(&e.to_string()))?;
        Ok(Cublas {
            path: p.to_string_lossy().into_owned(),
            _lib: lib,
            create,
            destroy,
            sgemm,
            gemm_ex,
        })
    }
}

fn first_line(s: &str) -> String {
    crate::sanitize::clean_line(s.lines().next().unwrap_or(""), 200)
}

impl Cublas {
    /// A handle on the current context.
    pub fn create(&self) -> Result<Handle, GpuCallError> {
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: a plain out-parameter.
        check("cublasCreate", unsafe { (self.create)(&mut h) })?;
        Ok(h)
    }

    /// Releases a handle from [`Cublas::create`].
    ///
    /// # Safety
    /// `h` came from [`Cublas::create`] of this library and is not used again.
    pub unsafe fn destroy(&self, h: Handle) {
        // SAFETY: as the caller promises.
        let _ = unsafe { (self.destroy)(h) };
    }
}

#[cfg(test)]
#[path = "cublas_tests.rs"]
mod tests;
