//! Codes: Windows NTSTATUS values ([MS-ERREF] §2.3.1), POSIX exit statuses (128 + signal), CUDA
//! runtime/driver errors (CUDA Runtime API `enum cudaError`, ../shared/reference/faults.md §7a),
//! NVML return codes (nvml.h `nvmlReturn_t`) and Xids (the fault catalog). A number that has
//! several readings gives each, most likely first: an exit status above 128 is read as a signal
//! first; small numbers as a CUDA error, then an Xid, an NVML code, a plain exit status.

use serde_json::json;

use super::Match;
use crate::faults::xid;
use crate::matrix::Matrix;
use crate::report::{Category, Severity};

struct Nt {
    code: u32,
    name: &'static str,
    meaning: &'static str,
    causes: &'static [&'static str],
    fix: &'static str,
}

const CHECK: &str = "gpudoctor check";

/// [MS-ERREF] §2.3.1; the fail-fast reading of 0xC0000409 from WinDbg output (faults.md §7c).
const NTSTATUS: &[Nt] = &[
    Nt { code: 0xC000_0409, name: "STATUS_STACK_BUFFER_OVERRUN", meaning: "a fail-fast abort in native code (__fastfail; subcode 7 is abort()), not usually a stack overflow: a C/C++ library inside the process gave up on purpose", causes: &["a CUDA/cuDNN mismatch: TensorFlow or PyTorch loaded a cuDNN, cuBLAS or CUDA runtime DLL it was not built for (several CUDA versions on PATH)", "out of GPU memory inside cuDNN or cuBLAS during training", "an unhandled C++ exception in a native extension (abort())", "TensorFlow after 2.10 on native Windows, which has no GPU support"], fix: "Check the CUDA, cuDNN and driver against the framework build (gpudoctor check), keep one CUDA version on PATH, lower the batch size to rule out GPU memory; on Windows use WSL2 for TensorFlow newer than 2.10" },
    Nt { code: 0xC000_0005, name: "STATUS_ACCESS_VIOLATION", meaning: "a segmentation fault in native code: a read or write of memory the process may not touch", causes: &["mismatched native libraries (CUDA, cuDNN, MSVC runtime) loaded into one process", "a bug in a native extension or driver", "two frameworks loading different CUDA runtimes in the same process"], fix: "Check the library versions (gpudoctor check), update the driver, and reproduce with a minimal script" },
    Nt { code: 0xC000_00FD, name: "STATUS_STACK_OVERFLOW", meaning: "a thread ran out of stack", causes: &["deep recursion (Python sys.setrecursionlimit raised too far, a recursive model definition)", "a native library with large stack frames on a small thread stack"], fix: "Remove the deep recursion or raise the thread's stack size" },
    Nt { code: 0xC000_001D, name: "STATUS_ILLEGAL_INSTRUCTION", meaning: "the CPU met an instruction it does not support", causes: &["a wheel built for AVX/AVX2 or newer on a CPU without it (TensorFlow wheels need AVX)", "a binary built for a newer CPU"], fix: "Install a build for this CPU, or build from source" },
    Nt { code: 0xC000_0017, name: "STATUS_NO_MEMORY", meaning: "host memory (or the page file) was exhausted", causes: &["too much data in RAM, too many data-loader workers", "a page file too small for the process"], fix: "Reduce host memory use or enlarge the page file" },
    Nt { code: 0xC000_0135, name: "STATUS_DLL_NOT_FOUND", meaning: "a DLL the program needs was not found", causes: &["cudart64_*.dll, cudnn64_*.dll or cublas64_*.dll missing from PATH", "the Microsoft Visual C++ redistributable not installed"], fix: "Install the CUDA/cuDNN versions the framework expects (or its pip wheels) and the VC++ redistributable" },
    Nt { code: 0xC000_0142, name: "STATUS_DLL_INIT_FAILED", meaning: "a DLL failed to initialise", causes: &["a conflicting DLL of another version loaded first", "exhausted desktop heap on Windows services"], fix: "Remove conflicting DLL directories from PATH" },
    Nt { code: 0xC000_0374, name: "STATUS_HEAP_CORRUPTION", meaning: "native code corrupted the heap", causes: &["mismatched native libraries or runtimes in one process", "a bug in a native extension"], fix: "Check the library versions (gpudoctor check) and reproduce with a minimal script" },
    Nt { code: 0xC000_013A, name: "STATUS_CONTROL_C_EXIT", meaning: "the process was stopped by Ctrl-C or its console closed", causes: &["Ctrl-C, or the console window closed"], fix: "Nothing is wrong with the GPU" },
    Nt { code: 0xC000_0094, name: "STATUS_INTEGER_DIVIDE_BY_ZERO", meaning: "an integer division by zero in native code", causes: &["a bug in a native extension"], fix: "Debug the native extension" },
    Nt { code: 0xC000_0139, name: "STATUS_ENTRYPOINT_NOT_FOUND", meaning: "a DLL lacks a function the program expects: a DLL of another version was loaded", causes: &["an older or newer cuDNN/CUDA DLL found first on PATH"], fix: "Put the DLL versions the framework was built with first on PATH" },
];

