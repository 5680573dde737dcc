//! `--assume KEY=VALUE`: adds or overrides one fact of the snapshot ("what if"). With
//! `--no-probe` only assumed facts exist. Every key of design.md is handled here; a bad key or
//! value is an [`AssumeError`] (exit 2) that names it.

use crate::matrix::{valid_cc, Matrix};
use crate::snapshot::{
    Assumption, CudaRuntime, CudnnLibrary, Gpu, Host, KernelModule, LibCuda, NvmlInfo, OsRelease,
    Package, Probed, PythonEnv, SecureBoot, Snapshot, TensorflowBuild, TorchBuild,
};
use crate::version::{CudaVersion, DriverVersion, Pep440};

/// The keys, with an example each (for error messages and `--help`).
pub const KEYS: &[(&str, &str)] = &[
    ("driver", "535.104.05"),
    ("driver.cuda", "11.4"),
    ("gpu", "RTX 3070"),
    ("gpu.cc", "8.6"),
    ("cuda", "12.1"),
    ("cudnn", "8.9.7"),
    ("torch", "2.1.0+cu121"),
    ("tensorflow", "2.16.1"),
    ("jax", "0.4.30"),
    ("jaxlib", "0.4.30"),
    ("jax.cuda", "12"),
    ("os", "linux"),
    ("container", "true"),
    ("os.id", "rocky"),
    ("os.version", "9.4"),
    ("os.id_like", "rhel fedora"),
    ("pkg", "dnf"),
    ("secure_boot", "on"),
    ("driver.install", "runfile"),
    ("python.env", "uv"),
];

/// The package managers `pkg=` accepts, in the order the probe prefers them.
pub const PACKAGE_MANAGERS: &[&str] = &[
    "apt", "dnf", "yum", "zypper", "pacman", "apk", "winget", "choco",
];

/// The driver installation methods `driver.install=` accepts.
pub const DRIVER_INSTALL_METHODS: &[&str] =
    &["runfile", "distribution", "nvidia-repo", "precompiled"];

/// The Python environment kinds `python.env=` accepts.
pub const PYTHON_ENV_KINDS: &[&str] = &["uv", "venv", "conda", "poetry", "pixi", "system"];

#[derive(Debug, Clone, PartialEq)]
pub struct AssumeError(pub String);

impl std::fmt::Display for AssumeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Splits "KEY=VALUE" and checks the key.
pub fn parse(arg: &str) -> Result<(String, String), AssumeError> {
    let Some((k, v)) = arg.split_once('=') else {
        return Err(AssumeError(format!(
            "--assume {arg:?}: expected KEY=VALUE, e.g. --assume driver=535.104.05"
        )));
    };
    let k = k.trim().to_ascii_lowercase();
    let v = v.trim().to_string();
    if !KEYS.iter().any(|(key, _)| *key == k) {
        let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        return Err(AssumeError(format!(
            "--assume {arg:?}: unknown key {k:?}; the keys are {}",
            keys.join(", ")
        )));
    }
    if v.is_empty() {
        return Err(AssumeError(format!("--assume {k}=: the value is empty")));
    }
    Ok((k, v))
}

fn bad(key: &str, value: &str, want: &str) -> AssumeError {
    let example = KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, e)| *e)
        .unwrap_or("");
    // The value is the user's text: no terminal escapes echoed back.
    let value = crate::sanitize::clean_line(value, 80);
    AssumeError(format!(
        "--assume {key}={value}: {want} (for example --assume {key}={example})"
    ))
}

/// The environment assumed framework facts go into: the first one found, or a new one.
fn assumed_env(snap: &mut Snapshot) -> Result<&mut PythonEnv, AssumeError> {
    if !snap.python.is_found() {
        snap.python = Probed::found(Vec::new());
    }
    let envs = snap
        .python
        .get_mut()
        .ok_or_else(|| AssumeError("internal error: no Python environment list".to_string()))?;
    if envs.is_empty() {
        envs.push(PythonEnv {
            prefix: "(assumed)".to_string(),
            kind: "assumed".to_string(),
            origin: "--assume".to_string(),
            ..Default::default()
        });
    }
    envs.first_mut()
        .ok_or_else(|| AssumeError("internal error: no Python environment".to_string()))
}

