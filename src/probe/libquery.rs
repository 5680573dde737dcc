//! Asks a CUDA library its version in a child process.
//!
//! Loading NVIDIA libraries into gpudoctor itself is unsafe in practice: cuDNN 9's
//! `libcudnn.so.9` calls `abort()` from `cudnnGetVersion` when `libcudnn_graph.so.9` is not
//! beside it (cuDNN 8 does the same without `libcudnn_ops_infer.so.8`; seen on the PyPI wheels
//! 9.1.0.70 and 8.9.7.29), and a broken driver can hang in `cuDriverGetVersion`. So gpudoctor
//! re-executes itself as `gpudoctor __probe-lib KIND PATH`, which loads one library, calls one
//! version function and prints one JSON line; the parent kills it at its deadline and turns a
//! crash into a finding.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::deadline;
use crate::sanitize;

/// Which library and which version call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibKind {
    /// libcudart: `cudaRuntimeGetVersion(int*)`.
    Cudart,
    /// libcudnn: `cudnnGetVersion()`.
    Cudnn,
    /// libcuda: `cuDriverGetVersion(int*)`.
    Driver,
    /// libcudnn: `cudnnCreate` then `cudnnDestroy` on the first visible GPU (the smoke tests).
    CudnnHandle,
}

impl LibKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LibKind::Cudart => "cudart",
            LibKind::Cudnn => "cudnn",
            LibKind::Driver => "cuda",
            LibKind::CudnnHandle => "cudnn-handle",
        }
    }
    pub fn parse(s: &str) -> Option<LibKind> {
        match s {
            "cudart" => Some(LibKind::Cudart),
            "cudnn" => Some(LibKind::Cudnn),
            "cuda" => Some(LibKind::Driver),
            "cudnn-handle" => Some(LibKind::CudnnHandle),
            _ => None,
        }
    }
}

/// The helper's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibAnswer {
    /// The file the loader actually mapped (dladdr of the symbol, resolved).
    pub path: Option<String>,
    /// The version value, when the call returned success.
    pub value: Option<i64>,
    /// The status code the call returned, when it returns one and it was not success.
    pub status: Option<i64>,
    /// Why loading or calling failed.
    pub error: Option<String>,
}

/// The child side: load `target`, call the version function, return the answer.
pub fn helper_answer(kind: LibKind, target: &str) -> LibAnswer {
    let mut ans = LibAnswer {
        path: None,
        value: None,
        status: None,
        error: None,
    };
    // SAFETY: loading a library runs its initialisers; this runs in a throwaway child process
    // precisely so that a library that crashes or aborts cannot take gpudoctor down.
    let lib = match unsafe { libloading::Library::new(target) } {
        Ok(l) => l,
        Err(e) => {
            ans.error = Some(error_chain(&e));
            return ans;
        }
    };
    match kind {
        LibKind::Cudart | LibKind::Driver => {
            let name: &[u8] = if kind == LibKind::Cudart {
                b"cudaRuntimeGetVersion\0"
            } else {
                b"cuDriverGetVersion\0"
            };
            // SAFETY: both symbols have the C signature `int f(int*)` in every CUDA release.
            let f: libloading::Symbol<unsafe extern "C" fn(*mut libc::c_int) -> libc::c_int> =
                match unsafe { lib.get(name) } {
                    Ok(f) => f,
                    Err(e) => {
                        ans.error = Some(error_chain(&e));
                        return ans;
                    }
                };
            ans.path = mapped_file(*f as *const libc::c_void);
            let mut v: libc::c_int = 0;
            // SAFETY: `v` is a valid out-pointer for the duration of the call.
            let rc = unsafe { f(&mut v) };
            if rc == 0 {
                ans.value = Some(i64::from(v));
            } else {
                ans.status = Some(i64::from(rc));
            }
        }
        LibKind::Cudnn => {
            // SAFETY: `size_t cudnnGetVersion(void)` in every cuDNN release.
            let f: libloading::Symbol<unsafe extern "C" fn() -> libc::size_t> =
                match unsafe { lib.get(b"cudnnGetVersion\0") } {
                    Ok(f) => f,
                    Err(e) => {
                        ans.error = Some(error_chain(&e));
                        return ans;
                    }
                };
            ans.path = mapped_file(*f as *const libc::c_void);
            // SAFETY: no arguments; may abort inside cuDNN, which only ends this child.
            let v = unsafe { f() };
            ans.value = i64::try_from(v).ok();
        }
        LibKind::CudnnHandle => cudnn_handle(&lib, &mut ans),
    }
    // Never dlclose NVIDIA libraries (their destructors are not safe to run early).
    std::mem::forget(lib);
    ans
}

