//! Python environments and the frameworks installed in them, read from the file system without
//! importing anything: the environment gpudoctor itself is installed in (`pip install gpudoctor`),
//! the interpreters on PATH, VIRTUAL_ENV, CONDA_PREFIX and `--python`; their
//! site-packages; the dist-info of torch, tensorflow, jax, cupy and the nvidia-* wheels;
//! `torch/version.py` and TensorFlow's `build_info.py`. `--deep` also runs one embedded script per
//! environment that imports the frameworks and prints tagged JSON (the uv interpreter-probe model).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::deadline::{self, Deadline};
use crate::sanitize;
use crate::snapshot::{Package, Probed, PythonEnv, TensorflowBuild, TorchBuild};
use crate::version::normalize_dist_name;

/// Distributions recorded from each site-packages (normalised-name prefixes).
pub const INTERESTING: &[&str] = &[
    "torch",
    "tensorflow",
    "tf-nightly",
    "tf-keras",
    "jax",
    "jaxlib",
    "cupy",
    "nvidia-",
    "triton",
    "onnxruntime",
    "tensorrt",
    "paddlepaddle",
];

/// Where to look for environments.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--python PATH` values.
    pub given: Vec<PathBuf>,
    /// The running gpudoctor (`std::env::current_exe`): when it sits in a venv's or conda
    /// environment's `bin/` (`Scripts\` on Windows), that environment comes first after
    /// `--python` ([`own_environment`]).
    pub own_exe: Option<PathBuf>,
    pub path_var: Option<String>,
    pub virtual_env: Option<String>,
    pub conda_prefix: Option<String>,
    pub pyenv_root: Option<String>,
    pub pyenv_version: Option<String>,
    pub home: Option<String>,
    /// Look as on Windows: `python.exe` through PATHEXT, not the Microsoft Store's
    /// `WindowsApps` stubs, `<prefix>\Lib\site-packages`, the python.org and conda install
    /// folders below.
    pub windows: bool,
    pub pathext: Option<String>,
    /// `%LOCALAPPDATA%`: `Programs\Python\Python3*` (python.org's per-user installs).
    pub local_app_data: Option<String>,
    /// `%APPDATA%`: `Python\Python3XY\site-packages` (the user site).
    pub app_data: Option<String>,
    /// `%USERPROFILE%`: `miniconda3`, `anaconda3`, `miniforge3` and their `envs`.
    pub user_profile: Option<String>,
    /// `%ProgramFiles%`: `Python3*` (all-users installs).
    pub program_files: Option<String>,
}

/// Finds the environments, scans their site-packages, and (with `deep`) runs the import probe,
/// ending by that deadline.
pub fn probe(src: &Sources, deep: Option<Deadline>) -> Vec<PythonEnv> {
    let mut envs: Vec<PythonEnv> = Vec::new();
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut add = |env: Option<PythonEnv>, envs: &mut Vec<PythonEnv>| {
        if let Some(e) = env {
            let key = super::windows::canonical(Path::new(&e.prefix))
                .unwrap_or_else(|_| PathBuf::from(&e.prefix));
            if seen.insert(key) {
                envs.push(e);
            }
        }
    };
    for g in &src.given {
        let env = if g.is_dir() {
            from_prefix(g, "given", "--python", None)
        } else {
            from_interpreter(g, "--python", src)
        };
        let env = env.or_else(|| {
            Some(PythonEnv {
                interpreter: Some(g.to_string_lossy().into_owned()),
                prefix: g.to_string_lossy().into_owned(),
                kind: "given".into(),
                origin: "--python (no site-packages found)".into(),
                ..Default::default()
            })
        });
        add(env, &mut envs);
    }
    if let Some(exe) = &src.own_exe {
        add(own_environment(exe), &mut envs);
    }
    if let Some(v) = &src.virtual_env {
        add(
            from_prefix(Path::new(v), "venv", "VIRTUAL_ENV", None),
            &mut envs,
        );
    }
    if let Some(c) = &src.conda_prefix {
        add(
            from_prefix(Path::new(c), "conda", "CONDA_PREFIX", None),
            &mut envs,
        );
    }
    if let Some(path) = &src.path_var {
        for name in ["python3", "python"] {
            let found = if src.windows {
                which_windows(path, name, src.pathext.as_deref())
            } else {
                which(path, name)
            };
            if let Some(exe) = found {
                add(
                    from_interpreter(&exe, &format!("PATH {name}"), src),
                    &mut envs,
                );
            }
        }
    }
    if src.windows {
        let registered = super::windows::registry::pep514_interpreters();
        for (exe, origin) in windows_installs(src).into_iter().chain(registered) {
            let origin = sanitize::clean_line(&origin, 200);
            if exe.is_file() {
                add(from_interpreter(&exe, &origin, src), &mut envs);
            }
        }
    }
    for e in envs.iter_mut() {
        classify(e);
        scan(e);
    }
    if let Some(until) = deep {
        let running = spawn_deep(&envs, until);
        join_deep(&mut envs, running);
    }
    envs
}