/// An os-release ID or ID_LIKE word: os-release(5) allows only 0–9, a–z, ".", "_" and "-".
fn os_release_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// The os-release an assumption edits: the probed one, or a new one with the spec's default ID.
fn assumed_os(snap: &Snapshot) -> OsRelease {
    snap.os_release.get().cloned().unwrap_or_else(|| OsRelease {
        id: "linux".to_string(),
        ..Default::default()
    })
}

fn set_package(env: &mut PythonEnv, name: &str, version: &str) {
    env.packages.retain(|p| p.name != name);
    env.packages.push(Package {
        name: name.to_string(),
        version: version.to_string(),
        path: None,
    });
    env.packages.sort_by(|a, b| a.name.cmp(&b.name));
}

/// Applies one assumption.
pub fn apply(
    snap: &mut Snapshot,
    matrix: &Matrix,
    key: &str,
    value: &str,
) -> Result<(), AssumeError> {
    match key {
        "driver" => assume_driver(snap, matrix, key, value)?,
        "driver.cuda" => assume_driver_cuda(snap, key, value)?,
        "gpu" => assume_gpu(snap, matrix, value)?,
        "gpu.cc" => assume_gpu_cc(snap, key, value)?,
        "cuda" => assume_cuda(snap, key, value)?,
        "cudnn" => assume_cudnn(snap, key, value)?,
        "torch" => assume_torch(snap, key, value)?,
        "tensorflow" => assume_tensorflow(snap, key, value)?,
        "jax" | "jaxlib" => assume_jax_package(snap, key, value)?,
        "jax.cuda" => assume_jax_cuda(snap, key, value)?,
        "os" => assume_os(snap, key, value)?,
        "container" => assume_container(snap, key, value)?,
        "os.id" => assume_os_id(snap, key, value)?,
        "os.version" => assume_os_version(snap, key, value)?,
        "os.id_like" => assume_os_id_like(snap, key, value)?,
        "pkg" => assume_pkg(snap, key, value)?,
        "secure_boot" => assume_secure_boot(snap, key, value)?,
        "driver.install" => assume_driver_install(snap, key, value)?,
        "python.env" => assume_python_env(snap, key, value)?,
        other => {
            return Err(AssumeError(format!("--assume: unknown key {other:?}")));
        }
    }
    snap.assumed.push(Assumption {
        key: key.to_string(),
        value: value.to_string(),
    });
    Ok(())
}

/// `--assume driver`: the driver version in the kernel module's, NVML's and libcuda's facts,
/// with the CUDA it supports.
fn assume_driver(
    snap: &mut Snapshot,
    matrix: &Matrix,
    key: &str,
    value: &str,
) -> Result<(), AssumeError> {
    let dv = DriverVersion::parse(value)
        .ok_or_else(|| bad(key, value, "expected an NVIDIA driver version"))?;
    let v = dv.to_string();
    snap.driver.kernel_module = Probed::found(KernelModule {
        version: v.clone(),
        flavor: "unknown".to_string(),
        arch: None,
        line: "assumed".to_string(),
    });
    snap.driver.sys_module_version = Probed::found(v.clone());
    // The CUDA it supports: an assumed driver.cuda if given, else its branch's.
    let cuda = if snap.is_assumed("driver.cuda") {
        snap.driver.nvml.get().and_then(|n| n.cuda_driver_version)
    } else {
        matrix.driver_cuda(&dv).map(|c| c.to_api())
    };
    snap.driver.nvml = Probed::found(NvmlInfo {
        driver_version: Some(v.clone()),
        cuda_driver_version: cuda,
        ..Default::default()
    });
    snap.driver.libcuda = Probed::found(LibCuda {
        path: None,
        file_version: Some(v),
        cuda_driver_version: cuda,
        error: None,
    });
    Ok(())
}

/// `--assume driver.cuda`: the CUDA version the driver supports, in NVML's and libcuda's facts.
fn assume_driver_cuda(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let c = CudaVersion::parse(value)
        .ok_or_else(|| bad(key, value, "expected a CUDA version like 11.4 or 11040"))?;
    let api = Some(c.to_api());
    match snap.driver.nvml.get_mut() {
        Some(n) => n.cuda_driver_version = api,
        None => {
            snap.driver.nvml = Probed::found(NvmlInfo {
                cuda_driver_version: api,
                ..Default::default()
            })
        }
    }
    match snap.driver.libcuda.get_mut() {
        Some(l) => l.cuda_driver_version = api,
        None => {
            snap.driver.libcuda = Probed::found(LibCuda {
                cuda_driver_version: api,
                ..Default::default()
            })
        }
    }
    Ok(())
}

