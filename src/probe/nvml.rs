//! NVML: initialisation (every failure mapped to what it means), the driver and CUDA versions
//! it reports, and the GPUs. Old drivers lack newer symbols: memory info v2 exists only from
//! 510.39 and the v3 process list only from R510, so both fall back to the older calls
//! (reference/rust-crates.md §2).

use nvml_wrapper::enum_wrappers::device::{Clock, ComputeMode, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use super::nvml_health::{health, mark, Progress};
use crate::sanitize;
use crate::snapshot::{Clocks, Gpu, GpuMemory, GpuProcess, ModePair, NvmlInfo, PcieLink, Probed};

/// What NVML said at init and about each GPU (the answer `gpudoctor __probe-nvml` prints).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NvmlReport {
    pub info: Probed<NvmlInfo>,
    pub gpus: Probed<Vec<Gpu>>,
}

/// Opens NVML. On Windows a DCH driver puts `nvml.dll` in System32, which the DLL search finds;
/// a "standard" (pre-DCH) install puts it only in `%ProgramW6432%\NVIDIA Corporation\NVSMI`
/// (NVML API Reference, https://docs.nvidia.com/deploy/nvml-api/nvml-api-reference.html), tried
/// when System32 has none.
pub fn open() -> Result<Nvml, NvmlError> {
    let first = Nvml::init();
    if cfg!(windows) {
        if let Err(NvmlError::LibloadingError(_)) = &first {
            let pf = std::env::var_os("ProgramW6432")
                .or_else(|| std::env::var_os("ProgramFiles"))
                .unwrap_or_else(|| std::ffi::OsString::from(r"C:\Program Files"));
            let nvsmi = std::path::Path::new(&pf)
                .join("NVIDIA Corporation")
                .join("NVSMI")
                .join("nvml.dll");
            if nvsmi.is_file() {
                return Nvml::builder().lib_path(nvsmi.as_os_str()).init();
            }
        }
    }
    first
}

/// Maps an init error to a code and a sentence that says what to do.
pub fn init_error(e: &NvmlError) -> (bool, &'static str, String) {
    // (absent?, code, message)
    match e {
        NvmlError::LibloadingError(le) => {
            let mut detail = le.to_string();
            if let Some(src) = std::error::Error::source(le) {
                detail = format!("{detail}: {src}");
            }
            (
                true,
                "nvml_library_missing",
                format!(
                    "the NVML library {} could not be loaded ({}); it is installed with the NVIDIA driver",
                    super::NVML_LIB,
                    sanitize::clean_line(&detail, 300)
                ),
            )
        }
        NvmlError::DriverNotLoaded => (
            false,
            "driver_not_loaded",
            "NVML is installed but the NVIDIA kernel driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED)".to_string(),
        ),
        NvmlError::LibRmVersionMismatch => (
            false,
            "lib_rm_version_mismatch",
            "NVML and the loaded kernel module are different driver versions (NVML_ERROR_LIB_RM_VERSION_MISMATCH: Driver/library version mismatch)".to_string(),
        ),
        NvmlError::NoPermission => (
            false,
            "no_permission",
            if cfg!(windows) {
                "NVML was denied access to the GPUs (NVML_ERROR_NO_PERMISSION)".to_string()
            } else {
                "NVML was denied access to the GPUs (NVML_ERROR_NO_PERMISSION): check the permissions of /dev/nvidia*".to_string()
            },
        ),
        NvmlError::LibraryNotFound => (
            true,
            "nvml_library_missing",
            "NVML could not find a library it needs (NVML_ERROR_LIBRARY_NOT_FOUND)".to_string(),
        ),
        NvmlError::GpuLost => (
            false,
            "gpu_lost",
            "a GPU has fallen off the bus (NVML_ERROR_GPU_IS_LOST)".to_string(),
        ),
        other => (
            false,
            "nvml_error",
            format!("NVML initialisation failed: {}", sanitize::clean_line(&other.to_string(), 300)),
        ),
    }
}

/// Set to make the NVML probe block forever inside "nvmlInit_v2", as a wedged driver does; only
/// the tests use it, to prove that a hung NVML call becomes a `probe.timeout` finding naming the
/// call while the rest of the report still prints.
pub const TEST_HANG_VAR: &str = "GPUDOCTOR_TEST_HANG_NVML";

/// More GPUs than this in one node is a driver's nonsense count (the largest NVSwitch systems
/// have 8 to 16; NVML enumerates at most 64 devices): only this many are probed.
pub const MAX_GPUS: u32 = 64;

/// How a GPU whose handle NVML would not give is named.
pub const HANDLE_FAILED: &str = Gpu::HANDLE_FAILED;

