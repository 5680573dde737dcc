//! The system, install and container families of `knowledge/messages/` (DKMS, nvidia-installer,
//! the kernel module's build checks, nvidia-persistenced, nvidia-smi, CDI, the device plugin):
//! real texts copied from public threads (each case names its thread), in the wordings and
//! wrappings people paste (older releases' wording, journald prefixes, Markdown quoting), with the
//! cause that must come first.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

/// (thread, text, category, signature that must come first)
const CASES: &[(&str, &str, &str, &str)] = &[
    // DKMS 2.x ended the sentence after "cannot be found." (dkms 3.0.10 names the two paths).
    ("https://github.com/M-Bab/linux-kernel-amdgpu-binaries/issues/6", "run-parts: executing /etc/kernel/header_postinst.d/dkms 4.11.1+ /boot/vmlinuz-4.11.1+\nError! Your kernel headers for kernel 4.11.1+ cannot be found.\nPlease install the linux-headers-4.11.1+ package,\nor use the --kernelsourcedir option to tell DKMS where it's located", "driver_missing", "kernel-headers-missing"),
    ("https://github.com/Mange/rtl8192eu-linux-driver/issues/114", "sudo dkms install 8192cu/1.11\n\nYour kernel headers for kernel 4.20.6-200.fc29.x86_64 cannot be found at\n/lib/modules/4.20.6-200.fc29.x86_64/build or /lib/modules/4.20.6-200.fc29.x86_64/source.", "driver_missing", "kernel-headers-missing"),
    // A stale DKMS entry stops `dkms status` (and the rebuild after a kernel update).
    ("https://github.com/Zibri/Realtek-rts5229-linux-driver/issues/17", "#dkms install -m rts5229 -v 1.07\nError! Could not locate dkms.conf file.\nFile: /var/lib/dkms/rts5229/1.07/source/dkms.conf does not exist.", "driver_missing", "dkms-conf-missing"),
    // nvidia-installer, wrapped at 80 columns in a journald log.
    ("https://github.com/kubernetes/kops/pull/4971", "Jul 23 11:03:09 ip-172-20-56-182 docker[1435]: ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most\nJul 23 11:03:09 ip-172-20-56-182 docker[1435]: frequently when this kernel module was built against the wrong or", "driver_missing", "installer-module-load"),
    // The older wording: "appears to already be loaded".
    ("https://github.com/ApolloAuto/apollo/issues/6308", "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon),", "configuration", "installer-driver-in-use"),
    ("https://github.com/mlc-ai/mlc-llm/issues/95", "ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in your kernel. ", "configuration", "installer-driver-in-use"),
    // conftest.sh's compiler check as releases before 470 print it ("Bailing out!").
    ("https://github.com/GoogleCloudPlatform/compute-gpu-installation/issues/15", "**Failed CC version check. Bailing out!**\nsimple running of the script throws: ", "configuration", "kernel-cc-mismatch"),
    ("https://github.com/clearlinux/distribution/issues/1835", "Compiler version check failed:\n\nThe major and minor number of the compiler used to\ncompile the kernel:\n\ngcc version 9.", "configuration", "kernel-cc-mismatch"),
    // nvidia-smi's own texts.
    ("https://github.com/NVIDIA/nvidia-docker/issues/933", "After a reboot of the server, the nvidia-smi has stopped working with the following error: \n`\"No devices were found\"`", "driver_fault", "smi-no-devices"),
    ("https://github.com/warmshao/FasterLivePortrait/issues/8", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\nPlease also try adding directory that contains libnvidia-ml.so to your system PATH.", "driver_missing", "smi-nvml-missing"),
    // CDI: the device the runtime asked for (here a UUID of the management spec) is in no spec.
    ("https://github.com/NVIDIA/nvidia-container-toolkit/issues/1239", "  Warning  Failed     10s (x2 over 10s)  kubelet            Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead", "container_no_gpu", "cdi-unresolvable"),
    ("https://github.com/warmshao/FasterLivePortrait/issues/116", "Emulate Docker CLI using podman. Create /etc/containers/nodocker to quiet msg.\nError: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "container_no_gpu", "cdi-unresolvable"),
    // Windows' loader through Python's OSError: the code in brackets is the same in every language.
    ("https://github.com/bmaltais/kohya_ss/issues/486", r#"OSError: [WinError 127] La procédure spécifiée est introuvable. Error loading "E:\SSD\SuperSD2.0\kohya\kohya_ss\venv\lib\site-packages\torch\lib\cudnn_adv_infer64_8.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-procedure"),
    ("https://github.com/guoyww/AnimateDiff/issues/374", r#"OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\Users\Newton\Documents\aistuff\AnimateDiff\venv\Lib\site-packages\torch\lib\torch_python.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-procedure"),
    ("https://github.com/666ghj/BettaFish/issues/428", r#"OSError: [WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "C:\Program Files\Python311\Lib\site-packages\torch\lib\c10.dll" or one of its dependencies."#, "library_path_conflict", "windows-dll-init"),
    ("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/320", "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed", "library_path_conflict", "windows-dll-init"),
];

#[test]
fn each_system_family_comes_back_with_its_cause() {
    let m = Matrix::embedded().unwrap();
    let mut bad = Vec::new();
    for (source, text, category, signature) in CASES {
        let v = explain_text(text, &m);
        let Some(first) = v.first() else {
            bad.push(format!("{source}: no match"));
            continue;
        };
        if first.category.as_str() != *category || first.code != *signature {
            bad.push(format!(
                "{source}: got {} ({}), want {signature} ({category})",
                first.code,
                first.category.as_str()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The families' words in ordinary text are not the message: each needs its emitter's whole
/// phrase, word-bounded.
#[test]
fn ordinary_lines_with_the_same_words_are_not_these_families() {
    let m = Matrix::embedded().unwrap();
    let ours = [
        "kernel-headers-missing",
        "dkms-conf-missing",
        "installer-module-load",
        "installer-driver-in-use",
        "kernel-cc-mismatch",
        "persistenced-devices",
        "smi-no-devices",
        "smi-nvml-missing",
        "cdi-unresolvable",
    ];
    for line in [
        "Installing kernel headers for 6.8.0-45-generic ... done",
        "dkms.conf updated; the module builds for every installed kernel",
        "Loading the kernel module nvidia took 1.2 s",
        "No devices were detected as busy; continuing",
        "The compiler version is gcc 12.2, the same as the kernel's",
        "Querying NVIDIA devices: 8 found",
        "CDI devices resolved: nvidia.com/gpu=all",
        "An NVIDIA kernel module upgrade is available",
    ] {
        let hit: Vec<String> = explain_text(line, &m)
            .iter()
            .filter(|x| ours.iter().any(|o| x.code == *o))
            .map(|x| x.code.to_string())
            .collect();
        assert!(hit.is_empty(), "{line:?} read as {hit:?}");
    }
}
