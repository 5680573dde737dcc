#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

// First lines of /etc/nv_tegra_release recorded on Jetson boards (JetPack 4.6 and 5.1.2), as
// quoted in https://github.com/tier4/ota-client/blob/main/tests/test_otaclient/test_boot_control/test_jetson_common.py
const R32: &str = "# R32 (release), REVISION: 6.1, GCID: 27863751, BOARD: t186ref, EABI: aarch64, DATE: Mon Jul 26 19:36:31 UTC 2021\n";
const R35: &str = "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023\n";
// The root node of the Jetson AGX Orin developer kit's device tree (Linux
// arch/arm64/boot/dts/nvidia/tegra234-p3737-0000+p3701-0000.dts): /proc/device-tree holds the
// strings NUL-terminated.
const ORIN_COMPATIBLE: &[u8] =
    b"nvidia,p3737-0000+p3701-0000\0nvidia,p3701-0000\0nvidia,tegra234\0";
const ORIN_MODEL: &[u8] = b"NVIDIA Jetson AGX Orin Developer Kit\0";

fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, content) in files {
        let p = d.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    d
}

#[test]
fn l4t_release_lines_parse() {
    assert_eq!(parse_l4t_release(R32).as_deref(), Some("R32.6.1"));
    assert_eq!(parse_l4t_release(R35).as_deref(), Some("R35.4.1"));
    assert_eq!(
        parse_l4t_release("# R36 (release), BOARD: generic\n").as_deref(),
        Some("R36"),
        "no revision: the major alone"
    );
    assert_eq!(parse_l4t_release("garbage\n"), None);
    assert_eq!(parse_l4t_release("# R (release)\n"), None);
    assert_eq!(parse_l4t_release(""), None);
}

#[test]
fn the_soc_comes_from_the_device_tree() {
    assert_eq!(tegra_soc(ORIN_COMPATIBLE).as_deref(), Some("tegra234"));
    // A Raspberry Pi 4 (bcm2711-rpi-4-b.dts) is no Tegra.
    assert_eq!(tegra_soc(b"raspberrypi,4-model-b\0brcm,bcm2711\0"), None);
    assert_eq!(tegra_soc(b""), None);
}

#[test]
fn a_jetson_agx_orin_is_detected_with_its_release_soc_and_model() {
    let d = tree(&[
        ("etc/nv_tegra_release", R35.as_bytes()),
        ("proc/device-tree/compatible", ORIN_COMPATIBLE),
        ("proc/device-tree/model", ORIN_MODEL),
        // drivers/soc/tegra/fuse/fuse-tegra.c registers the SoC device with family "Tegra".
        ("sys/devices/soc0/family", b"Tegra\n"),
    ]);
    let t = probe(d.path()).unwrap();
    assert_eq!(t.l4t.as_deref(), Some("R35.4.1"));
    assert_eq!(t.soc.as_deref(), Some("tegra234"));
    assert_eq!(
        t.model.as_deref(),
        Some("NVIDIA Jetson AGX Orin Developer Kit")
    );
    assert_eq!(t.markers.len(), 3, "{:?}", t.markers);
}

#[test]
fn one_marker_is_enough() {
    // A container on a Jetson sees /etc/nv_tegra_release (mounted by the NVIDIA runtime) but
    // not always the device tree.
    let d = tree(&[("etc/nv_tegra_release", R32.as_bytes())]);
    let t = probe(d.path()).unwrap();
    assert_eq!(t.l4t.as_deref(), Some("R32.6.1"));
    assert_eq!(t.soc, None);
    assert_eq!(t.markers, ["/etc/nv_tegra_release"]);
    let d = tree(&[("sys/devices/soc0/family", b"Tegra\n")]);
    assert!(probe(d.path()).is_some());
}

#[test]
fn a_grace_server_or_a_pc_is_not_a_tegra() {
    // Grace (GH200, GB200) is an ACPI machine: no device tree, and its SoC device comes from
    // the Arm SMCCC SOC_ID call (drivers/firmware/smccc/soc_id.c: family "jep106:BBII", NVIDIA
    // being bank 4, id 0x6b).
    let d = tree(&[("sys/devices/soc0/family", b"jep106:036b\n")]);
    assert_eq!(probe(d.path()), None);
    let d = tree(&[]);
    assert_eq!(probe(d.path()), None);
}
