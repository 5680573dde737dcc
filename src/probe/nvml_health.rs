//! NVML health of one GPU: ECC counters (volatile and aggregate, SRAM vs DRAM), retired pages
//! (pre-Ampere), row remapping and its histogram (raw NVML: nvml-wrapper has no wrapper), the
//! recovery action, InfoROM, clock event reasons, utilisation and P-state, temperature
//! thresholds, PCIe replays, NVLink state and errors, MIG devices. NotSupported leaves a value
//! unknown; any other error is recorded in `unavailable`. Before each call the shared progress
//! marker names it, so a call that hangs can be reported by name.

use std::sync::{Arc, Mutex};

use nvml_wrapper::enum_wrappers::device::{
    EccCounter, MemoryError, MemoryLocation, RetirementCause, TemperatureThreshold,
};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use crate::sanitize;
use crate::snapshot::{EccCounts, GpuHealth, NvLinkState, RemappedRows, RetiredPages};

/// Where the NVML thread is: the GPU and the call in progress.
pub type Progress = Arc<Mutex<String>>;

pub fn mark(p: &Progress, what: impl Into<String>) {
    let what = what.into();
    super::trace::line(&what);
    super::breadcrumb::at(&what);
    if let Ok(mut g) = p.lock() {
        *g = what;
    }
}

/// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvml.h field 230).
const FI_RECOVERY_ACTION: u32 = 230;
/// NVLink links to look at (NVML_NVLINK_MAX_LINKS is 18 on Hopper and Blackwell).
const MAX_LINKS: u32 = 18;

/// `inforom`: also run nvmlDeviceValidateInforom, which reads the whole InfoROM: 68 ms of the
/// 103 ms NVML probe on an H100 (docs/validation/h100-2026-11-23-run2, GPUDOCTOR_TRACE), so
/// only `check --deep` asks for it.
pub fn health(
    nvml: &Nvml,
    dev: &Device,
    index: u32,
    progress: &Progress,
    inforom: bool,
) -> GpuHealth {
    let mut h = GpuHealth::default();
    let call = |name: &str| mark(progress, format!("GPU {index}: {name}"));
    let note = |h: &mut GpuHealth, name: &str, e: NvmlError| {
        if !matches!(
            e,
            NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)
        ) {
            h.unavailable
                .insert(name.to_string(), sanitize::clean_line(&e.to_string(), 120));
        }
    };
    macro_rules! get {
        ($name:expr, $e:expr) => {{
            call($name);
            match $e {
                Ok(v) => Some(v),
                Err(e) => {
                    note(&mut h, $name, e);
                    None
                }
            }
        }};
    }

    let ecc_enabled =
        get!("nvmlDeviceGetEccMode", dev.is_ecc_enabled()).map(|m| m.currently_enabled);
    if ecc_enabled == Some(true) {
        let vc = get!(
            "nvmlDeviceGetTotalEccErrors(corrected, volatile)",
            dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile)
        );
        let vu = get!(
            "nvmlDeviceGetTotalEccErrors(uncorrected, volatile)",
            dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile)
        );
        let ac = get!(
            "nvmlDeviceGetTotalEccErrors(corrected, aggregate)",
            dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate)
        );
        let au = get!(
            "nvmlDeviceGetTotalEccErrors(uncorrected, aggregate)",
            dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate)
        );
        let sram = get!(
            "nvmlDeviceGetMemoryErrorCounter(SRAM)",
            dev.memory_error_counter(
                MemoryError::Uncorrected,
                EccCounter::Aggregate,
                MemoryLocation::SRAM
            )
        );
        let dram = get!(
            "nvmlDeviceGetMemoryErrorCounter(DRAM)",
            dev.memory_error_counter(
                MemoryError::Uncorrected,
                EccCounter::Aggregate,
                MemoryLocation::Device
            )
        );
        h.ecc = Some(EccCounts {
            volatile_corrected: vc,
            volatile_uncorrected: vu,
            aggregate_corrected: ac,
            aggregate_uncorrected: au,
            aggregate_uncorrected_sram: sram,
            aggregate_uncorrected_dram: dram,
        });
        let sbe = get!(
            "nvmlDeviceGetRetiredPages(SBE)",
            dev.retired_pages(RetirementCause::MultipleSingleBitEccErrors)
        );
        let dbe = get!(
            "nvmlDeviceGetRetiredPages(DBE)",
            dev.retired_pages(RetirementCause::DoubleBitEccError)
        );
        let pending = get!(
            "nvmlDeviceGetRetiredPagesPendingStatus",
            dev.are_pages_pending_retired()
        );
        if let (Some(s), Some(d)) = (&sbe, &dbe) {
            h.retired_pages = Some(RetiredPages {
                single_bit: s.len() as u64,
                double_bit: d.len() as u64,
                pending: pending.unwrap_or(false),
            });
        }
    }
    call("nvmlDeviceGetRemappedRows");
    h.remapped_rows = remapped_rows(nvml, dev);
    if let Some(r) = h.remapped_rows.as_mut() {
        call("nvmlDeviceGetRowRemapperHistogram");
        r.banks_without_spares = histogram_none(nvml, dev);
    }
    call("nvmlDeviceGetFieldValues(GPU_RECOVERY_ACTION)");
    h.recovery_action = dev
        .field_values_for(&[nvml_wrapper::structs::device::FieldId(FI_RECOVERY_ACTION)])
        .ok()
        .and_then(|v| v.into_iter().next())
        .and_then(|r| r.ok())
        .and_then(|s| match s.value {
            Ok(nvml_wrapper::enums::device::SampleValue::U32(x)) => Some(u64::from(x)),
            Ok(nvml_wrapper::enums::device::SampleValue::U64(x)) => Some(x),
            Ok(nvml_wrapper::enums::device::SampleValue::I64(x)) => u64::try_from(x).ok(),
            _ => None,
        });
    if inforom {
        call("nvmlDeviceValidateInforom");
        h.inforom_valid = match dev.validate_info_rom() {
            Ok(()) => Some(true),
            Err(NvmlError::CorruptedInfoROM) => Some(false),
            Err(_) => None,
        };
    }
    h.clock_event_reasons = get!(
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        dev.current_throttle_reasons()
    )
    .map(|r| r.bits());
    h.utilization_gpu =
        get!("nvmlDeviceGetUtilizationRates", dev.utilization_rates()).map(|u| u.gpu);
    h.pstate = get!("nvmlDeviceGetPerformanceState", dev.performance_state()).map(|p| p.as_c());
    h.temperature_slowdown_c = get!(
        "nvmlDeviceGetTemperatureThreshold(slowdown)",
        dev.temperature_threshold(TemperatureThreshold::Slowdown)
    );
    h.temperature_shutdown_c = get!(
        "nvmlDeviceGetTemperatureThreshold(shutdown)",
        dev.temperature_threshold(TemperatureThreshold::Shutdown)
    );
    h.pcie_replays =
        get!("nvmlDeviceGetPcieReplayCounter", dev.pcie_replay_counter()).map(u64::from);
    for link in 0..MAX_LINKS {
        call(&format!("nvmlDeviceGetNvLinkState(link {link})"));
        let l = dev.link_wrapper_for(link);
        let Ok(active) = l.is_active() else { break };
        use nvml_wrapper::enum_wrappers::nv_link::ErrorCounter;
        h.nvlinks.push(NvLinkState {
            link,
            active,
            replay_errors: l.error_counter(ErrorCounter::DlReplay).ok(),
            recovery_errors: l.error_counter(ErrorCounter::DlRecovery).ok(),
            crc_errors: l.error_counter(ErrorCounter::DlCrcFlit).ok(),
        });
    }
    h.mig_devices = get!("nvmlDeviceGetMaxMigDeviceCount", dev.mig_device_count());
    h
}

