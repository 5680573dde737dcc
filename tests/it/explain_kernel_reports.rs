//! `explain` on kernel-log lines of the Linux kernel itself and of the NVIDIA driver's message
//! families that no hand-written signature names (issue 30): an oops, a hung task or a lockup is
//! the driver's only when its report names the NVIDIA module; the module loader's lines only when
//! they are about an NVIDIA module; the CPU's thermal lines are the CPU's. Lines from real reports
//! (their threads in tests/explain-corpus/sealed-2026-11-25*/kernel-log.yaml) and decoys.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

/// The categories of the readings, best first.
fn cats(text: &str) -> Vec<String> {
    let m = Matrix::embedded().unwrap();
    let mut v: Vec<String> = Vec::new();
    for x in explain_text(text, &m) {
        let c = x.category.as_str().to_string();
        if !v.contains(&c) {
            v.push(c);
        }
    }
    v
}

fn first(text: &str) -> Option<String> {
    cats(text).into_iter().next()
}

#[test]
fn a_task_hung_inside_the_nvidia_module_is_a_driver_fault() {
    let text = "[ 7510.129324] INFO: task gdscheck:509579 blocked for more than 120 seconds.
[ 7510.129968]       Tainted: P           OE     5.15.0-141-generic #151-Ubuntu
[ 7510.131227] Call Trace:
[ 7510.131288]  down_read+0x43/0xa0
[ 7510.131288]  os_acquire_rwlock_read+0x35/0x50 [nvidia]
[ 7510.132138]  _nv051482rm+0x10/0x40 [nvidia]";
    assert_eq!(
        first(text).as_deref(),
        Some("driver_fault"),
        "{:?}",
        cats(text)
    );
    // The frame that names the driver need not carry the module in brackets.
    let kms = "desktop kernel: INFO: task KMS thread:6791 blocked for more than 122 seconds.
desktop kernel: task:KMS thread      state:D stack:0     pid:6791  tgid:6759
desktop kernel:  down+0x5e/0x80
desktop kernel:  nvkms_ioctl_from_kapi_try_pmlock+0x55/0xc0";
    assert_eq!(
        first(kms).as_deref(),
        Some("driver_fault"),
        "{:?}",
        cats(kms)
    );
}