/// `deep`: also validate each GPU's InfoROM (about 70 ms a GPU on an H100).
pub fn probe(progress: Progress, deep: bool) -> NvmlReport {
    mark(&progress, "nvmlInit_v2");
    if std::env::var_os(TEST_HANG_VAR).is_some() {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    let nvml = match open() {
        Ok(n) => n,
        Err(e) => {
            let (absent, code, msg) = init_error(&e);
            let info = if absent {
                Probed::absent_code(code, msg.clone())
            } else {
                Probed::failed_code(code, msg.clone())
            };
            let gpus = Probed::absent_code(code, format!("no GPU list: {msg}"));
            return NvmlReport { info, gpus };
        }
    };
    mark(&progress, "nvmlDeviceGetCount");
    let count = nvml.device_count();
    let info = NvmlInfo {
        driver_version: nvml
            .sys_driver_version()
            .ok()
            .map(|s| sanitize::clean_line(&s, 40)),
        cuda_driver_version: nvml.sys_cuda_driver_version().ok(),
        nvml_version: nvml
            .sys_nvml_version()
            .ok()
            .map(|s| sanitize::clean_line(&s, 40)),
        device_count: count.as_ref().ok().copied(),
    };
    let gpus = match count {
        Ok(n) if n > MAX_GPUS => Probed::failed_code(
            "nvml_error",
            format!(
                "nvmlDeviceGetCount said {n} GPUs, more than any node has (at most {MAX_GPUS} are probed): the driver's answer is not to be trusted; reload the driver or reboot"
            ),
        ),
        Ok(n) => Probed::found((0..n).map(|i| gpu(&nvml, i, &progress, deep)).collect()),
        Err(e) => {
            let code = if matches!(e, NvmlError::GpuLost) {
                "gpu_lost"
            } else {
                "nvml_error"
            };
            Probed::failed_code(
                code,
                format!(
                    "nvmlDeviceGetCount failed: {}",
                    sanitize::clean_line(&e.to_string(), 200)
                ),
            )
        }
    };
    NvmlReport {
        info: Probed::found(info),
        gpus,
    }
}

fn p<T>(r: Result<T, NvmlError>) -> Probed<T> {
    match r {
        Ok(v) => Probed::found(v),
        Err(NvmlError::NotSupported) => {
            Probed::absent_code("not_supported", "not supported on this GPU")
        }
        Err(NvmlError::FailedToLoadSymbol(s)) => Probed::absent_code(
            "old_driver",
            format!("this driver's NVML lacks {}", sanitize::clean_line(&s, 120)),
        ),
        Err(NvmlError::NoPermission) => Probed::failed_code("no_permission", "no permission"),
        Err(NvmlError::GpuLost) => {
            Probed::failed_code("gpu_lost", "the GPU has fallen off the bus")
        }
        Err(NvmlError::ResetRequired) => {
            Probed::failed_code("reset_required", "the GPU needs a reset")
        }
        Err(e) => Probed::failed(sanitize::clean_line(&e.to_string(), 200)),
    }
}

fn gpu(nvml: &Nvml, index: u32, progress: &Progress, deep: bool) -> Gpu {
    mark(progress, format!("GPU {index}: nvmlDeviceGetHandleByIndex"));
    let dev = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            let why: Probed<String> = p(Err(e));
            let reason = why.reason().unwrap_or("unknown").to_string();
            let code = why.code().unwrap_or("nvml_error").to_string();
            return Gpu {
                index,
                name: Probed::failed_code(&code, format!("{HANDLE_FAILED}: {reason}")),
                ..Default::default()
            };
        }
    };
    // One breadcrumb (and trace line) per group of calls: where a hang was, where time goes.
    let at = |what: &str| mark(progress, format!("GPU {index}: {what}"));
    at("name, UUID, PCI info, compute capability");
    let name = p(dev.name()).map(|s| sanitize::clean_line(&s, 96));
    let uuid = p(dev.uuid()).map(|s| sanitize::clean_line(&s, 96));
    let pci_bus_id = p(dev.pci_info()).map(|pi| sanitize::clean_line(&pi.bus_id, 40));
    let compute_capability =
        p(dev.cuda_compute_capability()).map(|c| format!("{}.{}", c.major, c.minor));
    at("nvmlDeviceGetMemoryInfo");
    let memory = memory(nvml, &dev);
    at("running processes");
    let processes = processes(nvml, &dev);
    at("persistence, driver model, compute, MIG and ECC modes");
    let persistence_mode = persistence(&dev);
    let driver_model = driver_model(&dev);
    let compute_mode = p(dev.compute_mode()).map(|m| {
        match m {
            ComputeMode::Default => "default",
            ComputeMode::ExclusiveThread => "exclusive_thread",
            ComputeMode::Prohibited => "prohibited",
            ComputeMode::ExclusiveProcess => "exclusive_process",
        }
        .to_string()
    });
    let mig_mode = p(dev.mig_mode()).map(|m| ModePair {
        current: m.current != 0,
        pending: m.pending != 0,
    });
    let ecc_mode = p(dev.is_ecc_enabled()).map(|m| ModePair {
        current: m.currently_enabled,
        pending: m.pending_enabled,
    });
    at("temperature and power");
    let temperature_c = p(dev.temperature(TemperatureSensor::Gpu));
    let power_w = p(dev.power_usage()).map(|mw| f64::from(mw) / 1000.0);
    let power_limit_w = p(dev.enforced_power_limit()).map(|mw| f64::from(mw) / 1000.0);
    at("clocks");
    let clocks = Probed::found(Clocks {
        sm_mhz: dev.clock_info(Clock::SM).ok(),
        mem_mhz: dev.clock_info(Clock::Memory).ok(),
        sm_max_mhz: dev.max_clock_info(Clock::SM).ok(),
        mem_max_mhz: dev.max_clock_info(Clock::Memory).ok(),
    });
    at("PCIe link");
    let pcie = Probed::found(PcieLink {
        gen: dev.current_pcie_link_gen().ok(),
        width: dev.current_pcie_link_width().ok(),
        max_gen: dev.max_pcie_link_gen().ok(),
        max_width: dev.max_pcie_link_width().ok(),
    });
    let mut g = Gpu {
        index,
        name,
        uuid,
        pci_bus_id,
        compute_capability,
        memory,
        processes,
        persistence_mode,
        driver_model,
        compute_mode,
        mig_mode,
        ecc_mode,
        temperature_c,
        power_w,
        power_limit_w,
        clocks,
        pcie,
        health: Probed::absent_code("not_probed", "not probed"),
    };
    g.health = Probed::found(health(nvml, &dev, index, progress, deep));
    g
}

