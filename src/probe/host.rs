//! The host: operating system, kernel, distribution, container and WSL markers, Jetson/Tegra.

use std::fs;
use std::path::Path;

use crate::sanitize;
use crate::snapshot::Host;

/// Reads the host facts under `root`, with the process environment given by `env`.
pub fn probe(root: &Path, env: &dyn Fn(&str) -> Option<String>) -> Host {
    let kernel = fs::read_to_string(root.join("proc/sys/kernel/osrelease"))
        .ok()
        .map(|s| sanitize::clean_line(s.trim(), 120));
    let wsl = kernel
        .as_deref()
        .is_some_and(|k| k.to_ascii_lowercase().contains("microsoft"))
        || env("WSL_DISTRO_NAME").is_some()
        || root.join("proc/sys/fs/binfmt_misc/WSLInterop").exists();
    let distribution = fs::read_to_string(root.join("etc/os-release"))
        .ok()
        .and_then(|t| os_release_name(&t));
    let (container, markers) = container(root, env);
    let os = if cfg!(target_os = "windows") {
        "windows"
    } else if cfg!(target_os = "macos") {
        "macos"
    } else if wsl {
        "wsl"
    } else {
        "linux"
    };
    Host {
        os: os.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel,
        distribution,
        container,
        container_markers: markers,
        wsl,
        tegra: super::tegra::probe(root),
        windows: None,
    }
}

/// PRETTY_NAME, else NAME VERSION_ID, from /etc/os-release.
pub fn os_release_name(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').trim_matches('\'').to_string())
        })
    };
    let name = get("PRETTY_NAME").or_else(|| {
        let n = get("NAME")?;
        Some(match get("VERSION_ID") {
            Some(v) => format!("{n} {v}"),
            None => n,
        })
    })?;
    Some(sanitize::clean_line(&name, 120))
}

/// Which container runtime, if any, and the markers that say so.
fn container(root: &Path, env: &dyn Fn(&str) -> Option<String>) -> (Option<String>, Vec<String>) {
    let mut markers = Vec::new();
    let mut kind: Option<&str> = None;
    if env("KUBERNETES_SERVICE_HOST").is_some() {
        markers.push("KUBERNETES_SERVICE_HOST".to_string());
        kind = Some("kubernetes");
    }
    if root.join("var/run/secrets/kubernetes.io").exists() {
        markers.push("/var/run/secrets/kubernetes.io".to_string());
        kind = kind.or(Some("kubernetes"));
    }
    if root.join(".dockerenv").exists() {
        markers.push("/.dockerenv".to_string());
        kind = kind.or(Some("docker"));
    }
    if root.join("run/.containerenv").exists() {
        markers.push("/run/.containerenv".to_string());
        kind = kind.or(Some("podman"));
    }
    if let Some(c) = env("container") {
        markers.push(format!("container={}", sanitize::clean_line(&c, 40)));
        kind = kind.or(match c.as_str() {
            "podman" => Some("podman"),
            "docker" => Some("docker"),
            "lxc" => Some("lxc"),
            _ => Some("container"),
        });
    }
    if kind.is_none() {
        if let Ok(cg) = fs::read_to_string(root.join("proc/1/cgroup")) {
            for (needle, k) in [
                ("kubepods", "kubernetes"),
                ("docker", "docker"),
                ("containerd", "containerd"),
                ("libpod", "podman"),
                ("lxc", "lxc"),
            ] {
                if cg.contains(needle) {
                    markers.push(format!("/proc/1/cgroup mentions {needle}"));
                    kind = Some(k);
                    break;
                }
            }
        }
    }
    (kind.map(str::to_string), markers)
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;

/// This machine's hostname (for `--policy` node classes), or None when it cannot be read.
#[cfg(unix)]
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is as long as we say; gethostname NUL-terminates within it or fails.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    let h = String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned();
    (!h.is_empty()).then(|| crate::sanitize::clean_line(&h, 253))
}

/// This machine's name: Windows sets COMPUTERNAME for every process (the NetBIOS name, as
/// `hostname.exe` prints it).
#[cfg(not(unix))]
pub fn hostname() -> Option<String> {
    let h = std::env::var("COMPUTERNAME").ok()?;
    (!h.is_empty()).then(|| crate::sanitize::clean_line(&h, 253))
}
