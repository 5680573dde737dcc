//! The NVIDIA kernel driver as the file system shows it: `/proc/driver/nvidia/version`,
//! `/sys/module/nvidia/version`, nouveau, NVIDIA devices on the PCI bus and their bound driver,
//! `/dev/nvidia*` nodes and the driver's daemons. Every path is read under a root so tests can
//! point it at a recorded tree.

use std::fs;
use std::path::Path;

use crate::sanitize;
use crate::snapshot::{Daemon, DeviceNode, KernelModule, PciDevice, Probed};

/// Parses the text of `/proc/driver/nvidia/version` (reference/compat-facts.md §8):
/// proprietary "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>" or open
/// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build …".
pub fn parse_proc_version(text: &str) -> Option<KernelModule> {
    let line = text.lines().find(|l| l.contains("NVRM version:"))?;
    let open = line.contains("Open Kernel Module");
    let after = if open {
        line.split_once("Open Kernel Module")?.1
    } else {
        line.split_once("Kernel Module")?.1
    };
    let mut words = after.split_whitespace().peekable();
    let mut arch = None;
    if open && words.peek() == Some(&"for") {
        words.next();
        arch = words.next().map(str::to_string);
    }
    let version = words.find(|w| crate::version::DriverVersion::parse(w).is_some())?;
    let flavor = if open {
        "open"
    } else if line.contains("Kernel Module") {
        "proprietary"
    } else {
        "unknown"
    };
    Some(KernelModule {
        version: version.to_string(),
        flavor: flavor.to_string(),
        arch,
        line: sanitize::clean_line(line.trim(), 300),
    })
}

