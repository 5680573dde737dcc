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

/// The DCGM-flagged subset.
pub const DEBUG_INJECTION: &[&str] = &[
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

pub fn probe(env: &dyn Fn(&str) -> Option<String>) -> BTreeMap<String, String> {
    RECORDED
        .iter()
        .filter_map(|k| env(k).map(|v| (k.to_string(), sanitize::clean_line(&v, 2000))))
        .collect()
}