/// The import probes of `--deep`, running (one thread per environment).
pub type DeepRuns = Vec<std::thread::JoinHandle<Option<Probed<serde_json::Value>>>>;

/// Starts the import probe in every environment, each given the time left before `until`, so
/// that other probes can run meanwhile.
pub fn spawn_deep(envs: &[PythonEnv], until: Deadline) -> DeepRuns {
    envs.iter()
        .map(|e| {
            let exe = e.interpreter.clone();
            std::thread::spawn(move || exe.map(|x| deep_probe(Path::new(&x), until.remaining())))
        })
        .collect()
}

/// Waits for the import probes [`spawn_deep`] started and records their answers.
pub fn join_deep(envs: &mut [PythonEnv], running: DeepRuns) {
    for (e, h) in envs.iter_mut().zip(running) {
        e.deep = match h.join() {
            Ok(Some(r)) => Some(r),
            Ok(None) => Some(Probed::absent("no interpreter known for this environment")),
            Err(_) => Some(Probed::failed("the deep probe thread panicked")),
        };
    }
}

/// The first executable called `name` on a PATH string.
pub fn which(path: &str, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// PATHEXT's extensions, lowercased (`.COM;.EXE;.BAT;.CMD` when it is not set).
pub fn pathext_list(pathext: Option<&str>) -> Vec<String> {
    pathext
        .unwrap_or(".COM;.EXE;.BAT;.CMD")
        .split(';')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .collect()
}

/// The first `name` on a Windows PATH with one of PATHEXT's extensions (`python` →
/// `python.exe`), passing over the Microsoft Store's `WindowsApps` folder: its `python.exe` is
/// an alias that opens the Store instead of running Python.
pub fn which_windows(path: &str, name: &str, pathext: Option<&str>) -> Option<PathBuf> {
    let exts = pathext_list(pathext);
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty() && !is_windows_apps(d))
        .find_map(|d| {
            exts.iter()
                .map(|e| d.join(format!("{name}{e}")))
                .find(|p| p.is_file())
        })
}

/// True for `…\Microsoft\WindowsApps`, the folder of the Store's app-execution aliases.
fn is_windows_apps(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("WindowsApps"))
}

/// The interpreters Windows installers put in known places: python.org's per-user
/// (`%LOCALAPPDATA%\Programs\Python\Python3XY`) and all-users (`%ProgramFiles%\Python3XY`)
/// installs, and Miniconda, Anaconda, Miniforge and Mambaforge in the user's folder with each of
/// their `envs`.
pub fn windows_installs(src: &Sources) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let pythons = |dir: PathBuf, origin: &str, out: &mut Vec<(PathBuf, String)>| {
        for d in super::windows::subdirs(&dir) {
            let starts = d.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .to_ascii_lowercase()
                    .starts_with("python3")
            });
            if starts && d.join("python.exe").is_file() {
                out.push((d.join("python.exe"), origin.to_string()));
            }
        }
    };
    if let Some(l) = &src.local_app_data {
        pythons(
            Path::new(l).join("Programs").join("Python"),
            "%LOCALAPPDATA%\\Programs\\Python",
            &mut out,
        );
    }
    if let Some(pf) = &src.program_files {
        pythons(PathBuf::from(pf), "%ProgramFiles%", &mut out);
    }
    if let Some(home) = &src.user_profile {
        for conda in ["miniconda3", "anaconda3", "miniforge3", "mambaforge"] {
            let base = Path::new(home).join(conda);
            if base.join("python.exe").is_file() {
                out.push((base.join("python.exe"), format!("%USERPROFILE%\\{conda}")));
            }
            for env in super::windows::subdirs(&base.join("envs")) {
                if env.join("python.exe").is_file() {
                    out.push((
                        env.join("python.exe"),
                        format!("%USERPROFILE%\\{conda}\\envs"),
                    ));
                }
            }
        }
    }
    out
}

