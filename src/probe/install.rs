//! How the NVIDIA driver was installed (issue 31): the package that owns the `nvidia` kernel
//! module and `libcuda.so.1` (dpkg's file lists, `rpm -qf`, `pacman -Qo` under a deadline), the
//! `.run` installer's traces, DKMS, precompiled module packages, open or proprietary modules.
//! The method decides how a fix upgrades the driver; mixing methods is a known way to break a
//! node. dpkg's ownership is read from its file lists rather than asked of `dpkg -S` (see
//! [`dpkg_owners`]).
//!
//! Package names read here, with their sources:
//! - Ubuntu's precompiled, signed modules are `linux-modules-nvidia-<branch>[-server][-open]-<kernel>`
//!   and its DKMS ones `nvidia-dkms-<branch>[-open]`; the user-space driver `libnvidia-compute-<branch>`
//!   (https://ubuntu.com/server/docs/how-to/graphics/install-nvidia-drivers/).
//! - On RHEL-like systems NVIDIA's CUDA repository has `kmod-nvidia-latest-dkms` and
//!   `kmod-nvidia-open-dkms` (DKMS), and precompiled streams (`dnf module install
//!   nvidia-driver:<stream>`) whose modules come in `kmod-nvidia-<version>-<kernel>` packages
//!   (NVIDIA Driver Installation Guide, https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/).
//! - Debian's `libcuda1` installs `/usr/lib/<triplet>/nvidia/current/libcuda.so.1`; the loader's
//!   `/usr/lib/<triplet>/libcuda.so.1` is an update-alternatives link no package owns (the file
//!   list of libcuda1_535.261.03-1_amd64.deb, bookworm non-free), so links are followed.
//! - The `.run` installer writes `/var/log/nvidia-installer.log` and installs
//!   `/usr/bin/nvidia-uninstall` (NVIDIA's README, "Installing the NVIDIA Driver").

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sanitize;
use crate::snapshot::{DriverInstall, KernelModule, Probed};

/// What one package-manager query printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub ok: bool,
    pub stdout: String,
}

/// Runs a program by name with arguments; None when it is not there or could not run.
pub type Runner<'a> = &'a dyn Fn(&str, &[String]) -> Option<Query>;

/// The real runner: the program from PATH, under `limit`.
pub fn path_runner(
    path_var: Option<String>,
    limit: Duration,
) -> impl Fn(&str, &[String]) -> Option<Query> {
    move |prog: &str, args: &[String]| {
        let exe = super::python::which(path_var.as_deref()?, prog)?;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(args).env("LC_ALL", "C");
        let out = super::deadline::run(cmd, limit, 64 * 1024).ok()?;
        if out.timed_out {
            return None;
        }
        Some(Query {
            ok: out.success(),
            stdout: out.stdout_text(),
        })
    }
}

/// The package manager whose database is under `root`: dpkg, rpm or pacman.
pub fn manager(root: &Path) -> Option<&'static str> {
    if root.join("var/lib/dpkg/status").is_file() {
        Some("dpkg")
    } else if root.join("var/lib/rpm").is_dir() || root.join("usr/lib/sysimage/rpm").is_dir() {
        Some("rpm")
    } else if root.join("var/lib/pacman/local").is_dir() {
        Some("pacman")
    } else {
        None
    }
}

/// The package that owns `path`, from the manager's answer.
/// Under a `root` other than "/", the manager reads that root's database.
/// dpkg's database is read directly ([`dpkg_owners`]); rpm and pacman are asked.
pub fn owner(manager: &str, root: &Path, path: &str, run: Runner) -> Option<String> {
    if manager == "dpkg" {
        return dpkg_owners(root, &[path])
            .into_iter()
            .next()
            .map(|(_, p)| p);
    }
    let other_root = root != Path::new("/");
    let db = |rel: &str| root.join(rel).to_string_lossy().into_owned();
    let (prog, mut args): (&str, Vec<String>) = match manager {
        "rpm" => (
            "rpm",
            vec![
                "-qf".into(),
                "--queryformat".into(),
                "%{NAME}\\n".into(),
                path.into(),
            ],
        ),
        "pacman" => ("pacman", vec!["-Qoq".into(), path.into()]),
        _ => return None,
    };
    if other_root {
        let mut pre: Vec<String> = match manager {
            "rpm" => vec!["--root".into(), db("")],
            _ => vec!["--dbpath".into(), db("var/lib/pacman")],
        };
        pre.append(&mut args);
        args = pre;
    }
    let q = run(prog, &args)?;
    if !q.ok {
        return None;
    }
    parse_owner(manager, &q.stdout)
}