/// `--assume gpu`: a GPU model of the matrix's GPU table, as the only GPU.
fn assume_gpu(snap: &mut Snapshot, matrix: &Matrix, value: &str) -> Result<(), AssumeError> {
    let row = matrix.gpu(value).ok_or_else(|| {
        // Not bad(): its example (gpu=RTX 3070) would contradict the advice.
        AssumeError(format!(
            "--assume gpu={}: this GPU model is not in the matrix's GPU table (the `gpus:` list of compat-matrix/gpus.yaml); give its compute capability instead, for example --assume gpu.cc=8.6",
            crate::sanitize::clean_line(value, 80)
        ))
    })?;
    snap.gpus = Probed::found(vec![Gpu {
        index: 0,
        name: Probed::found(value.to_string()),
        compute_capability: Probed::found(row.cc.clone()),
        ..Default::default()
    }]);
    Ok(())
}

/// `--assume gpu.cc`: the compute capability of every GPU (or of one GPU, if none was found).
fn assume_gpu_cc(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    if !valid_cc(value) {
        return Err(bad(key, value, "expected a compute capability like 8.6"));
    }
    match snap.gpus.get_mut().filter(|g| !g.is_empty()) {
        Some(gpus) => {
            for g in gpus {
                g.compute_capability = Probed::found(value.to_string());
            }
        }
        None => {
            snap.gpus = Probed::found(vec![Gpu {
                index: 0,
                compute_capability: Probed::found(value.to_string()),
                ..Default::default()
            }])
        }
    }
    Ok(())
}

/// `--assume cuda`: the CUDA runtime, as the only one found.
fn assume_cuda(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let c = CudaVersion::parse(value)
        .ok_or_else(|| bad(key, value, "expected a CUDA version like 12.1"))?;
    snap.cuda.assumed_version = Some(c.to_string());
    snap.cuda.runtimes = Probed::found(vec![CudaRuntime {
        path: "(assumed)".to_string(),
        origins: vec!["--assume".to_string()],
        soname_major: Some(c.major),
        api_version: Probed::found(c.to_api()),
        full_version: Some(value.to_string()),
        on_search_path: true,
    }]);
    Ok(())
}

/// `--assume cudnn`: the cuDNN library, as the only one found.
fn assume_cudnn(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let parts: Vec<u32> = value
        .split('.')
        .map(|p| p.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad(key, value, "expected a cuDNN version like 8.9.7"))?;
    let (maj, min, patch) = match parts.as_slice() {
        [a] => (*a, 0, 0),
        [a, b] => (*a, *b, 0),
        // cuDNN's own versions have at most four parts (the wheel's 8.9.7.29).
        [a, b, c] | [a, b, c, _] => (*a, *b, *c),
        _ => return Err(bad(key, value, "expected a cuDNN version like 8.9.7")),
    };
    if maj == 0 || min > 99 || patch > 99 {
        return Err(bad(key, value, "expected a cuDNN version like 8.9.7"));
    }
    let raw = if maj >= 9 {
        u64::from(maj) * 10_000 + u64::from(min) * 100 + u64::from(patch)
    } else {
        u64::from(maj) * 1000 + u64::from(min) * 100 + u64::from(patch)
    };
    snap.cudnn = Probed::found(vec![CudnnLibrary {
        path: "(assumed)".to_string(),
        origins: vec!["--assume".to_string()],
        soname_major: Some(maj),
        version: Probed::found(format!("{maj}.{min}.{patch}")),
        raw_version: Some(raw),
        full_version: Some(value.to_string()),
        on_search_path: true,
    }]);
    Ok(())
}

