use super::*;

#[test]
fn kernel_log_commands_become_the_system_event_log() {
    for c in [
        "sudo dmesg | grep -E 'NVRM|Xid' | tail -20",
        "sudo dmesg -T | grep -E 'NVRM: Xid' | tail -5",
        "journalctl -k -b | grep NVRM",
    ] {
        let w = command(c).unwrap();
        assert!(w.starts_with("Get-WinEvent"), "{c} -> {w}");
        assert!(w.contains("nvlddmkm"), "{w}");
    }
}

#[test]
fn linux_admin_commands_become_windows_ones_or_go() {
    assert_eq!(command("sudo reboot").unwrap(), "shutdown /r /t 0");
    assert_eq!(
        command("sudo ubuntu-drivers install nvidia:580").unwrap(),
        format!("Start-Process '{DRIVER_DOWNLOAD}'")
    );
    assert_eq!(
        command("sudo nvidia-smi -r -i 3").unwrap(),
        "nvidia-smi -r -i 3"
    );
    assert_eq!(
        command("export CUDA_VISIBLE_DEVICES=0").unwrap(),
        "$env:CUDA_VISIBLE_DEVICES = \"0\""
    );
    assert!(command("sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'")
        .unwrap()
        .starts_with("nvidia-smi --query-gpu="));
    for gone in [
        "sudo systemctl enable --now nvidia-persistenced",
        "sudo nvidia-smi -pm 1",
        "sudo usermod -aG systemd-journal \"$USER\"",
        "echo $LD_LIBRARY_PATH",
        "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -v '/stubs' | paste -sd:)",
        "nvidia-smi -q | grep -i excluded",
        "sudo modprobe nvidia_uvm",
    ] {
        assert_eq!(command(gone), None, "{gone}");
    }
    // What is the same on both stays as it is.
    assert_eq!(
        command("gpudoctor recommend").unwrap(),
        "gpudoctor recommend"
    );
    assert_eq!(command("nvidia-smi -L").unwrap(), "nvidia-smi -L");
}

#[test]
fn words_name_windows_things_and_leave_longer_words_alone() {
    assert_eq!(
        words("Look at the kernel log, then reboot."),
        "Look at the System event log, then restart Windows."
    );
    assert_eq!(
        words("It was rebooted; libcuda.so.1 loads"),
        "It was rebooted; nvcuda.dll loads"
    );
    assert_eq!(
        words("drain it or reboot the node"),
        "drain it or restart the machine"
    );
}
