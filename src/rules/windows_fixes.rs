//! Findings on Windows (probed, or `--assume os=windows`): the rules that only mean something on
//! Linux are not run, and the Linux commands in the others' fixes become what a Windows user types
//! (PowerShell, which Windows 10 and 11 open by default).
//!
//! A rule keeps one wording of its finding; this layer rewrites the commands and the few words
//! that name Linux things. A command that has no Windows form is dropped rather than shown wrong.

use crate::snapshot::Snapshot;
use crate::vocab::Finding;

/// Rules about things Windows does not have: the Linux kernel module and its flavours, `/dev`
/// nodes, the toolkit's `libcuda.so` stub, `LD_LIBRARY_PATH`, Linux containers, Jetson boards,
/// NVSwitch's fabric manager (Linux only), the forward-compatibility package (Linux only:
/// https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html).
pub const LINUX_ONLY: &[&str] = &[
    "driver.module-flavor",
    "driver.device-permissions",
    "libs.stub-libcuda",
    "libs.path-conflict",
    "container.no-gpu",
    "host.tegra",
    "faults.fabric-manager",
    "compat.forward-compat",
];

/// The display driver's entries in the System event log, where Windows has the kernel log: the
/// driver logs as provider `nvlddmkm` (event ids 13, 14, 153: e.g. https://pastebin.com/mGUyi1cP,
/// https://pastebin.com/EZAuFtW0) and a driver timeout/reset as `Display` event 4101 ("Display
/// driver nvlddmkm stopped responding and has successfully recovered",
/// https://pastebin.com/FjwSLUJD).
pub const EVENT_LOG_COMMAND: &str = "Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='nvlddmkm','Display'} -MaxEvents 20 | Format-List TimeCreated, ProviderName, Id, Message";

/// Where Windows users get the driver (GeForce, RTX/Quadro and data-centre GPUs alike).
pub const DRIVER_DOWNLOAD: &str = "https://www.nvidia.com/en-us/drivers/";

/// True when the snapshot is of a Windows machine (probed there, or assumed).
pub fn on_windows(snap: &Snapshot) -> bool {
    snap.host.get().is_some_and(|h| h.os == "windows")
}

/// True when the rule runs on this snapshot's operating system.
pub fn applies(snap: &Snapshot, rule_id: &str) -> bool {
    !(on_windows(snap) && LINUX_ONLY.contains(&rule_id))
}

/// Rewrites a finding's fix for Windows: each command in its Windows form (or dropped), and the
/// words of its text that name Linux things.
pub fn for_windows(mut f: Finding) -> Finding {
    let mut commands: Vec<String> = Vec::new();
    for c in &f.fix.commands {
        if let Some(w) = command(c) {
            if !commands.contains(&w) {
                commands.push(w);
            }
        }
    }
    f.fix.commands = commands;
    f.fix.shell = "powershell".to_string();
    f.fix.needs_root = f
        .fix
        .commands
        .iter()
        .any(|c| crate::fixes::needs_root(c, "powershell"));
    f.fix.text = words(&f.fix.text);
    f.detail = words(&f.detail);
    f.title = words(&f.title);
    f
}

/// One Linux command in its Windows form, or None when Windows has no such thing.
pub fn command(c: &str) -> Option<String> {
    let c = c.trim();
    if c.contains("dmesg") || c.contains("journalctl") {
        return Some(EVENT_LOG_COMMAND.to_string());
    }
    if c == "sudo reboot" || c == "reboot" {
        return Some("shutdown /r /t 0".to_string());
    }
    if crate::fixes::is_package_command(c) {
        return Some(format!("Start-Process '{DRIVER_DOWNLOAD}'"));
    }
    if c.contains("lspci") {
        // The link the GPU trained at and the most it can do, as NVML reports them.
        return Some(
            "nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv"
                .to_string(),
        );
    }
    if let Some(rest) = c.strip_prefix("export ") {
        // `export NAME=value` → PowerShell's `$env:NAME = "value"` for this terminal.
        let (name, value) = rest.split_once('=')?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        if value.contains('$') || value.contains('|') {
            return None;
        }
        let value = value.trim_matches(|ch| ch == '"' || ch == '\'');
        return Some(format!("$env:{name} = \"{value}\""));
    }
    // `sudo nvidia-smi …`: Windows has no sudo; nvidia-smi needs an Administrator terminal
    // for the commands that change a GPU, which the fix text says.
    let c = c.strip_prefix("sudo ").unwrap_or(c);
    if c.starts_with("nvidia-smi -pm") {
        // Persistence mode is Linux only (nvmlDeviceSetPersistenceMode).
        return None;
    }
    if linux_only(c) {
        return None;
    }
    Some(c.to_string())
}

/// True when a command names something only Linux has.
fn linux_only(c: &str) -> bool {
    const WORDS: &[&str] = &[
        "sudo ",
        "systemctl",
        "modprobe",
        "nvidia-modprobe",
        "usermod",
        "sysctl",
        "dkms",
        "update-initramfs",
        "LD_LIBRARY_PATH",
        "/etc/",
        "/dev/",
        "/proc/",
        "/sys/",
        "$USER",
        "| grep",
        "| tail",
        "| tr ",
        ".so",
    ];
    WORDS.iter().any(|w| c.contains(w))
}

/// Words of a finding's text in Windows terms.
pub fn words(t: &str) -> String {
    const SWAPS: &[(&str, &str)] = &[
        ("the kernel log", "the System event log"),
        ("The kernel log", "The System event log"),
        ("kernel log", "System event log"),
        ("LD_LIBRARY_PATH", "PATH"),
        ("libcuda.so.1", "nvcuda.dll"),
        ("libcuda.so", "nvcuda.dll"),
        ("libnvidia-ml.so.1", "nvml.dll"),
        ("libnvidia-ml.so", "nvml.dll"),
        ("(as root)", "(in a terminal run as Administrator)"),
        ("as root", "as Administrator"),
        ("reboot the node", "restart the machine"),
        ("reboot", "restart Windows"),
    ];
    let mut out = t.to_string();
    for (from, to) in SWAPS {
        if out.contains(from) {
            out = replace_words(&out, from, to);
        }
    }
    out
}

/// Replaces `from` where it is not the start of a longer word ("reboot", not "rebooted").
fn replace_words(t: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find(from) {
        let (before, after) = rest.split_at(i);
        let tail = after.get(from.len()..).unwrap_or("");
        out.push_str(before);
        if tail.starts_with(|ch: char| ch.is_alphanumeric()) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "windows_fixes_tests.rs"]
mod tests;