/// `origin` of the environment gpudoctor runs from.
pub const OWN_ORIGIN: &str = "gpudoctor installed here";

/// The environment the running binary was installed into: `pip install gpudoctor` (a wheel's
/// scripts) puts it in `<prefix>/bin/` of a venv (`pyvenv.cfg` in the prefix) or of a conda
/// environment (`conda-meta/` in the prefix), `<prefix>\Scripts\` on Windows. So `gpudoctor check`
/// run from a project's venv answers for that project first, whether or not the venv is
/// activated. None for a binary elsewhere (`cargo install`, a release tarball, /usr/local/bin)
/// and for an isolated tool environment that holds only gpudoctor ([`is_tool_environment`]).
pub fn own_environment(exe: &Path) -> Option<PythonEnv> {
    let bin = exe.parent()?;
    let dir = bin.file_name()?.to_string_lossy().to_ascii_lowercase();
    if dir != "bin" && dir != "scripts" {
        return None;
    }
    let prefix = bin.parent()?;
    let kind = if prefix.join("pyvenv.cfg").is_file() {
        "venv"
    } else if prefix.join("conda-meta").is_dir() {
        "conda"
    } else {
        return None;
    };
    if is_tool_environment(prefix) {
        return None;
    }
    from_prefix(prefix, kind, OWN_ORIGIN, None)
}

/// An environment a tool installer made for gpudoctor alone, whose packages say nothing about
/// the user's projects: `uv tool install` (`uv-receipt.toml` in the prefix), pipx
/// (`pipx_metadata.json`), and `uvx`'s cached environments (under uv's cache, `archive-v0/`).
pub fn is_tool_environment(prefix: &Path) -> bool {
    prefix.join("uv-receipt.toml").is_file()
        || prefix.join("pipx_metadata.json").is_file()
        || prefix.components().any(|c| c.as_os_str() == "archive-v0")
}

/// An environment from an interpreter path, without running it.
fn from_interpreter(exe: &Path, origin: &str, src: &Sources) -> Option<PythonEnv> {
    // A venv: bin/python is a symlink, and pyvenv.cfg sits one level above bin/ (Scripts\ on
    // Windows).
    let bin = exe.parent()?;
    let top = bin.parent()?;
    if top.join("pyvenv.cfg").is_file() {
        return from_prefix(top, "venv", origin, Some(exe));
    }
    // Windows: python.exe sits in the prefix itself, beside Lib\site-packages (python.org,
    // conda and its envs alike).
    if bin.join("Lib").join("site-packages").is_dir() {
        let kind = if bin.join("conda-meta").is_dir() {
            "conda"
        } else {
            "system"
        };
        let mut env = from_prefix(bin, kind, origin, Some(exe))?;
        // The user site: %APPDATA%\Python\Python3XY\site-packages.
        if let (Some(app), Some(ver)) = (&src.app_data, env.python_version.clone()) {
            let user = Path::new(app)
                .join("Python")
                .join(format!("Python{}", ver.replace('.', "")))
                .join("site-packages");
            if user.is_dir() {
                env.site_packages.push(user.to_string_lossy().into_owned());
            }
        }
        return Some(env);
    }
    // A pyenv shim is a shell script; the selected version lives under $PYENV_ROOT/versions.
    if bin.file_name().is_some_and(|n| n == "shims") {
        let root = src
            .pyenv_root
            .clone()
            .map(PathBuf::from)
            .unwrap_or_else(|| top.to_path_buf());
        let version = src
            .pyenv_version
            .clone()
            .or_else(|| fs::read_to_string(root.join("version")).ok())
            .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
            .filter(|v| !v.is_empty() && v != "system")?;
        let prefix = root.join("versions").join(&version);
        let real = prefix.join("bin").join(exe.file_name()?);
        return from_prefix(&prefix, "pyenv", origin, Some(&real));
    }
    let real = super::windows::canonical(exe).ok()?;
    let prefix = real.parent()?.parent()?;
    let kind = if prefix.join("conda-meta").is_dir() {
        "conda"
    } else {
        "system"
    };
    let mut env = from_prefix(prefix, kind, origin, Some(exe))?;
    // The user site of a system interpreter.
    if let (Some(home), Some(ver)) = (&src.home, env.python_version.clone()) {
        let user = Path::new(home)
            .join(".local/lib")
            .join(format!("python{ver}"))
            .join("site-packages");
        if user.is_dir() {
            env.site_packages.push(user.to_string_lossy().into_owned());
        }
    }
    Some(env)
}

