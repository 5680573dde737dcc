//! Every CUDA runtime (`libcudart`), cuDNN (`libcudnn`) and `libcuda` file gpudoctor can reach:
//! LD_LIBRARY_PATH, the loader cache, CUDA toolkits (/usr/local/cuda*, CUDA_HOME, CUDA_PATH),
//! the conda environment and the pip `nvidia-*` wheels and torch's bundled copies in each
//! Python environment. Versions come from the library itself (in a child process, see
//! [`super::libquery`]), then the file name, version.json, cudnn_version.h or the pip package.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::deadline::{self, Deadline};
use super::libquery::{self, LibKind};
use crate::sanitize;
use crate::snapshot::{CudaRuntime, CudaToolkit, CudnnLibrary, LibraryFile, Probed, PythonEnv};
use crate::version::{decode_cudnn, CudaVersion};

/// Inputs of the library search.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub ld_library_path: Option<String>,
    pub cuda_home: Vec<String>,
    pub conda_prefix: Option<String>,
    pub path_var: Option<String>,
    /// Read the loader cache from here (None: skip it).
    pub ld_cache: Option<PathBuf>,
    /// Toolkit roots to look at, e.g. /usr/local/cuda and /usr/local/cuda-12.4 (globbed by
    /// the caller).
    pub toolkit_roots: Vec<PathBuf>,
    /// gpudoctor's own executable, used as the library helper.
    pub helper: Option<PathBuf>,
    /// Search as Windows does: the DLLs on PATH, the toolkits under Program Files and the
    /// `CUDA_PATH_V*` variables (in `cuda_home`), `bin` and `bin\x64` rather than `lib64`.
    pub windows: bool,
    /// `%ProgramFiles%` on Windows: `NVIDIA GPU Computing Toolkit\CUDA\v*` and `NVIDIA\CUDNN\v*`.
    pub program_files: Option<PathBuf>,
}

pub struct Found {
    pub runtimes: Vec<CudaRuntime>,
    pub cudnn: Vec<CudnnLibrary>,
    pub libcuda_files: Vec<LibraryFile>,
    pub toolkits: Vec<CudaToolkit>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Cudart,
    Cudnn,
    Cuda,
}

fn classify(name: &str) -> Option<Which> {
    let is_so = name.contains(".so") || name.ends_with(".dll");
    if !is_so {
        return None;
    }
    // libcudart.so.12, libcudart.so.11.0, libcudart-d0da41ae.so.11.0 (torch), cudart64_12.dll
    if name.starts_with("libcudart.so")
        || name.starts_with("libcudart-")
        || name.starts_with("cudart64_")
    {
        return Some(Which::Cudart);
    }
    // libcudnn.so.9, libcudnn.so.8.9.7, libcudnn-<hash>.so.8; not libcudnn_ops.so.9 etc.
    if name.starts_with("libcudnn.so")
        || name.starts_with("libcudnn-")
        || name.starts_with("cudnn64_")
    {
        return Some(Which::Cudnn);
    }
    if name.starts_with("libcuda.so") {
        return Some(Which::Cuda);
    }
    None
}

/// The major version a library's name carries: `.so.12` → 12, `.so.11.0` → 11; and Windows'
/// `cudart64_12.dll` → 12, `cudart64_110.dll` → 11 (every 11.x), `cudart64_101.dll` → 10,
/// `cudart64_90.dll` → 9, `cudnn64_8.dll` → 8: up to CUDA 10.2 the DLL name carried major and
/// minor, 11.x kept `_110`, 12 and later carry the major only.
pub fn soname_major(name: &str) -> Option<u32> {
    if let Some(stem) = name.strip_suffix(".dll") {
        let digits = stem.rsplit('_').next()?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = digits.parse().ok()?;
        return match digits.len() {
            1 => Some(n),
            2 if n >= 20 => Some(n / 10),
            2 => Some(n),
            3 => Some(n / 10),
            _ => None,
        };
    }
    let after = name.split(".so.").nth(1)?;
    after.split('.').next()?.parse().ok()
}