struct Cuda {
    num: u32,
    runtime: &'static str,
    driver: &'static str,
    text: &'static str,
    category: Category,
    causes: &'static [&'static str],
    fix: &'static str,
}

/// CUDA Runtime API `enum cudaError` and the driver API's CUresult (same numbers), as in
/// faults.md §7a.
const CUDA: &[Cuda] = &[
    Cuda { num: 1, runtime: "cudaErrorInvalidValue", driver: "CUDA_ERROR_INVALID_VALUE", text: "invalid argument", category: Category::ApplicationError, causes: &["a bad argument to a CUDA call (often an earlier error reported late)"], fix: "Rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing call" },
    Cuda { num: 2, runtime: "cudaErrorMemoryAllocation", driver: "CUDA_ERROR_OUT_OF_MEMORY", text: "out of memory", category: Category::GpuMemoryExhausted, causes: &["the job needs more GPU memory than is free", "another process holds GPU memory", "fragmentation of the framework's caching allocator"], fix: "Lower the batch size or model size; stop other processes on the GPU (gpudoctor check names them)" },
    Cuda { num: 3, runtime: "cudaErrorInitializationError", driver: "CUDA_ERROR_NOT_INITIALIZED", text: "initialization error", category: Category::DriverFault, causes: &["the driver could not initialise CUDA (driver problem, CUDA used before fork in a child process)"], fix: "Run gpudoctor check; with multiprocessing, use the 'spawn' start method" },
    Cuda { num: 34, runtime: "cudaErrorStubLibrary", driver: "CUDA_ERROR_STUB_LIBRARY", text: "CUDA driver is a stub library", category: Category::LibraryPathConflict, causes: &["a CUDA toolkit's lib64/stubs directory is on LD_LIBRARY_PATH ahead of the real driver"], fix: "Remove the stubs directory from LD_LIBRARY_PATH" },
    Cuda { num: 35, runtime: "cudaErrorInsufficientDriver", driver: "", text: "CUDA driver version is insufficient for CUDA runtime version", category: Category::DriverTooOld, causes: &["the NVIDIA driver is older than the CUDA runtime the program uses"], fix: "Install a newer driver, or a framework build for an older CUDA (gpudoctor recommend)" },
    Cuda { num: 46, runtime: "cudaErrorDevicesUnavailable", driver: "CUDA_ERROR_DEVICE_UNAVAILABLE", text: "CUDA-capable device(s) is/are busy or unavailable", category: Category::Configuration, causes: &["compute mode EXCLUSIVE_PROCESS or PROHIBITED", "another process or container holds the GPU", "a cgroup denies access to the device"], fix: "Set the default compute mode (nvidia-smi -c DEFAULT) or free the GPU" },
    Cuda { num: 100, runtime: "cudaErrorNoDevice", driver: "CUDA_ERROR_NO_DEVICE", text: "no CUDA-capable device is detected", category: Category::Configuration, causes: &["CUDA_VISIBLE_DEVICES empty or wrong", "a container started without GPU access", "MIG enabled without instances", "no driver / no device nodes"], fix: "Run gpudoctor check" },
    Cuda { num: 101, runtime: "cudaErrorInvalidDevice", driver: "CUDA_ERROR_INVALID_DEVICE", text: "invalid device ordinal", category: Category::Configuration, causes: &["a device index beyond the visible GPUs (CUDA_VISIBLE_DEVICES renumbers from 0)"], fix: "Use an index below the number of visible GPUs" },
    Cuda { num: 209, runtime: "cudaErrorNoKernelImageForDevice", driver: "CUDA_ERROR_NO_BINARY_FOR_GPU", text: "no kernel image is available for execution on the device", category: Category::ArchUnsupported, causes: &["the binary has no cubin or PTX for this GPU's architecture (a new GPU with an old build, or an old GPU dropped by a new build)"], fix: "Install a build that includes the GPU's compute capability (gpudoctor recommend)" },
    Cuda { num: 214, runtime: "cudaErrorECCUncorrectable", driver: "CUDA_ERROR_ECC_UNCORRECTABLE", text: "uncorrectable ECC error encountered", category: Category::EccMemory, causes: &["a GPU memory error (see Xid 48/94/95 and the row-remap status)"], fix: "Drain the GPU and reset it; run gpudoctor check for the ECC and remap counters" },
    Cuda { num: 220, runtime: "cudaErrorNvlinkUncorrectable", driver: "CUDA_ERROR_NVLINK_UNCORRECTABLE", text: "uncorrectable NVLink error detected during the execution", category: Category::HardwareFault, causes: &["an NVLink hardware error (Xid 74, 144-150)"], fix: "Reset the GPU; check nvidia-smi nvlink -e" },
    Cuda { num: 222, runtime: "cudaErrorUnsupportedPtxVersion", driver: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", text: "the provided PTX was compiled with an unsupported toolchain.", category: Category::DriverTooOld, causes: &["PTX from a CUDA toolkit newer than the driver's JIT compiler (minor-version compatibility does not cover PTX)"], fix: "Install a driver at least as new as the toolkit's GA driver, or a build with cubins for this GPU" },
    Cuda { num: 226, runtime: "cudaErrorContained", driver: "CUDA_ERROR_CONTAINED", text: "", category: Category::HardwareFault, causes: &["the GPU contained an error (a bad NVLink peer access or a hardware error); the process must restart"], fix: "Restart the process; check the kernel log for Xid 94" },
    Cuda { num: 700, runtime: "cudaErrorIllegalAddress", driver: "CUDA_ERROR_ILLEGAL_ADDRESS", text: "an illegal memory access was encountered", category: Category::ApplicationError, causes: &["an out-of-bounds access in a kernel (usually an application or library bug); correlate with Xid 13/31"], fix: "Rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer; the process must restart" },
    Cuda { num: 702, runtime: "cudaErrorLaunchTimeout", driver: "CUDA_ERROR_LAUNCH_TIMEOUT", text: "the launch timed out and was terminated", category: Category::Configuration, causes: &["a kernel ran longer than the display watchdog allows (GPU driving a display)"], fix: "Use a GPU without a display, or shorter kernels" },
    Cuda { num: 710, runtime: "cudaErrorAssert", driver: "CUDA_ERROR_ASSERT", text: "device-side assert triggered", category: Category::ApplicationError, causes: &["an assertion in a kernel, most often an index out of range (a label >= number of classes, an embedding index too large)"], fix: "Rerun on the CPU or with CUDA_LAUNCH_BLOCKING=1 to see the failing index" },
    Cuda { num: 719, runtime: "cudaErrorLaunchFailure", driver: "CUDA_ERROR_LAUNCH_FAILED", text: "unspecified launch failure", category: Category::ApplicationError, causes: &["a device exception in a kernel (application bug)", "a hardware fault: check the kernel log for Xids"], fix: "Rerun with CUDA_LAUNCH_BLOCKING=1; if it happens across programs, run gpudoctor check" },
    Cuda { num: 802, runtime: "cudaErrorSystemNotReady", driver: "CUDA_ERROR_SYSTEM_NOT_READY", text: "system not yet initialized", category: Category::FabricManager, causes: &["on NVSwitch systems (HGX/DGX A100, H100, H200, B200), nvidia-fabricmanager is not running or not at the driver's version"], fix: "Install and start nvidia-fabricmanager of the driver's exact version" },
    Cuda { num: 803, runtime: "cudaErrorSystemDriverMismatch", driver: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", text: "system has unsupported display driver / cuda driver combination", category: Category::DriverLibraryMismatch, causes: &["the kernel module and the user-mode libcuda are different versions (driver upgrade without reboot, or a cuda-compat libcuda on an unsupported branch)"], fix: "Reboot after a driver upgrade; remove cuda-compat from LD_LIBRARY_PATH" },
    Cuda { num: 804, runtime: "cudaErrorCompatNotSupportedOnDevice", driver: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", text: "forward compatibility was attempted on non supported HW", category: Category::DriverLibraryMismatch, causes: &["CUDA forward-compatibility libraries (cuda-compat, often inside a container) used on a GPU that does not support them (GeForce, most workstation GPUs)"], fix: "Remove the compat libraries from the library path and install a driver new enough for the container's CUDA" },
    Cuda { num: 999, runtime: "cudaErrorUnknown", driver: "CUDA_ERROR_UNKNOWN", text: "unknown error", category: Category::DriverFault, causes: &["nvidia_uvm not loaded or broken (often after suspend/resume)", "a GPU that fell off the bus"], fix: "sudo modprobe nvidia_uvm (or reload it); check the kernel log for Xid 79" },
];

/// nvml.h nvmlReturn_t.
const NVML: &[(u32, &str, &str)] = &[
    (1, "NVML_ERROR_UNINITIALIZED", "NVML was not initialised first"),
    (2, "NVML_ERROR_INVALID_ARGUMENT", "an invalid argument"),
    (3, "NVML_ERROR_NOT_SUPPORTED", "the GPU does not support the query"),
    (4, "NVML_ERROR_NO_PERMISSION", "no permission for the operation (often /dev/nvidia* access)"),
    (5, "NVML_ERROR_ALREADY_INITIALIZED", "already initialised (deprecated)"),
    (6, "NVML_ERROR_NOT_FOUND", "the object was not found"),
    (7, "NVML_ERROR_INSUFFICIENT_SIZE", "a buffer too small"),
    (8, "NVML_ERROR_INSUFFICIENT_POWER", "the GPU's power cables are not connected properly"),
    (9, "NVML_ERROR_DRIVER_NOT_LOADED", "the NVIDIA kernel driver is not loaded (nvidia-smi exits 9: 'couldn't communicate with the NVIDIA driver')"),
    (10, "NVML_ERROR_TIMEOUT", "the query timed out"),
    (11, "NVML_ERROR_IRQ_ISSUE", "the kernel detected an interrupt problem with the GPU"),
    (12, "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML could not find a library it needs"),
    (13, "NVML_ERROR_FUNCTION_NOT_FOUND", "a function is missing from this NVML (an older driver)"),
    (14, "NVML_ERROR_CORRUPTED_INFOROM", "the GPU's InfoROM is corrupt"),
    (15, "NVML_ERROR_GPU_IS_LOST", "the GPU has fallen off the bus or is otherwise inaccessible"),
    (16, "NVML_ERROR_RESET_REQUIRED", "the GPU needs a reset before it can be used again"),
    (17, "NVML_ERROR_OPERATING_SYSTEM", "the operating system blocked the request"),
    (18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "the driver's libraries and the loaded kernel module differ ('Driver/library version mismatch'; nvidia-smi exits 18)"),
    (19, "NVML_ERROR_IN_USE", "the GPU is in use by another process"),
    (20, "NVML_ERROR_MEMORY", "insufficient memory"),
    (21, "NVML_ERROR_NO_DATA", "no data"),
    (22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "ECC is not supported with vGPU"),
    (23, "NVML_ERROR_INSUFFICIENT_RESOURCES", "insufficient resources"),
    (999, "NVML_ERROR_UNKNOWN", "an unknown error"),
];

fn nvml_category(num: u32) -> Category {
    match num {
        9 | 12 => Category::DriverMissing,
        15 | 16 | 8 | 11 | 14 => Category::HardwareFault,
        18 => Category::DriverLibraryMismatch,
        4 | 19 => Category::Configuration,
        _ => Category::DriverFault,
    }
}

/// Linux signal numbers (x86-64) with what they usually mean for a training job.
const SIGNALS: &[(u32, &str, &str, &[&str])] = &[
    (1, "SIGHUP", "the terminal or session ended", &["the SSH session or terminal closed; use nohup, tmux or a scheduler"]),
    (2, "SIGINT", "interrupted (Ctrl-C)", &["Ctrl-C"]),
    (4, "SIGILL", "an illegal CPU instruction", &["a binary built for a newer CPU (AVX-512, AVX2)"]),
    (6, "SIGABRT", "the process aborted itself", &["an uncaught C++ exception or a failed assertion in native code", "a library that aborts when a companion library is missing (cuDNN without libcudnn_graph / libcudnn_ops_infer)", "NCCL's watchdog aborting a hung collective"]),
    (7, "SIGBUS", "a bus error on memory access", &["shared memory (/dev/shm) too small for DataLoader workers in a container (docker --shm-size or --ipc=host)", "a memory-mapped file truncated under the process"]),
    (8, "SIGFPE", "an arithmetic exception", &["an integer division by zero in native code"]),
    (9, "SIGKILL", "killed unconditionally", &["the kernel's OOM killer or the container's memory limit (look for 'Killed process' in dmesg, OOMKilled in Kubernetes)", "a scheduler killing the job (time or memory limit)"]),
    (11, "SIGSEGV", "a segmentation fault in native code", &["mismatched native libraries (CUDA, cuDNN, framework builds) in one process", "a bug in a native extension or the driver"]),
    (13, "SIGPIPE", "wrote to a closed pipe", &["the reader of its output went away"]),
    (15, "SIGTERM", "asked to terminate", &["the scheduler ended the job (Slurm time limit, Kubernetes eviction or preemption)", "a shutdown"]),
];

/// A signal's name ("SIGKILL"), when gpudoctor knows it.
pub fn signal_name(sig: u32) -> Option<&'static str> {
    SIGNALS.iter().find(|(n, ..)| *n == sig).map(|x| x.1)
}

fn signal_match(sig: u32, as_exit: Option<i64>, conf: &'static str) -> Option<Match> {
    let (_, name, meaning, causes) = SIGNALS.iter().find(|(n, ..)| *n == sig)?;
    let (kind, code, what) = match as_exit {
        Some(e) if e < 0 => ("signal", json!(e), format!("the process was killed by signal {sig} ({name}): {meaning} (a negative return code is how Python's subprocess reports it)")),
        Some(e) => ("exit_code", json!(e), format!("exit status {e} = 128 + {sig}: the process was killed by signal {name} — {meaning}")),
        None => ("signal", json!(name), format!("signal {sig} ({name}): {meaning}")),
    };
    let category = match sig {
        9 => Category::HostMemoryExhausted,
        _ => Category::ApplicationError,
    };
    let mut m = Match::new(kind, code, *name, category, what).causes(causes);
    m.confidence = conf;
    let fix: (&str, &[&str]) = match sig {
        9 => ("Look for the OOM killer, then lower host memory use (fewer DataLoader workers, smaller prefetch) or raise the memory limit:", &["sudo dmesg -T | grep -iE 'killed process|out of memory'", "kubectl describe pod <pod> | grep -i oomkilled"]),
        7 => ("Give the container more shared memory:", &["docker run --shm-size=16g ...   # or --ipc=host"]),
        6 | 11 => ("Check the native libraries against the framework build, and read the lines before the crash:", &[CHECK, "gpudoctor explain --log <log file>"]),
        15 => ("Check the scheduler's limits (time, memory, preemption).", &[]),
        _ => ("", &[]),
    };
    m = m.fix(fix.0, fix.1);
    m.severity = if sig == 2 || sig == 13 {
        Severity::Info
    } else {
        Severity::Error
    };
    if sig == 9 {
        m.meaning
            .push_str(". 137 is most often the out-of-memory killer: host RAM, not GPU memory");
    }
    Some(m)
}

fn nt_match(u: u32, shown: serde_json::Value, conf: &'static str) -> Match {
    let forms = format!("0x{u:08X} = {u} = {}", u as i32);
    match NTSTATUS.iter().find(|n| n.code == u) {
        Some(n) => {
            let mut m = Match::new(
                "ntstatus",
                shown,
                n.name,
                Category::WindowsCrashCode,
                format!("{forms}: {}", n.meaning),
            )
            .causes(n.causes)
            .fix(n.fix, &[CHECK]);
            m.confidence = conf;
            m
        }
        None => {
            let mut m = Match::new(
                "ntstatus",
                shown,
                "NTSTATUS",
                Category::WindowsCrashCode,
                format!(
                    "{forms}: a Windows NTSTATUS {} code gpudoctor does not know by name",
                    if u >= 0xC000_0000 { "error" } else { "warning" }
                ),
            )
            .fix(
                "Look the code up in Microsoft's NTSTATUS list ([MS-ERREF] 2.3.1).",
                &[],
            );
            m.confidence = "low";
            m
        }
    }
}

fn cuda_match(c: &Cuda, conf: &'static str) -> Match {
    let name = if c.driver.is_empty() {
        c.runtime.to_string()
    } else {
        format!("{} / {}", c.runtime, c.driver)
    };
    let meaning = if c.text.is_empty() {
        format!("CUDA error {}", c.num)
    } else {
        format!("CUDA error {}: \"{}\"", c.num, c.text)
    };
    let mut m = Match::new("cuda_error", json!(c.num), name, c.category, meaning)
        .causes(c.causes)
        .fix(c.fix, &[CHECK]);
    m.confidence = conf;
    m.severity = match c.category {
        Category::ApplicationError => Severity::Warning,
        _ => Severity::Error,
    };
    m
}

fn nvml_match(num: u32, conf: &'static str) -> Option<Match> {
    let (_, name, meaning) = NVML.iter().find(|(n, ..)| *n == num)?;
    let mut m = Match::new(
        "nvml_error",
        json!(num),
        *name,
        nvml_category(num),
        format!("NVML return code {num}: {meaning}"),
    )
    .fix(
        "Run gpudoctor check for the driver and GPU state.",
        &[CHECK],
    );
    m.confidence = conf;
    Some(m)
}

pub fn xid_match(x: u32, conf: &'static str) -> Option<Match> {
    let i = xid::lookup(x)?;
    let mut m = Match::new(
        "xid",
        json!(x),
        format!("Xid {x} {}", i.name),
        i.category,
        format!("Xid {x}: {}", i.meaning),
    )
    .fix(
        format!("{}.", capital(i.action)),
        &["sudo dmesg -T | grep -E 'NVRM: Xid'", CHECK],
    );
    m.confidence = conf;
    m.severity = i.level.severity();
    Some(m)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn exit_match(n: i64, conf: &'static str) -> Option<Match> {
    let (name, meaning): (&str, String) = match n {
        0 => ("success", "exit status 0: the process succeeded".into()),
        1 => (
            "general error",
            "exit status 1: the program reported a failure (a Python exception ends this way)"
                .into(),
        ),
        2 => (
            "usage error",
            "exit status 2: bad command-line usage (also Python's status for a missing script)"
                .into(),
        ),
        126 => (
            "not executable",
            "exit status 126: the command was found but could not be executed".into(),
        ),
        127 => (
            "command not found",
            "exit status 127: the command was not found".into(),
        ),
        3..=125 | 128..=255 => (
            "exit status",
            format!("exit status {n}: a program-specific failure code"),
        ),
        _ => return None,
    };
    let mut m = Match::new(
        "exit_code",
        json!(n),
        name,
        Category::ApplicationError,
        meaning,
    )
    .fix(
        "Read the program's last messages (gpudoctor explain --log <log>).",
        &[],
    );
    m.confidence = conf;
    m.severity = Severity::Info;
    Some(m)
}

/// Every reading of a number, most likely first.
pub fn readings(n: i64) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    // Windows: negative int32 or unsigned >= 0x80000000.
    if (i64::from(i32::MIN)..=-65).contains(&n) || (0x8000_0000..=0xFFFF_FFFF).contains(&n) {
        let u = n as i32 as u32;
        let u = if n > 0 { n as u32 } else { u };
        out.push(nt_match(u, json!(n), "high"));
        return out;
    }
    if (-64..=-1).contains(&n) {
        if let Some(m) = signal_match((-n) as u32, Some(n), "high") {
            out.push(m);
        }
        return out;
    }
    if (129..=192).contains(&n) {
        if let Some(m) = signal_match((n - 128) as u32, Some(n), "high") {
            out.push(m);
        }
    }
    let Ok(u) = u32::try_from(n) else { return out };
    if let Some(c) = CUDA.iter().find(|c| c.num == u) {
        out.push(cuda_match(c, "medium"));
    }
    if let Some(m) = xid_match(u, "low") {
        out.push(m);
    }
    if let Some(m) = nvml_match(u, "low") {
        out.push(m);
    }
    if out.is_empty() || (n <= 255 && !(129..=192).contains(&n)) {
        if let Some(m) = exit_match(n, "low") {
            out.push(m);
        }
    }
    // 126-128 are the shell's own statuses (not executable, not found, invalid exit): first.
    if (126..=128).contains(&n) {
        if let Some(i) = out.iter().position(|m| m.kind == "exit_code") {
            let e = out.remove(i);
            out.insert(0, e);
        }
    }
    // With one reading there is no doubt; with several, the first is likely and the rest possible.
    let many = out.len() > 1;
    for (i, m) in out.iter_mut().enumerate() {
        m.confidence = match (many, i) {
            (false, _) => "high",
            (true, 0) => {
                if m.confidence == "high" {
                    "high"
                } else {
                    "medium"
                }
            }
            _ => "low",
        };
    }
    out
}

/// The input as a code, when it is one: a number in any form, or a code's name.
pub fn parse(input: &str, _m: &Matrix) -> Option<Vec<Match>> {
    let t = input.trim();
    let t = t
        .trim_start_matches("exit code")
        .trim_start_matches("exit status")
        .trim()
        .trim_matches(|c| c == '(' || c == ')')
        .trim();
    // "-1073740791 (0xC0000409)": the first form is enough.
    let first = t.split_whitespace().next().unwrap_or("");
    let lower = t.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("xid") {
        let n: u32 = rest.trim().trim_start_matches(':').trim().parse().ok()?;
        return Some(xid_match(n, "high").into_iter().collect());
    }
    if let Some(x) = SIGNALS.iter().find(|(_, n, ..)| n.eq_ignore_ascii_case(t)) {
        return Some(signal_match(x.0, None, "high").into_iter().collect());
    }
    if let Some(c) = CUDA.iter().find(|c| {
        c.runtime.eq_ignore_ascii_case(t)
            || (!c.driver.is_empty() && c.driver.eq_ignore_ascii_case(t))
    }) {
        return Some(vec![cuda_match(c, "high")]);
    }
    if let Some((n, ..)) = NVML
        .iter()
        .find(|(_, name, _)| name.eq_ignore_ascii_case(t))
    {
        return Some(nvml_match(*n, "high").into_iter().collect());
    }
    if let Some(n) = NTSTATUS.iter().find(|n| {
        n.name.eq_ignore_ascii_case(t)
            || n.name.trim_start_matches("STATUS_").eq_ignore_ascii_case(t)
    }) {
        return Some(vec![nt_match(n.code, json!(n.name), "high")]);
    }
    let first_clean = first.trim_matches(|c| c == '(' || c == ')' || c == ',');
    if t.split_whitespace().count() > 2 {
        return None;
    }
    if let Some(h) = first_clean
        .strip_prefix("0x")
        .or_else(|| first_clean.strip_prefix("0X"))
    {
        let v = u64::from_str_radix(h, 16).ok()?;
        if v <= 0xFFFF_FFFF {
            return Some(
                readings(v as i64)
                    .into_iter()
                    .map(|mut m| {
                        m.code = json!(first_clean);
                        m
                    })
                    .collect(),
            );
        }
        return None;
    }
    if first_clean.len() == 8
        && first_clean.bytes().all(|b| b.is_ascii_hexdigit())
        && !first_clean.bytes().all(|b| b.is_ascii_digit())
    {
        let v = u32::from_str_radix(first_clean, 16).ok()?;
        return Some(vec![nt_match(v, json!(first_clean), "high")]);
    }
    let n: i64 = first_clean.parse().ok()?;
    let v = readings(n);
    (!v.is_empty()).then_some(v)
}

/// The CUDA error whose message text a line contains ("no kernel image is available…").
pub fn cuda_by_text(line: &str) -> Option<Match> {
    let c = CUDA.iter().find(|c| {
        !c.text.is_empty() && c.text.len() > 12 && line.contains(c.text.trim_end_matches('.'))
    })?;
    Some(cuda_match(c, "high"))
}

#[cfg(test)]
#[path = "codes_tests.rs"]
mod tests;