#[test]
fn a_hung_task_or_oops_of_another_module_does_not_blame_the_gpu() {
    for text in [
        "[ 1200.1] INFO: task jbd2/sda1-8:311 blocked for more than 120 seconds.
[ 1200.2]       Not tainted 6.1.0-18-amd64 #1 Debian 6.1.76-1
[ 1200.3] Call Trace:
[ 1200.4]  jbd2_journal_commit_transaction+0x1a2/0x1b0 [jbd2]
[ 1200.5]  ext4_sync_file+0x1f0/0x380 [ext4]",
        "[  88.1] BUG: kernel NULL pointer dereference, address: 0000000000000008
[  88.2] Oops: 0000 [#1] PREEMPT SMP NOPTI
[  88.3] Modules linked in: nvidia_drm(PO) nvidia_modeset(PO) nvidia(PO) btrfs xor
[  88.4] RIP: 0010:btrfs_search_slot+0x1a2/0x940 [btrfs]
[  88.5] Call Trace:
[  88.6]  btrfs_lookup_inode+0x3a/0xc0 [btrfs]",
        "[ 300.0] watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [kworker/3:1:1234]",
        "[  12.0] vboxdrv: Unknown symbol rtR0MemObjNativeFree (err -2)",
        "[  12.0] zfs: disagrees about version of symbol module_layout",
    ] {
        let c = cats(text);
        assert!(
            !c.iter().any(|x| matches!(
                x.as_str(),
                "driver_fault" | "hardware_fault" | "driver_missing"
            )),
            "{text}\n-> {c:?}"
        );
    }
}

#[test]
fn an_oops_whose_report_names_the_nvidia_module_is_a_driver_fault() {
    for text in [
        "395.350871] BUG: unable to handle kernel NULL pointer dereference at 00000000000000b1
[ 395.350973] PGD 5c9846d067 P4D 5c9846d067 PUD 5c9847f067 PMD 0
[ 395.351068] Oops: 0000 [#1] SMP NOPTI
[ 395.351681] RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]",
        // The tail of a report: the crash site alone names the driver.
        "[  886.497991] CR2: 00000000000152ba
[  886.498433] ---[ end trace 0000000000000000 ]---
[  886.507366] RIP: 0010:freeRpcInfrastructure_VGPU+0x25/0xe0 [nvidia]",
        "[  155.361087] UBSAN: array-index-out-of-bounds in /root/open-gpu-modules-host/kernel-open/nvidia-uvm/uvm_mmu.c:550:17
[  155.362469] index 109 is out of range for type 'uvm_page_directory_t *[*]'
[  155.363446]  uvm_page_tree_put_ptes_async+0x160/0x580 [nvidia_uvm]",
    ] {
        assert_eq!(first(text).as_deref(), Some("driver_fault"), "{text}\n-> {:?}", cats(text));
    }
}

#[test]
fn the_module_loader_s_lines_about_nvidia_modules_say_why_it_did_not_load() {
    let symver = "Jun 26 08:48:30 robocatsorin kernel: [   15.726225] nvidia: disagrees about version of symbol i2c_get_adapter
Jun 26 08:48:30 robocatsorin kernel: [   15.726238] nvidia: Unknown symbol i2c_get_adapter (err -22)";
    assert_eq!(
        first(symver).as_deref(),
        Some("driver_missing"),
        "{:?}",
        cats(symver)
    );
    let gpl = "[78175.093303] nvidia_fs: module using GPL-only symbols uses symbols nvidia_p2p_dma_unmap_pages from proprietary module nvidia.
[78175.093316] nvidia_fs: Unknown symbol nvidia_p2p_dma_unmap_pages (err -2)";
    assert_eq!(
        first(gpl).as_deref(),
        Some("configuration"),
        "{:?}",
        cats(gpl)
    );
    let unknown = "[95755.008404] nvidia_uvm: module uses symbols from proprietary module nvidia, inheriting taint.
[95755.008691] nvidia_uvm: Unknown symbol radix_tree_preloads (err -2)";
    // The loader refusing a symbol is how the module was built or what is loaded beside it
    // (configuration, as linux_families.yaml says), not a fault of the running driver.
    assert_eq!(
        first(unknown).as_deref(),
        Some("configuration"),
        "{:?}",
        cats(unknown)
    );
    let magic = "nvidia: version magic '5.15.0-91-generic SMP mod_unload modversions ' should be '5.15.0-92-generic SMP mod_unload modversions '";
    assert_eq!(
        first(magic).as_deref(),
        Some("driver_missing"),
        "{:?}",
        cats(magic)
    );
}

#[test]
fn the_cpu_s_thermal_lines_are_the_cpu_s() {
    let m = Matrix::embedded().unwrap();
    for line in [
        "[76747.169397] mce: CPU2: Core temperature above threshold, cpu clock throttled (total events = 2675)",
        "[ 10.0] CPU4: Package temperature is above threshold, cpu clock is throttled (total events = 740)",
    ] {
        let v = explain_text(line, &m);
        let x = v.first().unwrap_or_else(|| panic!("{line}"));
        assert_eq!(x.category.as_str(), "thermal_power", "{line}");
        assert!(x.meaning.contains("not the GPU"), "{}", x.meaning);
        assert!(x.fix.text.contains("CPU"), "{}", x.fix.text);
    }
    // Back to normal is no finding.
    assert!(cats("CPU4: Package temperature/speed normal (total events = 740)").is_empty());
}

#[test]
fn pci_power_states_bandwidth_and_aer_are_read() {
    for (text, want) in [
        ("[939156.023420] pci 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible", "configuration"),
        ("[    2.819960] pci 0000:01:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x4 link at 0000:00:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)", "pcie_degraded"),
        ("[  228.059194] pcieport 0000:00:00.0: AER: Multiple Corrected error message received from 0000:01:00.0", "pcie_degraded"),
    ] {
        assert_eq!(first(text).as_deref(), Some(want), "{text}\n-> {:?}", cats(text));
    }
    // The full-bandwidth notice is no finding.
    assert!(cats(
        "pci 0000:01:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)"
    )
    .is_empty());
}

#[test]
fn driver_messages_that_no_signature_names_are_read_by_their_family() {
    for (text, want) in [
        // NV_PRINTF's prefix without its colon.
        ("NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM", "driver_fault"),
        // A printk of the driver's Linux layer (kernel-open/nvidia/linux_nvswitch.c).
        ("nvidia-nvswitch: Version mismatch, kernel version 450.80.02 user version 450.51.06", "driver_library_mismatch"),
        ("Feb 26 18:22:12 adder kernel: NVRM: Attempting to remove device 0000:01:00.0 with non-zero usage count!", "configuration"),
    ] {
        assert_eq!(first(text).as_deref(), Some(want), "{text}\n-> {:?}", cats(text));
    }
}

/// The open module of R515-R535 refuses a GPU that is not a Data Center GPU unless
/// NVreg_OpenRmEnableUnsupportedGpus is set (OGKM 515.43.04 osinit.c prints the four lines and
/// fails RmInitAdapter on purpose): a module parameter decides it, so configuration leads the
/// RmInitAdapter failure it causes, and the GSP family (pre-Turing GPUs) is not its reading.
#[test]
fn the_open_module_s_data_center_opt_in_is_configuration() {
    let text = "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.
[    3.513144] NVRM: To force use of Open nvidia.ko on other GPUs, see the
[    3.513145] NVRM: 'OpenRmEnableUnsupportedGpus' kernel module parameter described
[    3.513146] NVRM: in the README.
[    3.513150] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x0:1575)";
    let c = cats(text);
    assert_eq!(
        c.first().map(String::as_str),
        Some("configuration"),
        "{c:?}"
    );
    assert!(!c.iter().any(|x| x == "arch_unsupported"), "{c:?}");
}

