use super::*;

/// Without the GPU's NVML index the fix has no per-GPU command (it used to print
/// `sudo nvidia-smi -r -i N`); with it, the commands name the GPU.
#[test]
fn per_gpu_commands_need_the_index() {
    for c in [
        Category::EccMemory,
        Category::SmokeFailure,
        Category::HardwareFault,
    ] {
        let (_, cmds) = fix_for(c, None);
        assert!(!cmds.is_empty(), "{c:?}");
        for cmd in &cmds {
            assert!(
                !cmd.contains(" -i ") && !cmd.contains("--gpu") && !cmd.ends_with(" N"),
                "{c:?}: {cmd}"
            );
        }
        let (_, cmds) = fix_for(c, Some(3));
        assert!(
            cmds.contains(&"sudo nvidia-smi -r -i 3".to_string()),
            "{c:?}: {cmds:?}"
        );
    }
}