/// `--assume torch`: a PyTorch build (version and local tag) in the assumed Python environment.
fn assume_torch(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let v = Pep440::parse(value).ok_or_else(|| {
        bad(
            key,
            value,
            "expected a PyTorch version like 2.1.0+cu121 or 2.3.0+cpu",
        )
    })?;
    // A CUDA build tag is cu + the version's digits (cu118, cu121, cu130); anything else
    // after "cu" would silently read as a CPU build.
    // Only the first segment: PyPI's own builds read 1.13.1+cu117.with.pypi.cudnn.
    let first = v.local.as_deref().and_then(|l| l.split('.').next());
    if let Some(tag) = first.and_then(|l| l.strip_prefix("cu")) {
        if !(tag.len() >= 2 && tag.bytes().all(|b| b.is_ascii_digit())) {
            return Err(bad(
                key,
                value,
                "the build tag after '+' must be cuNNN (cu121), cpu or rocmX.Y",
            ));
        }
    }
    let cuda = v.local_cuda().map(|c| c.to_string());
    let hip = v
        .local
        .as_deref()
        .and_then(|l| l.strip_prefix("rocm"))
        .map(str::to_string);
    let env = assumed_env(snap)?;
    env.torch = Some(TorchBuild {
        version: value.to_string(),
        cuda,
        hip,
        git_version: None,
    });
    let public = value.split('+').next().unwrap_or(value).to_string();
    set_package(env, "torch", &public);
    Ok(())
}

/// `--assume tensorflow`: a TensorFlow package and version in the assumed Python environment.
fn assume_tensorflow(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    // "1.14.0", or a package and version: "tensorflow-gpu==1.14.0".
    let (package, version) = match value.split_once("==") {
        Some((p, v)) if p.starts_with("tensorflow") || p.starts_with("tf-nightly") => {
            (p.trim(), v.trim())
        }
        _ => ("tensorflow", value),
    };
    Pep440::parse(version).ok_or_else(|| {
        bad(
            key,
            value,
            "expected a TensorFlow version like 2.16.1 or tensorflow-gpu==1.15.0",
        )
    })?;
    let env = assumed_env(snap)?;
    env.tensorflow = Some(TensorflowBuild {
        package: package.to_string(),
        version: version.to_string(),
        ..Default::default()
    });
    set_package(env, package, version);
    Ok(())
}

/// `--assume jax | jaxlib`: the package (jax brings jaxlib of the same version if it has none).
fn assume_jax_package(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    Pep440::parse(value).ok_or_else(|| bad(key, value, "expected a version like 0.4.30"))?;
    let env = assumed_env(snap)?;
    set_package(env, key, value);
    if key == "jax" && env.package("jaxlib").is_none() {
        set_package(env, "jaxlib", value);
    }
    Ok(())
}

/// `--assume jax.cuda`: the JAX CUDA plugin of a CUDA major, at jax's version.
fn assume_jax_cuda(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let major: u32 = value.trim_start_matches("cuda").parse().map_err(|_| {
        bad(
            key,
            value,
            "expected the CUDA major of the JAX plugin: 12 or 13",
        )
    })?;
    if !(11..=13).contains(&major) {
        return Err(bad(
            key,
            value,
            "expected the CUDA major of the JAX plugin: 12 or 13",
        ));
    }
    let env = assumed_env(snap)?;
    let ver = env
        .package("jax")
        .map(|p| p.version.clone())
        .unwrap_or_else(|| "unknown".to_string());
    env.packages.retain(|p| !p.name.starts_with("jax-cuda"));
    set_package(env, &format!("jax-cuda{major}-plugin"), &ver);
    set_package(env, &format!("jax-cuda{major}-pjrt"), &ver);
    Ok(())
}

/// `--assume os`: the operating system: linux, windows or wsl.
fn assume_os(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let os = value.to_ascii_lowercase();
    if !matches!(os.as_str(), "linux" | "windows" | "wsl") {
        return Err(bad(key, value, "expected linux, windows or wsl"));
    }
    let mut h = snap.host.get().cloned().unwrap_or_else(|| Host {
        arch: "x86_64".to_string(),
        ..Default::default()
    });
    h.wsl = os == "wsl";
    h.os = os;
    snap.host = Probed::found(h);
    Ok(())
}

/// `--assume container`: whether gpudoctor runs inside a container.
fn assume_container(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let on = match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => true,
        "false" | "no" | "0" => false,
        _ => return Err(bad(key, value, "expected true or false")),
    };
    let mut h = snap.host.get().cloned().unwrap_or_else(|| Host {
        os: "linux".to_string(),
        arch: "x86_64".to_string(),
        ..Default::default()
    });
    if on {
        h.container = Some(h.container.unwrap_or_else(|| "container".to_string()));
        h.container_markers = vec!["--assume container=true".to_string()];
    } else {
        h.container = None;
        h.container_markers.clear();
    }
    snap.host = Probed::found(h);
    Ok(())
}