/// A report whose crash site or frames name another GPU's driver (amdgpu, i915, nouveau, the
/// TTM/DRM code they share) is that GPU driver's fault too: a GPU doctor is asked about them.
/// Real reports: NixOS/nixpkgs#240017 (an amdgpu NULL dereference in 5.15.118) and
/// NixOS/nixpkgs#118460 (TTM's WARNING in 5.11.9), both in
/// tests/explain-corpus/sealed-2026-11-28e/kernel-log.yaml.
#[test]
fn a_report_that_names_another_gpu_driver_is_a_driver_fault() {
    for text in [
        "Jun 26 17:10:51 xxx kernel: BUG: kernel NULL pointer dereference, address: 00000000000002b0
Jun 26 17:10:51 xxx kernel: #PF: supervisor read access in kernel mode
Jun 26 17:10:51 xxx kernel: Oops: 0000 [#1] SMP NOPTI
Jun 26 17:10:51 xxx kernel: CPU: 23 PID: 1749 Comm: gst-plugin-scan Not tainted 5.15.118 #1-NixOS
Jun 26 17:10:51 xxx kernel: RIP: 0010:amdgpu_bo_vm_destroy+0x15/0x90 [amdgpu]",
        "Apr 04 14:49:13 gaming kernel: ------------[ cut here ]------------
Apr 04 14:49:13 gaming kernel: WARNING: CPU: 3 PID: 1309 at drivers/gpu/drm/ttm/ttm_bo.c:517 ttm_bo_release+0x2bf/0x310 [ttm]",
    ] {
        assert_eq!(first(text).as_deref(), Some("driver_fault"), "{text}\n-> {:?}", cats(text));
    }
}

/// The firmware loader's line about a GPU driver's firmware (NVIDIA's GSP firmware, amdgpu's,
/// i915's) is a driver not fully installed; the same line about a Wi-Fi card is nobody's GPU
/// problem. Real lines: NixOS/nixpkgs#454772, NixOS/nixpkgs#284403, clearlinux/distribution#821.
#[test]
fn a_gpu_driver_s_missing_firmware_is_a_driver_not_installed() {
    for text in [
        "nvidia 0000:00:1e.0: Direct firmware load for nvidia/565.57.01/gsp_tu10x.bin failed with error -2",
        "янв 28 04:01:12 localhost kernel: amdgpu 0000:03:00.0: Direct firmware load for amdgpu/psp_13_0_7_ta.bin failed with error -2",
        "[    0.659638] i915 0000:00:02.0: Direct firmware load for i915/kbl_dmc_ver1_04.bin failed with error -2",
    ] {
        assert_eq!(first(text).as_deref(), Some("driver_missing"), "{text}\n-> {:?}", cats(text));
    }
    let wifi = "iwlwifi 0000:00:14.3: Direct firmware load for iwlwifi-so-a0-gf-a0-72.ucode failed with error -2";
    assert!(cats(wifi).is_empty(), "{:?}", cats(wifi));
}

/// The thermal core's critical trip and the shutdown it orders (drivers/thermal/thermal_core.c,
/// kernel/reboot.c); nouveau's channel faults in their old and new forms
/// (drivers/gpu/drm/nouveau/nvkm/engine/fifo). Real lines: pyavitz/debian-image-builder#98 and
/// the Mesa commit of tests/explain-corpus/sealed-2026-11-28e/kernel-log.yaml; the new nouveau
/// form is its format with values.
#[test]
fn critical_temperature_shutdowns_and_nouveau_channel_faults_are_read() {
    for (text, cat) in [
        (" kernel:thermal thermal_zone0: gpu-thermal: critical temperature reached, shutting down", "thermal_power"),
        (" kernel:reboot: HARDWARE PROTECTION shutdown (Temperature too high)", "thermal_power"),
        ("nouveau E[ PFIFO][0000:01:00.0] read fault at 0x000a9e0000 [PTE] from GR/GPC0/PE_2 on channel 0x007f853000 [Sam3[17056]]", "driver_fault"),
        ("nouveau 0000:01:00.0: fifo: fault 00 [READ] at 0000000000000000 engine 00 [GR] client 0f [GPC0/PROP_0] reason 02 [PTE] on channel 3 [00ff8d3000 Xorg[1234]]", "driver_fault"),
    ] {
        assert_eq!(first(text).as_deref(), Some(cat), "{text}\n-> {:?}", cats(text));
    }
    // A protection shutdown for another reason is not the thermal one.
    let reg = " kernel:reboot: HARDWARE PROTECTION shutdown (Regulator failure)";
    assert!(
        !cats(reg).iter().any(|c| c == "thermal_power"),
        "{:?}",
        cats(reg)
    );
}