/// Memory info v2 (510.39+), else the v1 call that R450/R470 have.
pub(crate) fn memory(nvml: &Nvml, dev: &Device) -> Probed<GpuMemory> {
    match dev.memory_info() {
        Ok(m) => Probed::found(GpuMemory {
            total_bytes: m.total,
            used_bytes: m.used,
            free_bytes: m.free,
        }),
        Err(NvmlError::FailedToLoadSymbol(_)) => {
            let lib = nvml.lib();
            if lib.nvmlDeviceGetMemoryInfo.is_err() {
                return Probed::absent_code(
                    "old_driver",
                    "neither memory info v1 nor v2 exists in this NVML",
                );
            }
            // SAFETY: the symbol exists (checked above); `m` is a valid out-pointer and the
            // handle belongs to this live NVML session.
            let mut m: nvml_wrapper_sys::bindings::nvmlMemory_t = unsafe { std::mem::zeroed() };
            let rc = unsafe { lib.nvmlDeviceGetMemoryInfo(dev.handle(), &mut m) };
            if rc == 0 {
                Probed::found(GpuMemory {
                    total_bytes: m.total,
                    used_bytes: m.used,
                    free_bytes: m.free,
                })
            } else {
                Probed::failed(format!("nvmlDeviceGetMemoryInfo returned {rc}"))
            }
        }
        Err(e) => p::<GpuMemory>(Err(e)),
    }
}

/// Compute processes through v3 (R510+), else v2, else the v1 call every driver has (the
/// `_v3` symbol is missing on R470, reference/rust-crates.md §2, nvml-wrapper#46).
pub(crate) fn processes(nvml: &Nvml, dev: &Device) -> Probed<Vec<GpuProcess>> {
    // nvml-wrapper allocates what the count says: a driver's nonsense count would abort.
    if let Some(n) = process_count(nvml, dev).filter(|n| *n > MAX_PROCESSES) {
        return Probed::failed_code(
            "nvml_error",
            format!("NVML said {n} compute processes run on this GPU, more than any GPU runs: the driver's answer is not to be trusted"),
        );
    }
    let list = match dev.running_compute_processes() {
        Err(NvmlError::FailedToLoadSymbol(_)) => match dev.running_compute_processes_v2() {
            Err(NvmlError::FailedToLoadSymbol(_)) => return processes_v1(nvml, dev),
            other => other,
        },
        other => other,
    };
    p(list).map(|v| {
        v.into_iter()
            .map(|pi| GpuProcess {
                pid: pi.pid,
                name: process_name(pi.pid),
                used_bytes: match pi.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Some(b),
                    UsedGpuMemory::Unavailable => None,
                },
            })
            .collect()
    })
}

/// More compute processes than this on one GPU is nonsense (MPS allows 48 clients per GPU).
const MAX_PROCESSES: u32 = 4096;