/// What made or manages an environment (issue 31), from its prefix: the kind and the tool.
/// Pixi's environments are conda prefixes under `<project>/.pixi/envs/` (checked first); a
/// `conda-meta/` folder is conda's, with mamba or micromamba named by `conda-meta/history`'s
/// `# cmd:` lines or the prefix's path; `uv = …` in pyvenv.cfg, or a `uv.lock` beside a project's
/// `.venv`, is uv's; a venv in Poetry's cache (`…/pypoetry/virtualenvs/`) or beside a
/// `poetry.lock` is Poetry's. None when nothing marks it.
pub fn env_kind(prefix: &Path) -> Option<(&'static str, Option<&'static str>)> {
    let text = prefix.to_string_lossy().replace('\\', "/");
    let lower = text.to_ascii_lowercase();
    if lower.contains("/.pixi/envs/") {
        return Some(("pixi", Some("pixi")));
    }
    if prefix.join("conda-meta").is_dir() {
        let history = fs::read_to_string(prefix.join("conda-meta/history")).unwrap_or_default();
        let cmd_tool = history
            .lines()
            .filter_map(|l| l.strip_prefix("# cmd:"))
            .find_map(|cmd| {
                let exe = cmd.split_whitespace().next()?;
                let name = exe.rsplit(['/', '\\']).next()?.to_ascii_lowercase();
                // Windows records the entry script: `…\Scripts\conda-script.py`.
                let name = name.trim_end_matches(".exe").trim_end_matches("-script.py");
                match name {
                    "micromamba" => Some("micromamba"),
                    "mamba" => Some("mamba"),
                    "conda" => Some("conda"),
                    _ => None,
                }
            });
        let path_tool = if lower.contains("micromamba") {
            Some("micromamba")
        } else if lower.contains("mamba") {
            Some("mamba")
        } else {
            None
        };
        return Some(("conda", cmd_tool.or(path_tool).or(Some("conda"))));
    }
    let cfg = fs::read_to_string(prefix.join("pyvenv.cfg")).ok()?;
    let has_key = |k: &str| {
        cfg.lines()
            .any(|l| l.split_once('=').is_some_and(|(a, _)| a.trim() == k))
    };
    let project = prefix.parent();
    let beside = |f: &str| {
        prefix.file_name().is_some_and(|n| n == ".venv")
            && project.is_some_and(|p| p.join(f).is_file())
    };
    if has_key("uv") || beside("uv.lock") {
        return Some(("uv", Some("uv")));
    }
    if lower.contains("/pypoetry/virtualenvs/") || beside("poetry.lock") {
        return Some(("poetry", Some("poetry")));
    }
    Some(("venv", None))
}

/// Sets the kind and tool of an environment found with a looser kind ("venv", "conda",
/// "given", "system", "pyenv"); assumed ones are left alone.
pub fn classify(env: &mut PythonEnv) {
    if env.kind == "assumed" {
        return;
    }
    if let Some((kind, tool)) = env_kind(Path::new(&env.prefix)) {
        // A plain venv marker does not override what found it as pyenv or given.
        if kind == "venv" && env.kind != "system" {
            return;
        }
        env.kind = kind.to_string();
        env.tool = tool.map(str::to_string);
    }
}