/// `--assume os.id`: the os-release ID.
fn assume_os_id(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let id = value.to_ascii_lowercase();
    if !os_release_token(&id) {
        return Err(bad(
            key,
            value,
            "expected an os-release ID: lower-case letters, digits, '.', '_' or '-' (ubuntu, debian, rhel, rocky, almalinux, amzn, sles, fedora, arch, windows)",
        ));
    }
    let mut os = assumed_os(snap);
    os.id = id;
    snap.os_release = Probed::found(os);
    Ok(())
}

/// `--assume os.version`: the os-release VERSION_ID.
fn assume_os_version(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        || value.len() > 32
    {
        return Err(bad(
            key,
            value,
            "expected an os-release VERSION_ID like 22.04, 9.4 or 2023",
        ));
    }
    let mut os = assumed_os(snap);
    os.version_id = Some(value.to_string());
    snap.os_release = Probed::found(os);
    Ok(())
}

/// `--assume os.id_like`: the os-release ID_LIKE words.
fn assume_os_id_like(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let like: Vec<String> = value
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if like.is_empty() || !like.iter().all(|w| os_release_token(w)) {
        return Err(bad(
            key,
            value,
            "expected os-release ID_LIKE words separated by spaces, like \"rhel fedora\"",
        ));
    }
    let mut os = assumed_os(snap);
    os.id_like = like;
    snap.os_release = Probed::found(os);
    Ok(())
}

/// `--assume pkg`: the package managers on the host.
fn assume_pkg(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let mut list = Vec::new();
    for m in value.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let m = m.to_ascii_lowercase();
        if !PACKAGE_MANAGERS.contains(&m.as_str()) {
            return Err(bad(
                key,
                value,
                &format!(
                    "expected package managers separated by commas, from {}",
                    PACKAGE_MANAGERS.join(", ")
                ),
            ));
        }
        if !list.contains(&m) {
            list.push(m);
        }
    }
    if list.is_empty() {
        return Err(bad(key, value, "expected at least one package manager"));
    }
    snap.package_managers = Probed::found(list);
    Ok(())
}

/// `--assume secure_boot`: whether Secure Boot is on.
fn assume_secure_boot(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let enabled = match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "enabled" => true,
        "off" | "false" | "no" | "0" | "disabled" => false,
        _ => return Err(bad(key, value, "expected on or off")),
    };
    snap.secure_boot = Probed::found(SecureBoot {
        enabled,
        how: "assumed".to_string(),
    });
    Ok(())
}

/// `--assume driver.install`: how the driver was installed (and its branch, from the kernel
/// module if known).
fn assume_driver_install(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let method = value.to_ascii_lowercase();
    if !DRIVER_INSTALL_METHODS.contains(&method.as_str()) {
        return Err(bad(
            key,
            value,
            &format!("expected one of {}", DRIVER_INSTALL_METHODS.join(", ")),
        ));
    }
    let mut install = snap.driver.install.get().cloned().unwrap_or_default();
    install.method = method;
    install.evidence = vec!["--assume driver.install".to_string()];
    if let Some(v) = snap.driver.kernel_version() {
        if install.branch.is_none() {
            install.branch = v.split('.').next().map(str::to_string);
        }
    }
    snap.driver.install = Probed::found(install);
    Ok(())
}

/// `--assume python.env`: the kind of the assumed Python environment (and its tool: uv, conda,
/// poetry, pixi).
fn assume_python_env(snap: &mut Snapshot, key: &str, value: &str) -> Result<(), AssumeError> {
    let kind = value.to_ascii_lowercase();
    if !PYTHON_ENV_KINDS.contains(&kind.as_str()) {
        return Err(bad(
            key,
            value,
            &format!("expected one of {}", PYTHON_ENV_KINDS.join(", ")),
        ));
    }
    let env = assumed_env(snap)?;
    env.tool = match kind.as_str() {
        "uv" | "conda" | "poetry" | "pixi" => Some(kind.clone()),
        _ => None,
    };
    env.kind = kind;
    Ok(())
}