/// "12.4.127" from `libcudart.so.12.4.127`; None for a bare major.
pub fn file_full_version(name: &str) -> Option<String> {
    let after = name.split(".so.").nth(1)?;
    let parts: Vec<&str> = after.split('.').collect();
    if parts.len() >= 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        Some(after.to_string())
    } else {
        None
    }
}

struct Hit {
    which: Which,
    /// The name as found (may be a symlink).
    name: String,
    shown: PathBuf,
    origin: String,
    searchable: bool,
}

pub fn probe(src: &Sources, envs: &[PythonEnv], limit: Deadline) -> Found {
    let mut hits = search_path_hits(src);
    let toolkits = toolkits(src, limit);
    scan_toolkits(src, &toolkits, &mut hits);
    scan_installs(src, envs, &mut hits);
    let libcuda_files = libcuda_files(&hits);
    let (order, groups) = group_by_real_file(&hits);
    let answers = ask_versions(src, &order, &groups, limit);
    let mut runtimes = Vec::new();
    let mut cudnn = Vec::new();
    for (real, answer) in order.iter().zip(answers) {
        let Some(group) = groups.get(real) else {
            continue;
        };
        let Some(first) = group.first() else { continue };
        let found = FoundLibrary::new(real, group);
        match first.which {
            Which::Cudart => runtimes.push(cuda_runtime(found, &answer, envs, &toolkits)),
            Which::Cudnn => cudnn.push(cudnn_library(found, &answer, envs)),
            Which::Cuda => {}
        }
    }
    Found {
        runtimes,
        cudnn,
        libcuda_files,
        toolkits,
    }
}

/// The libraries on the search path: LD_LIBRARY_PATH (PATH on Windows), then ld.so.cache.
fn search_path_hits(src: &Sources) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut dirs: Vec<(PathBuf, String, bool)> = Vec::new();
    if let Some(ld) = &src.ld_library_path {
        for d in std::env::split_paths(ld) {
            if !d.as_os_str().is_empty() {
                dirs.push((d, "LD_LIBRARY_PATH".to_string(), true));
            }
        }
    }
    if src.windows {
        // Windows finds DLLs on PATH (after the program's own folder and System32).
        if let Some(path) = &src.path_var {
            for d in std::env::split_paths(path) {
                if !d.as_os_str().is_empty() {
                    dirs.push((d, "PATH".to_string(), true));
                }
            }
        }
    }
    for d in &dirs {
        scan_dir(&d.0, &d.1, d.2, &mut hits);
    }
    if let Some(cache) = &src.ld_cache {
        if let Ok(data) = fs::read(cache) {
            for (name, path) in super::ldcache::parse(&data) {
                if let Some(w) = classify(&name) {
                    hits.push(Hit {
                        which: w,
                        name: name.clone(),
                        shown: PathBuf::from(&path),
                        origin: "ld.so.cache".to_string(),
                        searchable: true,
                    });
                }
            }
        }
    }
    hits
}

/// The libraries of each toolkit (and its stubs), which programs find only if told to.
fn scan_toolkits(src: &Sources, toolkits: &[CudaToolkit], hits: &mut Vec<Hit>) {
    for t in toolkits {
        let root = Path::new(&t.root);
        let mut lib_dirs = if src.windows {
            // CUDA 13 moved the DLLs to bin\x64.
            vec![root.join("bin"), root.join("bin").join("x64")]
        } else {
            vec![root.join("lib64"), root.join("lib")]
        };
        if let Ok(rd) = fs::read_dir(root.join("targets")) {
            for e in rd.flatten() {
                lib_dirs.push(e.path().join("lib"));
            }
        }
        for d in lib_dirs {
            scan_dir(&d, &format!("toolkit {}", t.root), false, hits);
            scan_dir(
                &d.join("stubs"),
                &format!("toolkit {} stubs", t.root),
                false,
                hits,
            );
        }
    }
}