/// The packages that own `paths`, as (path, package) in the order of `paths`, read from dpkg's
/// file lists (`var/lib/dpkg/info/PACKAGE[:ARCH].list`, one absolute path a line) under `root`.
/// This is what `dpkg -S PATH` answers for a plain path, without running dpkg: on a GPU machine
/// with a large image each `dpkg -S` took 70-100 ms (it reads the whole status file first) and
/// made the install probe the slowest of `check` (146 ms of 156; docs/validation/
/// h200-2026-11-27-run1). The lists are read once for all paths; the first package in the
/// directory's sorted order that lists a path is its owner. Diversions are not followed.
pub fn dpkg_owners(root: &Path, paths: &[&str]) -> Vec<(String, String)> {
    let Ok(rd) = fs::read_dir(root.join("var/lib/dpkg/info")) else {
        return Vec::new();
    };
    let mut lists: Vec<(String, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".list")?;
            let package = stem.split(':').next()?.to_string();
            Some((package, e.path()))
        })
        .collect();
    lists.sort();
    let wanted: Vec<(&str, Vec<u8>)> = paths
        .iter()
        .filter(|p| p.starts_with('/') && !p.contains('\n'))
        .map(|p| (*p, format!("\n{p}\n").into_bytes()))
        .collect();
    let mut found: Vec<Option<String>> = vec![None; wanted.len()];
    for (package, list) in &lists {
        if found.iter().all(Option::is_some) {
            break;
        }
        let Ok(mut data) = fs::read(list) else {
            continue;
        };
        // Every line, the first and the last too, between two newlines.
        data.insert(0, b'\n');
        data.push(b'\n');
        for (slot, (_, needle)) in found.iter_mut().zip(&wanted) {
            if slot.is_none() && memchr::memmem::find(&data, needle).is_some() {
                *slot = Some(package.clone());
            }
        }
    }
    let mut out = Vec::new();
    for ((path, _), pkg) in wanted.iter().zip(found) {
        if let Some(pkg) = pkg.filter(|p| parse_owner("pacman", p).is_some()) {
            out.push((path.to_string(), pkg));
        }
    }
    out
}

/// The first package named in an owner query's output: dpkg's "pkg:arch: /path" (or
/// "pkg1, pkg2: /path"), rpm's name per line, pacman -Qoq's name.
pub fn parse_owner(manager: &str, stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    let name = match manager {
        "dpkg" => {
            // "diversion by" lines are not owners.
            if line.starts_with("diversion by") {
                return None;
            }
            let (pkgs, _) = line.split_once(": ")?;
            let first = pkgs.split(',').next()?.trim();
            first.split(':').next()?.to_string()
        }
        _ => line.split_whitespace().next()?.to_string(),
    };
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.' | b'_'));
    ok.then_some(name)
}

/// Follows symbolic links of a path under `root` (absolute targets are taken under `root`), at
/// most 16 hops; the path as given when it is not a link.
pub fn resolve_under(root: &Path, path: &str) -> String {
    let mut cur = PathBuf::from(path);
    for _ in 0..16 {
        let on_disk = root.join(cur.strip_prefix("/").unwrap_or(&cur));
        let Ok(target) = fs::read_link(&on_disk) else {
            break;
        };
        cur = if target.is_absolute() {
            target
        } else {
            cur.parent().map(|p| p.join(&target)).unwrap_or(target)
        };
    }
    cur.to_string_lossy().into_owned()
}