/// An environment from its prefix: finds lib/pythonX.Y/site-packages (and Debian's
/// dist-packages, Windows' Lib/site-packages).
pub fn from_prefix(
    prefix: &Path,
    kind: &str,
    origin: &str,
    exe: Option<&Path>,
) -> Option<PythonEnv> {
    let mut site = Vec::new();
    let mut version = None;
    for lib in [
        prefix.join("lib"),
        prefix.join("local/lib"),
        prefix.join("lib64"),
    ] {
        let Ok(rd) = fs::read_dir(&lib) else { continue };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("python3"))
            .collect();
        names.sort();
        for n in names {
            for sub in ["site-packages", "dist-packages"] {
                let d = lib.join(&n).join(sub);
                if d.is_dir() {
                    if version.is_none() && n.len() > "python".len() {
                        version = Some(n["python".len()..].to_string());
                    }
                    site.push(d.to_string_lossy().into_owned());
                }
            }
        }
    }
    let win = prefix.join("Lib").join("site-packages");
    if win.is_dir() {
        site.push(win.to_string_lossy().into_owned());
        if version.is_none() {
            version = windows_python_version(prefix);
        }
    }
    // A directory that is itself a site-packages (given with --python).
    if site.is_empty() && kind == "given" {
        site.push(prefix.to_string_lossy().into_owned());
    }
    // venvs with include-system-site-packages = true also see the base interpreter's.
    if kind == "venv" {
        if let Ok(cfg) = fs::read_to_string(prefix.join("pyvenv.cfg")) {
            let get = |k: &str| {
                cfg.lines().find_map(|l| {
                    let (a, b) = l.split_once('=')?;
                    (a.trim() == k).then(|| b.trim().to_string())
                })
            };
            if version.is_none() {
                version = get("version").or_else(|| get("version_info"));
            }
            if get("include-system-site-packages").as_deref() == Some("true") {
                if let Some(home) = get("home") {
                    if let Some(base) = Path::new(&home).parent() {
                        if let Some(b) = from_prefix(base, "system", origin, None) {
                            site.extend(b.site_packages);
                        }
                    }
                }
            }
        }
    }
    if site.is_empty() {
        return None;
    }
    let interpreter = exe
        .map(Path::to_path_buf)
        .or_else(|| {
            [
                "bin/python3",
                "bin/python",
                "python.exe",
                "Scripts/python.exe",
            ]
            .iter()
            .map(|b| prefix.join(b))
            .find(|p| p.exists())
        })
        .map(|p| p.to_string_lossy().into_owned());
    Some(PythonEnv {
        interpreter,
        prefix: prefix.to_string_lossy().into_owned(),
        kind: kind.to_string(),
        origin: origin.to_string(),
        python_version: version.map(|v| sanitize::clean_line(&v, 20)),
        site_packages: site,
        ..Default::default()
    })
}

/// TensorFlow's Windows builds write their CUDA and cuDNN versions as DLL-name suffixes
/// (TensorFlow 2.10's win_amd64 build_info.py: cuda_version '64_112', cudnn_version '64_8'):
/// "11.2" and "8". Other values are kept as they are.
fn windows_dll_version(s: &str) -> String {
    let Some(d) = s.strip_prefix("64_") else {
        return s.to_string();
    };
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    match d.len() {
        1 => d.to_string(),
        2 => format!("{}.{}", &d[..1], &d[1..]),
        3 => format!("{}.{}", &d[..2], &d[2..]),
        _ => s.to_string(),
    }
}

/// Whether `--python DIR` names a Python environment: a prefix with site-packages (Unix or
/// Windows layout, a venv, conda), or a site-packages itself (its name, or packages in it).
pub fn is_environment_dir(dir: &Path) -> bool {
    if from_prefix(dir, "system", "--python", None).is_some() {
        return true;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name == "site-packages" || name == "dist-packages" {
        return true;
    }
    fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten().take(10_000).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".dist-info") || n.ends_with(".egg-info")
        })
    })
}

/// Whether `--python FILE` looks like an interpreter without running it: its name starts with
/// "python" (python3, python3.11, python.exe, pythonw.exe), or it sits in a venv's bin/ or
/// Scripts\ (pyvenv.cfg one level up), or in a conda prefix (conda-meta beside or above).
pub fn looks_like_interpreter(exe: &Path) -> bool {
    let named = exe.file_name().is_some_and(|n| {
        n.to_string_lossy()
            .to_ascii_lowercase()
            .starts_with("python")
    });
    let bin = exe.parent();
    let top = bin.and_then(Path::parent);
    named
        || top.is_some_and(|t| t.join("pyvenv.cfg").is_file() || t.join("conda-meta").is_dir())
        || bin.is_some_and(|b| b.join("conda-meta").is_dir())
}

