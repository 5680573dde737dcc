//! Environment variables that change how CUDA and the frameworks behave.

use std::collections::BTreeMap;

use crate::sanitize;

/// Variables recorded in the snapshot, when set.
pub const RECORDED: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "CUDA_DEVICE_ORDER",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    "XLA_FLAGS",
    "JAX_PLATFORMS",
    "JAX_SKIP_CUDA_CONSTRAINTS_CHECK",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "CUDA_CACHE_DISABLE",
    "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "NCCL_IB_DISABLE",
    // The injection, debugger and profiler variables DCGM's software plugin warns about
    // (reference/anchors.md §1.2, DCGM nvvs/src/Software.cpp).
    "NSIGHT_CUDA_DEBUGGER",
    "CUDA_INJECTION32_PATH",
    "CUDA_INJECTION64_PATH",
    "CUDA_AUTO_BOOST",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_COREDUMP_FILE",
    "CUDA_DEVICE_WAITS_ON_EXCEPTION",
    "CUDA_PROFILE",
    "COMPUTE_PROFILE",
    "OPENCL_PROFILE",
];

pub use crate::knowledge::env::DEBUG_INJECTION;

pub fn probe(env: &dyn Fn(&str) -> Option<String>) -> BTreeMap<String, String> {
    RECORDED
        .iter()
        .filter_map(|k| {
            let v = env(k)?;
            let v = if *k == "LD_LIBRARY_PATH" {
                without_cargo_paths(&v, env)?
            } else {
                v
            };
            Some((k.to_string(), sanitize::clean_line(&v, 2000)))
        })
        .collect()
}

/// LD_LIBRARY_PATH without the entries `cargo run` / `cargo test` add for the program they start
/// (its target directory, `target/<profile>/deps`, and the Rust toolchain's `lib`): those are
/// cargo's, not a GPU setting of the user's. None when nothing of the user's is left. Only
/// under cargo (it sets CARGO); anywhere else the variable is reported as it is.
pub fn without_cargo_paths(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if env("CARGO").is_none() {
        return Some(value.to_string());
    }
    let roots: Vec<String> = [
        env("CARGO_TARGET_DIR"),
        env("CARGO_MANIFEST_DIR").map(|d| format!("{}/target", d.trim_end_matches('/'))),
        env("RUSTUP_HOME").map(|d| format!("{}/toolchains", d.trim_end_matches('/'))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let cargos = |p: &str| {
        let p = p.trim_end_matches('/');
        roots
            .iter()
            .any(|r| p == r || p.starts_with(&format!("{r}/")))
            || p.contains("/.rustup/toolchains/")
            || ["/target/debug", "/target/release"]
                .iter()
                .any(|t| p.ends_with(t) || p.contains(&format!("{t}/")))
    };
    let kept: Vec<&str> = value
        .split(':')
        .filter(|p| !p.is_empty() && !cargos(p))
        .collect();
    if kept.is_empty() {
        None
    } else {
        Some(kept.join(":"))
    }
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