/// How many compute processes the newest process query this NVML has reports, asked with room
/// for none (NVML_ERROR_INSUFFICIENT_SIZE then carries the count).
fn process_count(nvml: &Nvml, dev: &Device) -> Option<u32> {
    let lib = nvml.lib();
    let mut count: libc::c_uint = 0;
    let null = std::ptr::null_mut();
    // SAFETY: each symbol is checked before it is called; a zero count with a null buffer is
    // NVML's documented way to ask for the size; the handle belongs to this live session.
    let rc = unsafe {
        if let Ok(f) = lib.nvmlDeviceGetComputeRunningProcesses_v3.as_ref() {
            f(dev.handle(), &mut count, null)
        } else if let Ok(f) = lib.nvmlDeviceGetComputeRunningProcesses_v2.as_ref() {
            f(dev.handle(), &mut count, null)
        } else if let Ok(f) = lib.nvmlDeviceGetComputeRunningProcesses.as_ref() {
            f(dev.handle(), &mut count, null.cast())
        } else {
            return None;
        }
    };
    // NVML_SUCCESS or NVML_ERROR_INSUFFICIENT_SIZE.
    (rc == 0 || rc == 7).then_some(count)
}

/// `nvmlDeviceGetComputeRunningProcesses` (v1), called raw.
fn processes_v1(nvml: &Nvml, dev: &Device) -> Probed<Vec<GpuProcess>> {
    let lib = nvml.lib();
    if lib.nvmlDeviceGetComputeRunningProcesses.is_err() {
        return Probed::absent_code("old_driver", "no compute-process query in this NVML");
    }
    // NVML_VALUE_NOT_AVAILABLE: the driver cannot tell the memory (WDDM, some containers).
    const NOT_AVAILABLE: u64 = u64::MAX;
    let mut buf: Vec<nvml_wrapper_sys::bindings::nvmlProcessInfo_v1_t> = Vec::new();
    let mut count: libc::c_uint = 0;
    for _ in 0..3 {
        // SAFETY: the symbol exists (checked above); `buf` has room for `count` entries and
        // the handle belongs to this live NVML session.
        buf.resize(count as usize, unsafe { std::mem::zeroed() });
        let rc = unsafe {
            lib.nvmlDeviceGetComputeRunningProcesses(dev.handle(), &mut count, buf.as_mut_ptr())
        };
        match rc {
            0 => {
                buf.truncate(count as usize);
                return Probed::found(
                    buf.iter()
                        .map(|pi| GpuProcess {
                            pid: pi.pid,
                            name: process_name(pi.pid),
                            used_bytes: (pi.usedGpuMemory != NOT_AVAILABLE)
                                .then_some(pi.usedGpuMemory),
                        })
                        .collect(),
                );
            }
            // NVML_ERROR_INSUFFICIENT_SIZE: `count` now holds the size needed (plus margin).
            7 => count = count.saturating_add(4),
            other => {
                return Probed::failed(format!(
                    "nvmlDeviceGetComputeRunningProcesses returned {other}"
                ))
            }
        }
    }
    Probed::failed("the process list kept growing while it was read")
}

fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| sanitize::clean_line(s.trim(), 64))
}

/// The Windows driver model (nvmlDeviceGetDriverModel, Windows only). nvml-wrapper knows
/// NVML_DRIVER_WDDM (0) and NVML_DRIVER_WDM (1, which NVIDIA calls TCC); NVML_DRIVER_MCDM (2)
/// reaches it as an unexpected variant (nvml.h, nvmlDriverModel_t).
#[cfg(windows)]
fn driver_model(dev: &nvml_wrapper::Device) -> Option<String> {
    use nvml_wrapper::enum_wrappers::device::DriverModel;
    match dev.driver_model() {
        Ok(s) => Some(match s.current {
            DriverModel::WDDM => "WDDM".to_string(),
            DriverModel::WDM => "TCC".to_string(),
        }),
        Err(NvmlError::UnexpectedVariant(2)) => Some("MCDM".to_string()),
        Err(_) => None,
    }
}

#[cfg(not(windows))]
fn driver_model(_dev: &nvml_wrapper::Device) -> Option<String> {
    None
}

/// Persistence mode is a Linux setting (nvmlDeviceGetPersistenceMode: "Linux only").
#[cfg(unix)]
fn persistence(dev: &nvml_wrapper::Device) -> Probed<bool> {
    p(dev.is_in_persistent_mode())
}

#[cfg(not(unix))]
fn persistence(_dev: &nvml_wrapper::Device) -> Probed<bool> {
    Probed::absent_code(
        "not_applicable",
        "persistence mode exists on Linux only; Windows keeps the driver loaded",
    )
}
