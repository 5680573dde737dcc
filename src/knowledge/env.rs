//! What gpudoctor knows of the environment variables the probe records
//! ([`crate::probe::env::RECORDED`]).

/// The injection, debugger and profiler variables DCGM's software plugin warns about
/// (reference/anchors.md §1.2, DCGM nvvs/src/Software.cpp): the DCGM-flagged subset.
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