/// The libraries that conda, cuDNN's Windows installer, pip's nvidia-* wheels and torch bring.
fn scan_installs(src: &Sources, envs: &[PythonEnv], hits: &mut Vec<Hit>) {
    if let Some(c) = &src.conda_prefix {
        scan_dir(&Path::new(c).join("lib"), "conda", false, hits);
        if src.windows {
            scan_dir(
                &Path::new(c).join("Library").join("bin"),
                "conda",
                false,
                hits,
            );
        }
    }
    if src.windows {
        for d in cudnn_install_dirs(src.program_files.as_deref()) {
            let origin = format!("cuDNN {}", d.display());
            scan_dir(&d, &origin, false, hits);
        }
    }
    for env in envs {
        for sp in &env.site_packages {
            let nv = Path::new(sp).join("nvidia");
            if let Ok(rd) = fs::read_dir(&nv) {
                let mut subs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
                subs.sort();
                for sub in subs {
                    // Linux wheels keep their libraries in lib/, Windows wheels in bin/.
                    for d in ["lib", "bin"] {
                        scan_dir(&sub.join(d), &format!("pip {}", env.prefix), false, hits);
                    }
                }
            }
            scan_dir(
                &Path::new(sp).join("torch/lib"),
                &format!("torch {}", env.prefix),
                false,
                hits,
            );
        }
    }
}

/// libcuda files in search order, for stub detection.
fn libcuda_files(hits: &[Hit]) -> Vec<LibraryFile> {
    hits.iter()
        .filter(|h| h.which == Which::Cuda && (h.searchable || h.origin.ends_with("stubs")))
        .map(|h| LibraryFile {
            path: h.shown.to_string_lossy().into_owned(),
            origin: h.origin.clone(),
            stub: h.shown.components().any(|c| c.as_os_str() == "stubs"),
        })
        .collect()
}

/// The hits (libcuda aside) grouped by the real file, in the order first found.
fn group_by_real_file(hits: &[Hit]) -> (Vec<PathBuf>, BTreeMap<PathBuf, Vec<&Hit>>) {
    let mut groups: BTreeMap<PathBuf, Vec<&Hit>> = BTreeMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    for h in hits.iter().filter(|h| h.which != Which::Cuda) {
        let real = super::windows::canonical(&h.shown).unwrap_or_else(|_| h.shown.clone());
        if !groups.contains_key(&real) {
            order.push(real.clone());
        }
        groups.entry(real).or_default().push(h);
    }
    (order, groups)
}

/// Asks each library its version, in parallel, each in its own child process.
fn ask_versions(
    src: &Sources,
    order: &[PathBuf],
    groups: &BTreeMap<PathBuf, Vec<&Hit>>,
    limit: Deadline,
) -> Vec<Result<libquery::LibAnswer, String>> {
    let pending: Vec<_> = order
        .iter()
        .map(|real| {
            let which = groups.get(real).and_then(|g| g.first()).map(|h| h.which);
            let helper = src.helper.clone();
            let target = real.to_string_lossy().into_owned();
            let per_call = limit.min(Duration::from_secs(5)).remaining();
            deadline::spawn("library-version", move || {
                let kind = match which {
                    Some(Which::Cudnn) => LibKind::Cudnn,
                    _ => LibKind::Cudart,
                };
                match helper {
                    Some(h) => libquery::query(&h, kind, &target, per_call),
                    None => Err("no helper executable to load libraries with".to_string()),
                }
            })
        })
        .collect();
    pending
        .into_iter()
        .map(|p| match p.wait(limit) {
            (deadline::Outcome::Done(r), _) => r,
            (deadline::Outcome::TimedOut, _) => Err("timed out".to_string()),
            (deadline::Outcome::Panicked(m), _) => Err(m),
        })
        .collect()
}

/// What every name of one real library file says: where it was found, its soname major and the
/// version in a file name.
struct FoundLibrary<'a> {
    real: &'a Path,
    path: String,
    origins: Vec<String>,
    on_search_path: bool,
    major: Option<u32>,
    file_version: Option<String>,
}