/// The `nvidia` kernel module files of the running kernel (`nvidia.ko`, compressed or not) under
/// `/lib/modules/<kernel>`, as absolute paths.
pub fn module_files(root: &Path, kernel: &str) -> Vec<String> {
    let base = root.join("lib/modules").join(kernel);
    let mut out = Vec::new();
    let mut stack = vec![base];
    let mut visited = 0;
    while let Some(dir) = stack.pop() {
        visited += 1;
        if visited > 5000 {
            break;
        }
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else {
                let n = e.file_name().to_string_lossy().into_owned();
                if ["nvidia.ko", "nvidia.ko.xz", "nvidia.ko.zst", "nvidia.ko.gz"]
                    .contains(&n.as_str())
                {
                    if let Ok(rel) = p.strip_prefix(root) {
                        out.push(format!("/{}", rel.to_string_lossy()));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// Where the loader finds libcuda.so.1: the entries of /etc/ld.so.cache.
pub fn libcuda_paths(root: &Path) -> Vec<String> {
    let Ok(data) = fs::read(root.join("etc/ld.so.cache")) else {
        return Vec::new();
    };
    super::ldcache::parse(&data)
        .into_iter()
        .filter(|(name, _)| name == "libcuda.so.1")
        .map(|(_, path)| path)
        .collect()
}

/// The facts the method is decided from (all read before; `decide` does no I/O).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub manager: Option<String>,
    pub module_files: Vec<String>,
    pub module_package: Option<String>,
    pub libcuda_paths: Vec<String>,
    pub libcuda_package: Option<String>,
    /// The maintainer (dpkg) or vendor (rpm) of the owning packages, lower-cased.
    pub packager: Option<String>,
    pub runfile_log: bool,
    pub runfile_uninstaller: bool,
    /// Versions under /var/lib/dkms/nvidia (or nvidia-open).
    pub dkms_versions: Vec<String>,
    pub kernel_module: Option<KernelModule>,
}

/// The branch ("580") of a driver version or of a package name's first number of 3 digits.
fn branch_of(version: Option<&str>, packages: &[&str]) -> Option<String> {
    if let Some(v) = version {
        if let Some(b) = v
            .split('.')
            .next()
            .filter(|b| b.len() == 3 && b.bytes().all(|c| c.is_ascii_digit()))
        {
            return Some(b.to_string());
        }
    }
    packages.iter().find_map(|p| {
        p.split(['-', '.', '_'])
            .find(|w| w.len() == 3 && w.bytes().all(|c| c.is_ascii_digit()))
            .map(str::to_string)
    })
}

/// Decides the method from the facts.
pub fn decide(f: &Facts) -> DriverInstall {
    let mut evidence = Vec::new();
    let module_pkg = f.module_package.as_deref();
    let lib_pkg = f.libcuda_package.as_deref();
    if let (Some(m), Some(p)) = (&f.manager, module_pkg) {
        evidence.push(format!("{m}: the nvidia module belongs to {p}"));
    }
    if let (Some(m), Some(p)) = (&f.manager, lib_pkg) {
        evidence.push(format!("{m}: libcuda.so.1 belongs to {p}"));
    }
    if f.runfile_uninstaller {
        evidence.push("/usr/bin/nvidia-uninstall exists (the .run installer's)".to_string());
    }
    if f.runfile_log {
        evidence.push("/var/log/nvidia-installer.log exists".to_string());
    }
    for v in &f.dkms_versions {
        evidence.push(format!("/var/lib/dkms holds {v}"));
    }
    for m in &f.module_files {
        evidence.push(format!("module file {m}"));
    }
    let names: Vec<&str> = [module_pkg, lib_pkg].into_iter().flatten().collect();
    let precompiled = names.iter().any(|n| {
        n.starts_with("linux-modules-nvidia-")
            || (n.starts_with("kmod-nvidia") && !n.ends_with("-dkms"))
    });
    let dkms_pkg = names.iter().any(|n| n.contains("dkms"));
    let in_dkms_tree = f.module_files.iter().any(|m| m.contains("/updates/dkms/"));
    let dkms = if !f.dkms_versions.is_empty() || dkms_pkg || in_dkms_tree {
        Some(true)
    } else if precompiled || module_pkg.is_some() {
        Some(false)
    } else {
        None
    };
    let from_nvidia = f.packager.as_deref().is_some_and(|p| p.contains("nvidia"));
    let packaged = !names.is_empty();
    let method = if precompiled {
        "precompiled"
    } else if packaged && from_nvidia {
        "nvidia-repo"
    } else if packaged {
        "distribution"
    } else if f.runfile_uninstaller || f.runfile_log {
        "runfile"
    } else {
        "unknown"
    };
    if method == "unknown" {
        evidence.push(
            "no package owns the module or libcuda.so.1, and no .run installer traces".to_string(),
        );
    }
    let version = f.kernel_module.as_ref().map(|k| k.version.as_str());
    let open_modules = match f.kernel_module.as_ref().map(|k| k.flavor.as_str()) {
        Some("open") => Some(true),
        Some("proprietary") => Some(false),
        _ => module_pkg.map(|p| p.contains("-open")),
    };
    DriverInstall {
        method: method.to_string(),
        dkms,
        kernel_module: f.module_package.clone(),
        libcuda_package: f.libcuda_package.clone(),
        manager: f.manager.clone().filter(|_| packaged),
        branch: branch_of(version, &names),
        open_modules,
        evidence: evidence
            .into_iter()
            .map(|e| sanitize::clean_line(&e, 200))
            .collect(),
    }
}

/// The Maintainer of a package in dpkg's status file, lower-cased.
fn dpkg_maintainer(root: &Path, package: &str) -> Option<String> {
    let status = fs::read_to_string(root.join("var/lib/dpkg/status")).ok()?;
    status.split("\n\n").find_map(|stanza| {
        let mut lines = stanza.lines();
        let first = lines.next()?;
        (first.strip_prefix("Package: ")? == package).then_some(())?;
        stanza
            .lines()
            .find_map(|l| l.strip_prefix("Maintainer: "))
            .map(str::to_ascii_lowercase)
    })
}

/// Reads everything and decides. `kernel` is the running kernel's release.
pub fn probe(
    root: &Path,
    kernel: Option<&str>,
    kernel_module: Option<KernelModule>,
    run: Runner,
) -> Probed<DriverInstall> {
    let module_files = kernel.map(|k| module_files(root, k)).unwrap_or_default();
    let libcuda = libcuda_paths(root);
    let dkms_versions: Vec<String> = ["nvidia", "nvidia-open"]
        .iter()
        .flat_map(|m| {
            fs::read_dir(root.join("var/lib/dkms").join(m))
                .into_iter()
                .flatten()
                .flatten()
                .map(move |e| format!("{m}/{}", e.file_name().to_string_lossy()))
        })
        .filter(|v| !v.ends_with("/kernel-") && !v.contains("/kernel-"))
        .collect();
    let runfile_log = root.join("var/log/nvidia-installer.log").is_file();
    let runfile_uninstaller = root.join("usr/bin/nvidia-uninstall").exists();
    if module_files.is_empty()
        && libcuda.is_empty()
        && kernel_module.is_none()
        && dkms_versions.is_empty()
        && !runfile_log
        && !runfile_uninstaller
    {
        return Probed::absent_code(
            "no_driver",
            "no NVIDIA driver here: no nvidia kernel module for the running kernel, no libcuda.so.1 in ld.so.cache, no /proc/driver/nvidia/version",
        );
    }
    let mgr = manager(root);
    // dpkg: every path and where its links lead, looked up in one read of the file lists.
    let dpkg_known: Vec<(String, String)> = if mgr == Some("dpkg") {
        let mut all: Vec<String> = Vec::new();
        for p in module_files.iter().chain(&libcuda) {
            all.push(p.clone());
            all.push(resolve_under(root, p));
        }
        dpkg_owners(root, &all.iter().map(String::as_str).collect::<Vec<_>>())
    } else {
        Vec::new()
    };
    let ask = |path: &str| -> Option<String> {
        let m = mgr?;
        let real = resolve_under(root, path);
        if m == "dpkg" {
            let known = |p: &str| {
                dpkg_known
                    .iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v.clone())
            };
            return known(path).or_else(|| known(&real));
        }
        owner(m, root, path, run)
            .or_else(|| (real != path).then(|| owner(m, root, &real, run)).flatten())
    };
    let module_package = module_files.iter().find_map(|m| ask(m));
    let libcuda_package = libcuda.iter().find_map(|l| ask(l));
    let packager = match mgr {
        Some("dpkg") => [&module_package, &libcuda_package]
            .into_iter()
            .flatten()
            .find_map(|p| dpkg_maintainer(root, p)),
        Some("rpm") => [&module_package, &libcuda_package]
            .into_iter()
            .flatten()
            .find_map(|p| {
                let q = run(
                    "rpm",
                    &[
                        "-q".into(),
                        "--queryformat".into(),
                        "%{VENDOR}\\n".into(),
                        p.clone(),
                    ],
                )?;
                q.ok.then(|| q.stdout.trim().to_ascii_lowercase())
            }),
        _ => None,
    };
    Probed::found(decide(&Facts {
        manager: mgr.map(str::to_string),
        module_files,
        module_package,
        libcuda_paths: libcuda,
        libcuda_package,
        packager,
        runfile_log,
        runfile_uninstaller,
        dkms_versions,
        kernel_module,
    }))
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
