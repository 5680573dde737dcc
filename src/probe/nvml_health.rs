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
    let c = Calls { index, progress };
    ecc(dev, &c, &mut h);
    row_remapping_and_recovery(nvml, dev, &c, &mut h, inforom);
    clocks_thermal_and_pcie(dev, &c, &mut h);
    h.nvlinks = nvlinks(dev, &c);
    h.mig_devices = c.get(&mut h, "nvmlDeviceGetMaxMigDeviceCount", || {
        dev.mig_device_count()
    });
    h
}

/// The calls of one GPU's health probe: each named in the progress marker before it runs.
struct Calls<'a> {
    index: u32,
    progress: &'a Progress,
}

impl Calls<'_> {
    fn mark(&self, name: &str) {
        mark(self.progress, format!("GPU {}: {name}", self.index));
    }

    /// One call's value; an error other than NotSupported is recorded in `unavailable`.
    fn get<T>(
        &self,
        h: &mut GpuHealth,
        name: &str,
        f: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Option<T> {
        self.mark(name);
        match f() {
            Ok(v) => Some(v),
            Err(e) => {
                if !matches!(
                    e,
                    NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)
                ) {
                    h.unavailable
                        .insert(name.to_string(), sanitize::clean_line(&e.to_string(), 120));
                }
                None
            }
        }
    }
}

/// With ECC on: the volatile and aggregate counters (SRAM vs DRAM) and the retired pages.
fn ecc(dev: &Device, c: &Calls, h: &mut GpuHealth) {
    let ecc_enabled = c
        .get(h, "nvmlDeviceGetEccMode", || dev.is_ecc_enabled())
        .map(|m| m.currently_enabled);
    if ecc_enabled == Some(true) {
        let vc = c.get(
            h,
            "nvmlDeviceGetTotalEccErrors(corrected, volatile)",
            || dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
        );
        let vu = c.get(
            h,
            "nvmlDeviceGetTotalEccErrors(uncorrected, volatile)",
            || dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
        );
        let ac = c.get(
            h,
            "nvmlDeviceGetTotalEccErrors(corrected, aggregate)",
            || dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Aggregate),
        );
        let au = c.get(
            h,
            "nvmlDeviceGetTotalEccErrors(uncorrected, aggregate)",
            || dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate),
        );
        let sram = c.get(h, "nvmlDeviceGetMemoryErrorCounter(SRAM)", || {
            dev.memory_error_counter(
                MemoryError::Uncorrected,
                EccCounter::Aggregate,
                MemoryLocation::SRAM,
            )
        });
        let dram = c.get(h, "nvmlDeviceGetMemoryErrorCounter(DRAM)", || {
            dev.memory_error_counter(
                MemoryError::Uncorrected,
                EccCounter::Aggregate,
                MemoryLocation::Device,
            )
        });
        h.ecc = Some(EccCounts {
            volatile_corrected: vc,
            volatile_uncorrected: vu,
            aggregate_corrected: ac,
            aggregate_uncorrected: au,
            aggregate_uncorrected_sram: sram,
            aggregate_uncorrected_dram: dram,
        });
        let sbe = c.get(h, "nvmlDeviceGetRetiredPages(SBE)", || {
            dev.retired_pages(RetirementCause::MultipleSingleBitEccErrors)
        });
        let dbe = c.get(h, "nvmlDeviceGetRetiredPages(DBE)", || {
            dev.retired_pages(RetirementCause::DoubleBitEccError)
        });
        let pending = c.get(h, "nvmlDeviceGetRetiredPagesPendingStatus", || {
            dev.are_pages_pending_retired()
        });
        if let (Some(s), Some(d)) = (&sbe, &dbe) {
            h.retired_pages = Some(RetiredPages {
                single_bit: s.len() as u64,
                double_bit: d.len() as u64,
                pending: pending.unwrap_or(false),
            });
        }
    }
}

/// Row remapping and its histogram, the recovery action, and (`inforom`) the InfoROM's check.
fn row_remapping_and_recovery(
    nvml: &Nvml,
    dev: &Device,
    c: &Calls,
    h: &mut GpuHealth,
    inforom: bool,
) {
    c.mark("nvmlDeviceGetRemappedRows");
    h.remapped_rows = remapped_rows(nvml, dev);
    if let Some(r) = h.remapped_rows.as_mut() {
        c.mark("nvmlDeviceGetRowRemapperHistogram");
        r.banks_without_spares = histogram_none(nvml, dev);
    }
    c.mark("nvmlDeviceGetFieldValues(GPU_RECOVERY_ACTION)");
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
        c.mark("nvmlDeviceValidateInforom");
        h.inforom_valid = match dev.validate_info_rom() {
            Ok(()) => Some(true),
            Err(NvmlError::CorruptedInfoROM) => Some(false),
            Err(_) => None,
        };
    }
}

/// Clock event reasons, utilisation, P-state, temperature thresholds and PCIe replays.
fn clocks_thermal_and_pcie(dev: &Device, c: &Calls, h: &mut GpuHealth) {
    h.clock_event_reasons = c
        .get(h, "nvmlDeviceGetCurrentClocksThrottleReasons", || {
            dev.current_throttle_reasons()
        })
        .map(|r| r.bits());
    h.utilization_gpu = c
        .get(h, "nvmlDeviceGetUtilizationRates", || {
            dev.utilization_rates()
        })
        .map(|u| u.gpu);
    h.pstate = c
        .get(h, "nvmlDeviceGetPerformanceState", || {
            dev.performance_state()
        })
        .map(|p| p.as_c());
    h.temperature_slowdown_c = c.get(h, "nvmlDeviceGetTemperatureThreshold(slowdown)", || {
        dev.temperature_threshold(TemperatureThreshold::Slowdown)
    });
    h.temperature_shutdown_c = c.get(h, "nvmlDeviceGetTemperatureThreshold(shutdown)", || {
        dev.temperature_threshold(TemperatureThreshold::Shutdown)
    });
    h.pcie_replays = c
        .get(h, "nvmlDeviceGetPcieReplayCounter", || {
            dev.pcie_replay_counter()
        })
        .map(u64::from);
}

/// Each NVLink's state and error counters, up to the first link NVML does not know.
fn nvlinks(dev: &Device, c: &Calls) -> Vec<NvLinkState> {
    let mut links = Vec::new();
    for link in 0..MAX_LINKS {
        c.mark(&format!("nvmlDeviceGetNvLinkState(link {link})"));
        let l = dev.link_wrapper_for(link);
        let Ok(active) = l.is_active() else { break };
        use nvml_wrapper::enum_wrappers::nv_link::ErrorCounter;
        links.push(NvLinkState {
            link,
            active,
            replay_errors: l.error_counter(ErrorCounter::DlReplay).ok(),
            recovery_errors: l.error_counter(ErrorCounter::DlRecovery).ok(),
            crc_errors: l.error_counter(ErrorCounter::DlCrcFlit).ok(),
        });
    }
    links
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
