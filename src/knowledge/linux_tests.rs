use super::*;

#[test]
fn the_built_in_linux_knowledge_loads_with_every_family() {
    let k = knowledge().expect("knowledge/linux-messages.yaml");
    assert!(k.mined_formats > 300, "{}", k.mined_formats);
    for e in &k.entries {
        assert!(family(&e.family).is_some(), "{}: no family", e.format);
        assert!(!e.source.is_empty(), "{}: no source", e.format);
        assert!(e.anchor().is_some_and(|a| a.len() >= 4), "{}", e.format);
    }
}

#[test]
fn lines_built_from_the_mined_formats_are_their_family() {
    // Each mined format with its holes filled is recognised as its own family (or one more
    // specific of the same file).
    let k = knowledge().unwrap();
    for e in k
        .entries
        .iter()
        .filter(|e| !e.source[0].starts_with("LINUX-OLD"))
    {
        let line = format!("[ 12.345678] {}", e.pieces.join(" 7 "));
        let (m, f) = match_line(&line).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(f.event.id, e.family, "{line} read as {}", m.format);
    }
}

#[test]
fn real_lines_are_their_family() {
    for (line, id) in [
        ("[ 7510.129324] INFO: task gdscheck:509579 blocked for more than 120 seconds.", "linux_hung_task"),
        ("Apr 28 10:17:39 nixos kernel: BUG: kernel NULL pointer dereference, address: 0000000000000030", "linux_oops"),
        ("395.350871] BUG: unable to handle kernel NULL pointer dereference at 00000000000000b1", "linux_oops"),
        ("[ 395.351068] Oops: 0000 [#1] SMP NOPTI", "linux_oops"),
        ("Jun 26 08:48:30 robocatsorin kernel: [   15.726225] nvidia: disagrees about version of symbol i2c_get_adapter", "linux_module_symbol_version"),
        ("[95755.008691] nvidia_uvm: Unknown symbol radix_tree_preloads (err -2)", "linux_module_unknown_symbol"),
        ("[    8.008226] nvidia 0000:03:00.0: Refused to change power state, currently in D3", "linux_pci_power_state"),
        ("[939156.023420] pci 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible", "linux_pci_power_state"),
        ("[    2.819960] pci 0000:01:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x4 link at 0000:00:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)", "linux_pcie_bandwidth"),
        ("[  228.059194] pcieport 0000:00:00.0: AER: Multiple Corrected error received: 0000:00:00.0", "linux_pcie_aer"),
        ("[76747.169397] mce: CPU2: Core temperature above threshold, cpu clock throttled (total events = 2675)", "linux_cpu_thermal"),
        ("CPU3: Package temperature is above threshold, cpu clock is throttled (total events = 12)", "linux_cpu_thermal"),
        ("[  687.293876] python invoked oom-killer: gfp_mask=0x24280ca, order=0, oom_score_adj=0", "linux_oom_killer"),
    ] {
        let (_, f) = match_line(line).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(f.event.id, id, "{line}");
    }
}

#[test]
fn other_gpu_drivers_are_named_by_their_module_and_code() {
    assert!(names_gpu_module(
        "amdgpu 0000:03:00.0: Direct firmware load for amdgpu/psp_13_0_7_ta.bin failed with error -2"
    ));
    assert!(names_gpu_module(
        "nvidia 0000:65:00.0: Direct firmware load for nvidia/535.54.03/gsp_tu10x.bin failed with error -2"
    ));
    assert!(!names_gpu_module(
        "iwlwifi 0000:00:14.3: Direct firmware load for iwlwifi-so-a0-gf-a0-72.ucode failed with error -2"
    ));
    // "xe" is a word of its own, not a piece of one ("xen", "exe").
    assert!(!names_gpu_module(
        "xen: Direct firmware load for foo.exe failed with error -2"
    ));
    for yes in [
        "RIP: 0010:amdgpu_bo_vm_destroy+0x15/0x90 [amdgpu]",
        "WARNING: CPU: 3 PID: 1309 at drivers/gpu/drm/ttm/ttm_bo.c:517 ttm_bo_release+0x2bf/0x310 [ttm]",
        " intel_atomic_commit_tail+0x3d/0x60 [i915]",
        " nouveau_bo_move+0x1c0/0x5a0 [nouveau]",
    ] {
        assert!(names_gpu_code(yes), "{yes}");
    }
    for no in [
        "Modules linked in: amdgpu(E) i915 ttm drm_kms_helper",
        "RIP: 0010:btrfs_search_slot+0x1a2/0x940 [btrfs]",
        " drm_something_user_space_named [drmx]",
    ] {
        assert!(!names_gpu_code(no), "{no}");
    }
}

#[test]
fn only_the_driver_s_code_names_nvidia() {
    for yes in [
        "[ 7510.131288]  os_acquire_rwlock_read+0x35/0x50 [nvidia]",
        "desktop kernel:  nvkms_ioctl_from_kapi_try_pmlock+0x55/0xc0",
        "[  395.351681] RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]",
        "[  155.361087] UBSAN: array-index-out-of-bounds in /root/open-gpu-modules-host/kernel-open/nvidia-uvm/uvm_mmu.c:550:17",
    ] {
        assert!(names_nvidia_code(yes), "{yes}");
    }
    for no in [
        "[   33.916417] Modules linked in: cfg80211 nvidia_drm(PO) nvidia_modeset(PO) nvidia(PO) drm_kms_helper",
        "INFO: task nvidia-smi:4242 blocked for more than 120 seconds.",
        " ext4_file_write_iter+0x5e/0x140",
        "RIP: 0010:btrfs_search_slot+0x1a2/0x940 [btrfs]",
    ] {
        assert!(!names_nvidia_code(no), "{no}");
    }
    assert!(names_nvidia_module(
        "nvidia_uvm: Unknown symbol radix_tree_preloads (err -2)"
    ));
    assert!(!names_nvidia_module("vboxdrv: Unknown symbol foo (err -2)"));
    // GPUDirect RDMA's legacy peer-memory module is the GPU stack's; a module whose name only
    // starts alike is not.
    assert!(names_nvidia_module(
        "[76463.688316] nv_peer_mem: disagrees about version of symbol ib_register_peer_memory_client"
    ));
    assert!(!names_nvidia_module(
        "nv_peer_memx: Unknown symbol foo (err -2)"
    ));
    // The firmware loader's line names the device's driver first: the NVIDIA driver's GSP
    // firmware is the NVIDIA module's; the same path asked for by nouveau is nouveau's.
    let nvidia = "nvidia 0000:65:00.0: Direct firmware load for nvidia/535.54.03/gsp_tu10x.bin failed with error -2";
    let nouveau = "nouveau 0000:01:00.0: Direct firmware load for nvidia/ga102/gsp/gsp-535.113.01.bin failed with error -2";
    assert!(names_nvidia_module(nvidia) && !printed_by_nouveau(nvidia));
    assert!(printed_by_nouveau(nouveau));
    assert!(!names_nvidia_module(
        "iwlwifi 0000:00:14.3: Direct firmware load for iwlwifi-so-a0-gf-a0-72.ucode failed with error -2"
    ));
}