/// Creates and destroys a cuDNN handle: value 1 when both succeed, else the status and
/// cuDNN's own description of it.
fn cudnn_handle(lib: &libloading::Library, ans: &mut LibAnswer) {
    type Create = unsafe extern "C" fn(*mut *mut libc::c_void) -> libc::c_int;
    type Destroy = unsafe extern "C" fn(*mut libc::c_void) -> libc::c_int;
    type Describe = unsafe extern "C" fn(libc::c_int) -> *const libc::c_char;
    // SAFETY: the symbols have these C signatures in every cuDNN from 7 to 9 (cudnn.h).
    let (create, destroy) = match unsafe {
        (
            lib.get::<Create>(b"cudnnCreate\0"),
            lib.get::<Destroy>(b"cudnnDestroy\0"),
        )
    } {
        (Ok(c), Ok(d)) => (c, d),
        (Err(e), _) | (_, Err(e)) => {
            ans.error = Some(error_chain(&e));
            return;
        }
    };
    ans.path = mapped_file(*create as *const libc::c_void);
    let mut handle: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: an out-parameter; the handle is destroyed below.
    let mut rc = unsafe { create(&mut handle) };
    if rc == 0 {
        // SAFETY: created above.
        rc = unsafe { destroy(handle) };
    }
    if rc == 0 {
        ans.value = Some(1);
        return;
    }
    ans.status = Some(i64::from(rc));
    // SAFETY: cudnnGetErrorString returns a static string for any status.
    if let Ok(describe) = unsafe { lib.get::<Describe>(b"cudnnGetErrorString\0") } {
        let p = unsafe { describe(rc) };
        if !p.is_null() {
            // SAFETY: a NUL-terminated static string from cuDNN.
            let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
            ans.error = Some(sanitize::clean_line(&text, 200));
        }
    }
}

/// libloading 0.9 prints only "dlopen failed"; the loader's own words are in the source chain.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(src) = cur {
        s.push_str(": ");
        s.push_str(&src.to_string());
        cur = src.source();
    }
    sanitize::clean_line(&s, 600)
}

#[cfg(unix)]
fn mapped_file(addr: *const libc::c_void) -> Option<String> {
    // SAFETY: dladdr only reads loader tables; `info` is a valid out-pointer.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::dladdr(addr, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let p = Path::new(std::ffi::OsStr::new(&*name.to_string_lossy())).to_path_buf();
    let resolved = std::fs::canonicalize(&p).unwrap_or(p);
    Some(resolved.to_string_lossy().into_owned())
}

/// The file of the loaded DLL that holds `addr` (GetModuleHandleExW by address, then
/// GetModuleFileNameW).
#[cfg(windows)]
fn mapped_file(addr: *const libc::c_void) -> Option<String> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::Foundation::HMODULE;
    use windows_sys::Win32::System::LibraryLoader::{
        GetModuleFileNameW, GetModuleHandleExW, GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
        GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
    };
    let mut module: HMODULE = std::ptr::null_mut();
    // SAFETY: `addr` lies in a module this process loaded and keeps loaded; `module` is a
    // valid out-pointer; no reference is taken (UNCHANGED_REFCOUNT).
    let ok = unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
            addr as *const u16,
            &mut module,
        )
    };
    if ok == 0 {
        return None;
    }
    let mut buf = vec![0u16; 32 * 1024];
    // SAFETY: the buffer is as long as we say.
    let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n == 0 || n >= buf.len() {
        return None;
    }
    let s = std::ffi::OsString::from_wide(buf.get(..n)?);
    Some(
        crate::probe::windows::plain_path(&s.to_string_lossy())
            .to_string_lossy()
            .into_owned(),
    )
}

#[cfg(not(any(unix, windows)))]
fn mapped_file(_addr: *const libc::c_void) -> Option<String> {
    None
}

/// The parent side: run `helper KIND TARGET` under `limit`.
pub fn query(
    helper: &Path,
    kind: LibKind,
    target: &str,
    limit: Duration,
) -> Result<LibAnswer, String> {
    query_with_env(helper, kind, target, limit, &[])
}

/// [`query`] with extra environment variables for the helper (CUDA_VISIBLE_DEVICES).
pub fn query_with_env(
    helper: &Path,
    kind: LibKind,
    target: &str,
    limit: Duration,
    env: &[(&str, &str)],
) -> Result<LibAnswer, String> {
    let mut cmd = Command::new(helper);
    cmd.arg("__probe-lib").arg(kind.as_str()).arg(target);
    if cfg!(windows) {
        // A DLL's own folder is not searched for what it loads later: cuDNN 9's cudnn64_9.dll
        // loads cudnn_graph64_9.dll by name when first called and, not finding it, fails fast
        // with 0xC0000409. PyTorch adds each nvidia\*\bin folder with os.add_dll_directory and
        // TensorFlow's guide puts cuDNN's on PATH; the helper does the same.
        if let Some(dir) = Path::new(target)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            let mut dirs = vec![dir.to_path_buf()];
            if let Some(p) = std::env::var_os("PATH") {
                dirs.extend(std::env::split_paths(&p));
            }
            if let Ok(joined) = std::env::join_paths(dirs) {
                cmd.env("PATH", joined);
            }
        }
    }
    cmd.envs(env.iter().copied());
    let out = deadline::run(cmd, limit, 64 * 1024).map_err(|e| {
        format!(
            "could not start the library helper {}: {e}",
            helper.display()
        )
    })?;
    if out.success() {
        let text = out.stdout_text();
        let line = text
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .unwrap_or("");
        return serde_json::from_str(line)
            .map_err(|e| format!("the library helper printed something unexpected: {e}"));
    }
    let mut msg = format!("loading {target} {}", out.describe(limit));
    let stderr = out.stderr_text();
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect();
    if !said.is_empty() {
        msg.push_str("; it said: ");
        msg.push_str(&sanitize::clean_line(&said.join(" / "), 400));
    }
    Err(msg)
}
