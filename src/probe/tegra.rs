//! NVIDIA Jetson and other Tegra boards: an integrated GPU whose driver comes with Jetson Linux
//! (L4T), not the `nvidia` kernel module of discrete GPUs, and where NVML is missing (JetPack 5
//! and older) or answers only part of its calls (Orin, Thor). `check` must say that rather than
//! report "no NVIDIA driver".
//!
//! The markers are those NVIDIA's own container stack uses (go-nvlib `HasTegraFiles`:
//! /etc/nv_tegra_release, or /sys/devices/soc0/family starting with "tegra",
//! https://github.com/NVIDIA/go-nvlib/blob/main/pkg/nvlib/info/property-extractor.go), and the
//! device tree's root `compatible` naming an "nvidia,tegra…" SoC (the kernel's Jetson device
//! trees, e.g. https://github.com/torvalds/linux/blob/master/arch/arm64/boot/dts/nvidia/tegra234-p3737-0000+p3701-0000.dts).
//! A Grace server (GH200, GB200) has none of them: it is an ACPI machine with discrete GPUs.

use std::fs;
use std::path::Path;

use crate::sanitize;
use crate::snapshot::Tegra;

/// Reads the Tegra markers under `root`; None on any other machine.
pub fn probe(root: &Path) -> Option<Tegra> {
    let mut t = Tegra::default();
    if let Ok(text) = fs::read_to_string(root.join("etc/nv_tegra_release")) {
        t.markers.push("/etc/nv_tegra_release".to_string());
        t.l4t = parse_l4t_release(&text);
    }
    if let Ok(family) = fs::read_to_string(root.join("sys/devices/soc0/family")) {
        if family.trim().to_ascii_lowercase().starts_with("tegra") {
            t.markers.push(format!(
                "/sys/devices/soc0/family: {}",
                sanitize::clean_line(family.trim(), 40)
            ));
        }
    }
    if let Ok(compatible) = fs::read(root.join("proc/device-tree/compatible")) {
        if let Some(soc) = tegra_soc(&compatible) {
            t.markers
                .push(format!("/proc/device-tree/compatible: nvidia,{soc}"));
            t.soc = Some(soc);
        }
    }
    if t.markers.is_empty() {
        return None;
    }
    t.model = fs::read(root.join("proc/device-tree/model"))
        .ok()
        .map(|b| {
            let s = String::from_utf8_lossy(&b);
            sanitize::clean_line(s.trim_end_matches('\0').trim(), 120)
        })
        .filter(|s| !s.is_empty());
    Some(t)
}

/// "R35.4.1" from the first line of /etc/nv_tegra_release:
/// "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: …".
pub fn parse_l4t_release(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.trim_start().starts_with("# R"))?;
    let major = line.trim_start().strip_prefix("# R")?;
    let major: String = major.chars().take_while(char::is_ascii_digit).collect();
    if major.is_empty() {
        return None;
    }
    let revision = line.split(',').find_map(|f| {
        let v = f.trim().strip_prefix("REVISION:")?.trim();
        (!v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then_some(v)
    });
    Some(match revision {
        Some(r) => format!("R{major}.{r}"),
        None => format!("R{major}"),
    })
}

/// The SoC ("tegra234") among the device tree's NUL-separated root `compatible` strings
/// ("nvidia,p3737-0000+p3701-0000\0nvidia,p3701-0000\0nvidia,tegra234\0").
pub fn tegra_soc(compatible: &[u8]) -> Option<String> {
    compatible
        .split(|&b| b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .find_map(|s| {
            let soc = s.trim().strip_prefix("nvidia,")?;
            (soc.starts_with("tegra") && soc.len() <= 32).then(|| sanitize::clean_line(soc, 32))
        })
}

#[cfg(test)]
#[path = "tegra_tests.rs"]
mod tests;