/// The version of a Windows Python from its DLL beside python.exe: `python311.dll` → "3.11".
fn windows_python_version(prefix: &Path) -> Option<String> {
    let rd = fs::read_dir(prefix).ok()?;
    let mut found: Vec<String> = rd
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            let digits = n.strip_prefix("python3")?.strip_suffix(".dll")?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("3.{digits}"))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Reads the interesting packages and framework build files of an environment.
pub fn scan(env: &mut PythonEnv) {
    let mut pkgs: Vec<Package> = Vec::new();
    for sp in env.site_packages.clone() {
        let sp = Path::new(&sp);
        let Ok(rd) = fs::read_dir(sp) else { continue };
        for ent in rd.flatten() {
            let name = ent.file_name().to_string_lossy().into_owned();
            if let Some(p) = dist_from_dir_name(&name) {
                if INTERESTING.iter().any(|pre| p.0.starts_with(pre))
                    && !pkgs.iter().any(|q| q.name == p.0)
                {
                    pkgs.push(Package {
                        name: p.0,
                        version: p.1,
                        path: Some(ent.path().to_string_lossy().into_owned()),
                    });
                }
            }
        }
        if env.torch.is_none() {
            if let Ok(t) = fs::read_to_string(sp.join("torch/version.py")) {
                env.torch = parse_torch_version_py(&t);
            }
        }
        if env.tensorflow.is_none() {
            if let Ok(t) = fs::read_to_string(sp.join("tensorflow/python/platform/build_info.py")) {
                env.tensorflow = Some(parse_tf_build_info(&t));
            }
        }
    }
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(tf) = env.tensorflow.as_mut() {
        if let Some(p) = pkgs.iter().find(|p| {
            p.name == "tensorflow"
                || p.name.starts_with("tensorflow-")
                || p.name == "tf-nightly"
                || p.name.starts_with("tf-nightly-")
        }) {
            tf.package = p.name.clone();
            tf.version = p.version.clone();
        }
    }
    env.packages = pkgs;
}

/// `torch-2.7.1.dist-info` → ("torch", "2.7.1"); `nvidia_cuda_runtime_cu12-12.9.79.dist-info`;
/// `foo-1.0-py3.8.egg-info`.
pub fn dist_from_dir_name(name: &str) -> Option<(String, String)> {
    let stem = name
        .strip_suffix(".dist-info")
        .or_else(|| name.strip_suffix(".egg-info"))?;
    let (n, rest) = stem.split_once('-')?;
    let version = rest.split("-py").next().unwrap_or(rest);
    if n.is_empty() || version.is_empty() {
        return None;
    }
    Some((normalize_dist_name(n), sanitize::clean_line(version, 60)))
}

/// Parses `torch/version.py` (both the annotated `cuda: Optional[str] = '12.6'` and the older
/// `cuda = '12.1'` forms).
pub fn parse_torch_version_py(text: &str) -> Option<TorchBuild> {
    let mut b = TorchBuild::default();
    let mut have_version = false;
    for line in text.lines() {
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        let key = lhs.split(':').next().unwrap_or("").trim();
        let val = py_str(rhs.trim());
        match key {
            "__version__" => {
                if let Some(v) = val {
                    b.version = v;
                    have_version = true;
                }
            }
            "cuda" => b.cuda = val,
            "hip" => b.hip = val,
            "git_version" => b.git_version = val,
            _ => {}
        }
    }
    have_version.then_some(b)
}

/// A Python string literal ('x' or "x"); None for `None` or anything else.
fn py_str(s: &str) -> Option<String> {
    let s = s.trim();
    let q = s.chars().next()?;
    if q != '\'' && q != '"' {
        return None;
    }
    let inner = &s[1..];
    let end = inner.find(q)?;
    Some(sanitize::clean_line(&inner[..end], 200))
}

/// A Python literal token.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Bool(bool),
    None,
    Open,
    Close,
    Colon,
    Comma,
    Other,
}