impl<'a> FoundLibrary<'a> {
    fn new(real: &'a Path, group: &[&Hit]) -> Self {
        let mut origins: Vec<String> = Vec::new();
        for h in group {
            if !origins.contains(&h.origin) {
                origins.push(h.origin.clone());
            }
        }
        let on_search_path = group.iter().any(|h| h.searchable);
        let names: Vec<String> = group
            .iter()
            .map(|h| h.name.clone())
            .chain(real.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        FoundLibrary {
            real,
            path: real.to_string_lossy().into_owned(),
            origins,
            on_search_path,
            major: names.iter().find_map(|n| soname_major(n)),
            file_version: names.iter().find_map(|n| file_full_version(n)),
        }
    }
}

/// A libcudart with the version it reported and its full version from the file name, a wheel,
/// a toolkit or the DLL.
fn cuda_runtime(
    f: FoundLibrary,
    answer: &Result<libquery::LibAnswer, String>,
    envs: &[PythonEnv],
    toolkits: &[CudaToolkit],
) -> CudaRuntime {
    let api_version = match answer {
        Ok(a) => match (a.value, &a.error, a.status) {
            (Some(v), _, _) => Probed::found(v as i32),
            (None, Some(e), _) => Probed::failed(e.clone()),
            (None, None, Some(s)) => Probed::failed(format!("cudaRuntimeGetVersion returned {s}")),
            _ => Probed::failed("no answer"),
        },
        Err(e) => Probed::failed(e.clone()),
    };
    let full_version = f
        .file_version
        .or_else(|| pip_version(f.real, "cuda-runtime", f.major, envs))
        .or_else(|| toolkit_component(f.real, toolkits))
        .or_else(|| dll_cudart_version(f.real));
    CudaRuntime {
        path: f.path,
        origins: f.origins,
        soname_major: f.major,
        api_version,
        full_version,
        on_search_path: f.on_search_path,
    }
}

/// A libcudnn with the version it reported and its full version from its header, the file
/// name, a wheel or the DLL.
fn cudnn_library(
    f: FoundLibrary,
    answer: &Result<libquery::LibAnswer, String>,
    envs: &[PythonEnv],
) -> CudnnLibrary {
    let (version, raw) = match answer {
        Ok(a) => match (a.value, &a.error) {
            (Some(v), _) if v > 0 => match decode_cudnn(v as u64) {
                Some(s) => (Probed::found(s), Some(v as u64)),
                None => (
                    Probed::failed(format!("cudnnGetVersion returned {v}")),
                    Some(v as u64),
                ),
            },
            (_, Some(e)) => (Probed::failed(e.clone()), None),
            _ => (Probed::failed("cudnnGetVersion gave no version"), None),
        },
        Err(e) => (Probed::failed(e.clone()), None),
    };
    let full_version = cudnn_header_version(f.real)
        .or(f.file_version)
        .or_else(|| pip_version(f.real, "cudnn", f.major, envs))
        .or_else(|| dll_cudnn_version(f.real));
    CudnnLibrary {
        path: f.path,
        origins: f.origins,
        soname_major: f.major,
        version,
        raw_version: raw,
        full_version,
        on_search_path: f.on_search_path,
    }
}

/// cuDNN's Windows installer puts its DLLs in `%ProgramFiles%\NVIDIA\CUDNN\v9.x\bin\<CUDA
/// major.minor>\` (cuDNN 9); an unpacked cuDNN 8 archive has them in `…\v8.x\bin\`.
fn cudnn_install_dirs(program_files: Option<&Path>) -> Vec<PathBuf> {
    let Some(pf) = program_files else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for v in super::windows::subdirs(&pf.join("NVIDIA").join("CUDNN")) {
        let bin = v.join("bin");
        out.extend(super::windows::subdirs(&bin));
        out.push(bin);
    }
    out
}

/// `%ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v*`, where the CUDA installer puts each
/// toolkit (and sets `CUDA_PATH_V<major>_<minor>` to it).
pub fn windows_toolkit_roots(program_files: Option<&Path>) -> Vec<PathBuf> {
    program_files
        .map(|pf| super::windows::subdirs(&pf.join("NVIDIA GPU Computing Toolkit").join("CUDA")))
        .unwrap_or_default()
}

/// A Windows cudart DLL's version resource ends with CUDART_VERSION (cudart64_12.dll of CUDA
/// 12.9: 6.14.11.12090): "12.9".
fn dll_cudart_version(real: &Path) -> Option<String> {
    let v = super::pe::file_version(real)?;
    let last = *v.file.last()?;
    (last >= 1000).then(|| format!("{}.{}", last / 1000, (last % 1000) / 10))
}

/// A Windows cuDNN DLL's version resource is the cuDNN version (cudnn64_9.dll: 9.1.0.70).
fn dll_cudnn_version(real: &Path) -> Option<String> {
    let v = super::pe::file_version(real)?;
    let [a, b, c, _] = v.file;
    (a > 0).then(|| format!("{a}.{b}.{c}"))
}

fn scan_dir(dir: &Path, origin: &str, searchable: bool, hits: &mut Vec<Hit>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut names: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        if let Some(w) = classify(&name) {
            hits.push(Hit {
                which: w,
                shown: dir.join(&name),
                name: sanitize::clean_line(&name, 120),
                origin: origin.to_string(),
                searchable,
            });
        }
    }
}