/// nvmlDeviceGetRemappedRows, raw (nvml-wrapper does not wrap it).
pub fn remapped_rows(nvml: &Nvml, dev: &Device) -> Option<RemappedRows> {
    let lib = nvml.lib();
    if lib.nvmlDeviceGetRemappedRows.is_err() {
        return None;
    }
    let (mut corr, mut unc, mut pending, mut failure) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: the symbol exists (checked above); the out-pointers are valid locals and the
    // handle belongs to this live NVML session.
    let rc = unsafe {
        lib.nvmlDeviceGetRemappedRows(
            dev.handle(),
            &mut corr,
            &mut unc,
            &mut pending,
            &mut failure,
        )
    };
    (rc == 0).then_some(RemappedRows {
        correctable: corr,
        uncorrectable: unc,
        pending: pending != 0,
        failure: failure != 0,
        banks_without_spares: None,
    })
}

/// Banks with no spare rows left (nvmlRowRemapperHistogramValues_t.none).
fn histogram_none(nvml: &Nvml, dev: &Device) -> Option<u32> {
    let lib = nvml.lib();
    if lib.nvmlDeviceGetRowRemapperHistogram.is_err() {
        return None;
    }
    // SAFETY: the symbol exists (checked above); `v` is a valid out-pointer.
    let mut v: nvml_wrapper_sys::bindings::nvmlRowRemapperHistogramValues_t =
        unsafe { std::mem::zeroed() };
    let rc = unsafe { lib.nvmlDeviceGetRowRemapperHistogram(dev.handle(), &mut v) };
    (rc == 0).then_some(v.none)
}