fn tokenize(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' | b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != c {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                let end = j.min(b.len());
                out.push(Tok::Str(
                    String::from_utf8_lossy(&b[start..end]).into_owned(),
                ));
                i = j + 1;
                continue;
            }
            b'[' | b'(' | b'{' => out.push(Tok::Open),
            b']' | b')' | b'}' => out.push(Tok::Close),
            b':' => out.push(Tok::Colon),
            b',' => out.push(Tok::Comma),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                out.push(match &text[start..i] {
                    "True" => Tok::Bool(true),
                    "False" => Tok::Bool(false),
                    "None" => Tok::None,
                    _ => Tok::Other,
                });
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Parses TensorFlow's generated `build_info.py`, in both the dict and the
/// `collections.OrderedDict([('key', value), …])` forms.
pub fn parse_tf_build_info(text: &str) -> TensorflowBuild {
    let toks = tokenize(text);
    let mut b = TensorflowBuild::default();
    let mut i = 0;
    while i + 2 < toks.len() {
        let (Tok::Str(key), Tok::Colon | Tok::Comma) = (&toks[i], &toks[i + 1]) else {
            i += 1;
            continue;
        };
        let v = &toks[i + 2];
        match (key.as_str(), v) {
            ("is_cuda_build", Tok::Bool(x)) => b.is_cuda_build = Some(*x),
            ("is_rocm_build", Tok::Bool(x)) => b.is_rocm_build = Some(*x),
            ("cuda_version", Tok::Str(s)) => {
                b.cuda_version = Some(sanitize::clean_line(&windows_dll_version(s), 20))
            }
            ("cudnn_version", Tok::Str(s)) => {
                b.cudnn_version = Some(sanitize::clean_line(&windows_dll_version(s), 20))
            }
            ("cuda_compute_capabilities", Tok::Open) => {
                let mut j = i + 3;
                while j < toks.len() && toks[j] != Tok::Close {
                    if let Tok::Str(s) = &toks[j] {
                        b.cuda_compute_capabilities
                            .push(sanitize::clean_line(s, 20));
                    }
                    j += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b
}

/// The script `--deep` runs in each environment. It prints one line starting with the tag,
/// holding JSON with `"result": "success"` and what each framework said.
pub const DEEP_SCRIPT: &str = r#"
import json, sys
out = {"result": "success", "python": sys.version.split()[0]}
def attempt(name, fn):
    try:
        out[name] = fn()
    except BaseException as e:
        out[name] = {"error": "%s: %s" % (type(e).__name__, str(e)[:500])}
def t():
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        return None
    import torch
    r = {"version": torch.__version__, "cuda": torch.version.cuda,
         "hip": getattr(torch.version, "hip", None)}
    r["cuda_available"] = bool(torch.cuda.is_available())
    r["device_count"] = torch.cuda.device_count() if r["cuda_available"] else 0
    try:
        r["arch_list"] = torch.cuda.get_arch_list() if r["cuda_available"] else torch._C._cuda_getArchFlags().split()
    except Exception as e:
        r["arch_list_error"] = str(e)[:200]
    try:
        r["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:
        r["cudnn_error"] = str(e)[:200]
    if r["cuda_available"]:
        r["devices"] = [{"name": torch.cuda.get_device_name(i),
                         "capability": list(torch.cuda.get_device_capability(i))}
                        for i in range(r["device_count"])]
    return r
def tf():
    import importlib.util
    if importlib.util.find_spec("tensorflow") is None:
        return None
    import tensorflow as tf
    return {"version": tf.__version__, "build_info": {k: v for k, v in tf.sysconfig.get_build_info().items()},
            "gpus": [d.name for d in tf.config.list_physical_devices("GPU")]}
def jx():
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        return None
    import jax
    import jaxlib
    return {"version": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", None),
            "backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()]}
attempt("torch", t)
attempt("tensorflow", tf)
attempt("jax", jx)
sys.stdout.flush()
print("\nGPUDOCTOR_DEEP " + json.dumps(out, default=str))
"#;

const DEEP_TAG: &str = "GPUDOCTOR_DEEP ";

/// Runs the deep script with `exe` under `limit`.
pub fn deep_probe(exe: &Path, limit: Duration) -> Probed<serde_json::Value> {
    let mut cmd = Command::new(exe);
    cmd.arg("-c").arg(DEEP_SCRIPT);
    let out = match deadline::run(cmd, limit, 4 * 1024 * 1024) {
        Ok(o) => o,
        Err(e) => return Probed::failed(format!("could not run {}: {e}", exe.display())),
    };
    if out.timed_out {
        return Probed::failed_code(
            "timeout",
            format!("importing the frameworks {}", out.describe(limit)),
        );
    }
    parse_deep_output(&out.stdout_text()).unwrap_or_else(|| {
        let err = out.stderr_text();
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Probed::failed(format!(
            "{} {} without a result: {}",
            exe.display(),
            out.describe(limit),
            sanitize::clean_line(last, 300)
        ))
    })
}

pub fn parse_deep_output(stdout: &str) -> Option<Probed<serde_json::Value>> {
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(DEEP_TAG))?;
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(v) if v.get("result").and_then(|r| r.as_str()) == Some("success") => {
            Some(Probed::found(v))
        }
        Ok(_) => Some(Probed::failed("the deep probe did not report success")),
        Err(e) => Some(Probed::failed(format!(
            "the deep probe printed bad JSON: {e}"
        ))),
    }
}

#[cfg(test)]
#[path = "python_tests.rs"]
mod tests;