/// The version of the pip package that owns a library under site-packages/nvidia/…: the
/// nvidia-* package named for it whose version has the library's major (libcudart.so.12 comes
/// from nvidia-cuda-runtime-cu12 12.x, libcudart.so.13 from nvidia-cuda-runtime 13.x).
fn pip_version(
    real: &Path,
    needle: &str,
    major: Option<u32>,
    envs: &[PythonEnv],
) -> Option<String> {
    let s = real.to_string_lossy();
    let major = major?;
    // `real` has its links resolved; a site-packages reached through a link (a venv that is a
    // symlink, as CI caches and shared clusters make them) is compared resolved too.
    let inside = |sp: &str| {
        s.starts_with(sp)
            || super::windows::canonical(Path::new(sp)).is_ok_and(|c| real.starts_with(c))
    };
    let env = envs
        .iter()
        .find(|e| e.site_packages.iter().any(|sp| inside(sp)))?;
    env.packages
        .iter()
        .find(|p| {
            let pkg_major = p
                .version
                .split('.')
                .next()
                .and_then(|m| m.parse::<u32>().ok());
            p.name.starts_with("nvidia-") && p.name.contains(needle) && pkg_major == Some(major)
        })
        .map(|p| p.version.clone())
}

/// The cudart version a toolkit's version.json names, for a library inside that toolkit.
fn toolkit_component(real: &Path, toolkits: &[CudaToolkit]) -> Option<String> {
    let s = real.to_string_lossy();
    for t in toolkits {
        let root = super::windows::canonical(Path::new(&t.root))
            .unwrap_or_else(|_| PathBuf::from(&t.root));
        if s.starts_with(&*root.to_string_lossy()) {
            let text = fs::read_to_string(root.join("version.json")).ok()?;
            return parse_version_json(&text, "cuda_cudart");
        }
    }
    None
}

/// `cudnn_version.h` (or `_v8.h`/`_v9.h`) next to a cuDNN library: ../include, or the system
/// include directories for a system library.
fn cudnn_header_version(real: &Path) -> Option<String> {
    let lib_dir = real.parent()?;
    let mut candidates = vec![];
    if let Some(up) = lib_dir.parent() {
        candidates.push(up.join("include"));
    }
    if real.starts_with("/usr/lib") || real.starts_with("/lib") {
        candidates.push(PathBuf::from("/usr/include"));
        candidates.push(PathBuf::from("/usr/include/x86_64-linux-gnu"));
        candidates.push(PathBuf::from("/usr/include/aarch64-linux-gnu"));
    }
    for dir in candidates {
        for f in [
            "cudnn_version.h",
            "cudnn_version_v9.h",
            "cudnn_version_v8.h",
            "cudnn.h",
        ] {
            if let Ok(t) = fs::read_to_string(dir.join(f)) {
                if let Some(v) = parse_cudnn_header(&t) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// `#define CUDNN_MAJOR 9` / `CUDNN_MINOR` / `CUDNN_PATCHLEVEL` → "9.1.0".
pub fn parse_cudnn_header(text: &str) -> Option<String> {
    let get = |k: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(k))
                .then(|| w.next().and_then(|v| v.parse::<u32>().ok()))
                .flatten()
        })
    };
    Some(format!(
        "{}.{}.{}",
        get("CUDNN_MAJOR")?,
        get("CUDNN_MINOR")?,
        get("CUDNN_PATCHLEVEL")?
    ))
}