pub fn kernel_module(root: &Path) -> Probed<KernelModule> {
    let p = root.join("proc/driver/nvidia/version");
    match fs::read_to_string(&p) {
        Ok(t) => match parse_proc_version(&t) {
            Some(k) => Probed::found(k),
            None => Probed::failed_code(
                "unparsed",
                format!(
                    "{} has no NVRM version line: {}",
                    p.display(),
                    sanitize::clean_line(t.lines().next().unwrap_or(""), 200)
                ),
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Probed::absent_code(
            "not_loaded",
            format!(
                "{} does not exist: the nvidia kernel module is not loaded",
                p.display()
            ),
        ),
        Err(e) => Probed::failed(format!("could not read {}: {e}", p.display())),
    }
}

pub fn sys_module_version(root: &Path) -> Probed<String> {
    let p = root.join("sys/module/nvidia/version");
    match fs::read_to_string(&p) {
        Ok(t) => {
            let v = t.trim();
            if crate::version::DriverVersion::parse(v).is_some() {
                Probed::found(v.to_string())
            } else {
                Probed::failed_code(
                    "unparsed",
                    format!("{} holds {:?}", p.display(), sanitize::clean_line(v, 80)),
                )
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Probed::absent_code("not_loaded", format!("{} does not exist", p.display()))
        }
        Err(e) => Probed::failed(format!("could not read {}: {e}", p.display())),
    }
}

pub fn nouveau_loaded(root: &Path) -> Probed<bool> {
    let p = root.join("sys/module");
    if !p.is_dir() {
        return Probed::absent(format!("{} is not readable", p.display()));
    }
    Probed::found(p.join("nouveau").exists())
}

/// NVIDIA functions on the PCI bus (vendor 0x10de) with the kernel driver bound to each.
pub fn pci_devices(root: &Path) -> Probed<Vec<PciDevice>> {
    let dir = root.join("sys/bus/pci/devices");
    let rd = match fs::read_dir(&dir) {
        Ok(r) => r,
        Err(e) => return Probed::absent(format!("{} is not readable: {e}", dir.display())),
    };
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let p = ent.path();
        let vendor = fs::read_to_string(p.join("vendor")).unwrap_or_default();
        if vendor.trim() != "0x10de" {
            continue;
        }
        let device_id = fs::read_to_string(p.join("device")).unwrap_or_default();
        let class = fs::read_to_string(p.join("class")).unwrap_or_default();
        let driver = fs::read_link(p.join("driver"))
            .ok()
            .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
        out.push(PciDevice {
            bus_id: sanitize::clean_line(&ent.file_name().to_string_lossy(), 40),
            device_id: sanitize::clean_line(device_id.trim(), 16),
            class: sanitize::clean_line(class.trim(), 16),
            driver: driver.map(|d| sanitize::clean_line(&d, 40)),
        });
    }
    out.sort_by(|a, b| a.bus_id.cmp(&b.bus_id));
    Probed::found(out)
}

/// `/dev/nvidia*` (and `/dev/nvidia-caps/*`), with whether this user can open them.
pub fn device_nodes(root: &Path) -> Probed<Vec<DeviceNode>> {
    let dev = root.join("dev");
    let rd = match fs::read_dir(&dev) {
        Ok(r) => r,
        Err(e) => return Probed::failed(format!("{} is not readable: {e}", dev.display())),
    };
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        if !name.starts_with("nvidia") {
            continue;
        }
        let p = ent.path();
        if p.is_dir() {
            if let Ok(sub) = fs::read_dir(&p) {
                for s in sub.flatten() {
                    out.push(node(&s.path()));
                }
            }
            continue;
        }
        out.push(node(&p));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Probed::found(out)
}

fn node(p: &Path) -> DeviceNode {
    DeviceNode {
        path: sanitize::clean_line(&p.to_string_lossy(), 200),
        readable: access(p, false),
        writable: access(p, true),
    }
}

#[cfg(unix)]
fn access(p: &Path, write: bool) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mode = if write { libc::W_OK } else { libc::R_OK };
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

#[cfg(not(unix))]
fn access(p: &Path, _write: bool) -> bool {
    p.exists()
}

/// The daemons a GPU host may need, found by process name under /proc.
pub const DAEMONS: [&str; 2] = ["nvidia-persistenced", "nv-fabricmanager"];

pub fn daemons(root: &Path) -> Probed<Vec<Daemon>> {
    let proc_dir = root.join("proc");
    let rd = match fs::read_dir(&proc_dir) {
        Ok(r) => r,
        Err(e) => return Probed::failed(format!("{} is not readable: {e}", proc_dir.display())),
    };
    let mut found: Vec<Daemon> = DAEMONS
        .iter()
        .map(|n| Daemon {
            name: n.to_string(),
            running: false,
            pid: None,
            version: None,
        })
        .collect();
    for ent in rd.flatten() {
        let name = ent.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(comm) = fs::read_to_string(ent.path().join("comm")) else {
            continue;
        };
        let comm = comm.trim();
        for d in found.iter_mut() {
            // comm is cut at 15 bytes: "nvidia-persiste", "nv-fabricmanage".
            if !d.running && d.name.starts_with(comm) && comm.len() >= 8 {
                d.running = true;
                d.pid = Some(pid);
            }
        }
    }
    // The Fabric Manager's version must equal the driver's: ask the running binary.
    for d in found
        .iter_mut()
        .filter(|d| d.running && d.name == "nv-fabricmanager")
    {
        let exe = d
            .pid
            .and_then(|p| fs::read_link(root.join(format!("proc/{p}/exe"))).ok());
        if let Some(exe) = exe {
            let mut cmd = std::process::Command::new(exe);
            cmd.arg("--version");
            if let Ok(out) = super::deadline::run(cmd, std::time::Duration::from_secs(3), 16 * 1024)
            {
                let text = out.stdout_text() + &out.stderr_text();
                d.version = text
                    .split(|c: char| c.is_whitespace() || c == ':')
                    .find(|w| crate::version::DriverVersion::parse(w).is_some())
                    .map(|w| sanitize::clean_line(w, 40));
            }
        }
    }
    Probed::found(found)
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