/// A component's version from a toolkit's version.json ("cuda" for the toolkit itself).
pub fn parse_version_json(text: &str, component: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let s = v.get(component)?.get("version")?.as_str()?;
    Some(sanitize::clean_line(s, 40))
}

/// "Cuda compilation tools, release 12.1, V12.1.105" → "12.1.105".
pub fn parse_nvcc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release"))?;
    if let Some(v) = line.split(", V").nth(1) {
        let v = v.trim();
        if !v.is_empty() {
            return Some(sanitize::clean_line(v, 40));
        }
    }
    let rel = line.split("release ").nth(1)?.split(',').next()?.trim();
    CudaVersion::parse(rel).map(|c| c.to_string())
}

fn toolkits(src: &Sources, limit: Deadline) -> Vec<CudaToolkit> {
    let mut roots: Vec<PathBuf> = src.toolkit_roots.clone();
    if src.windows {
        roots.extend(windows_toolkit_roots(src.program_files.as_deref()));
    }
    roots.extend(src.cuda_home.iter().map(PathBuf::from));
    if let Some(path) = &src.path_var {
        if let Some(nvcc) = super::python::which(path, "nvcc") {
            if let Some(root) = super::windows::canonical(&nvcc)
                .ok()
                .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
            {
                roots.push(root);
            }
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for r in roots {
        let Ok(real) = super::windows::canonical(&r) else {
            continue;
        };
        if !real.is_dir() || seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let version = fs::read_to_string(real.join("version.json"))
            .ok()
            .and_then(|t| parse_version_json(&t, "cuda"))
            .or_else(|| {
                fs::read_to_string(real.join("version.txt"))
                    .ok()
                    .and_then(|t| {
                        t.split("CUDA Version")
                            .nth(1)
                            .map(|v| sanitize::clean_line(v.trim(), 40))
                    })
            });
        let nvcc_path = real
            .join("bin")
            .join(if src.windows { "nvcc.exe" } else { "nvcc" });
        let nvcc = if nvcc_path.is_file() {
            let mut cmd = std::process::Command::new(&nvcc_path);
            cmd.arg("--version");
            let lim = limit.min(Duration::from_secs(5)).remaining();
            match deadline::run(cmd, lim, 16 * 1024) {
                Ok(o) if o.success() => match parse_nvcc_version(&o.stdout_text()) {
                    Some(v) => Probed::found(v),
                    None => Probed::failed("nvcc --version printed no release line"),
                },
                Ok(o) => Probed::failed(format!("nvcc --version {}", o.describe(lim))),
                Err(e) => Probed::failed(format!("could not run nvcc: {e}")),
            }
        } else {
            Probed::absent("no bin/nvcc in this toolkit")
        };
        let libs = if src.windows { "bin" } else { "lib64" };
        if version.is_none() && !nvcc.is_found() && !real.join(libs).is_dir() {
            continue;
        }
        // A toolkit put together from component packages (seen on the H100 image: a
        // /usr/local/cuda-13.0 whose version.json has no "cuda" entry) still names its compiler
        // and runtime: their version is the toolkit's.
        let version = version.or_else(|| nvcc.get().cloned()).or_else(|| {
            let text = fs::read_to_string(real.join("version.json")).ok()?;
            parse_version_json(&text, "cuda_nvcc")
                .or_else(|| parse_version_json(&text, "cuda_cudart"))
        });
        out.push(CudaToolkit {
            root: real.to_string_lossy().into_owned(),
            version,
            nvcc,
        });
    }
    out
}

#[cfg(test)]
#[path = "cudalibs_tests.rs"]
mod tests;
