//! The health watch of `gpudoctor stress`: NVML sampled every second (temperature, power, SM
//! clock, clock event reasons, ECC counters, row remapping, PCIe replays) and Xid events through
//! NVML's event set (they are only new events; past ones are in the kernel log).

use std::time::Duration;

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{Clock, EccCounter, MemoryError, TemperatureSensor};
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::{EventSet, Nvml};

use super::nvml_health::remapped_rows;

/// One health sample of one GPU (from NVML).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub temperature_c: Option<u32>,
    pub power_w: Option<f64>,
    pub sm_mhz: Option<u32>,
    /// NVML clock event reason bits.
    pub clock_event_reasons: Option<u64>,
    pub ecc_corrected: Option<u64>,
    pub ecc_uncorrected: Option<u64>,
    pub remap_pending: Option<bool>,
    pub pcie_replays: Option<u64>,
    /// Memory in use and free (`gpudoctor run`'s timeline; stress does not need it).
    pub memory: Option<crate::snapshot::GpuMemory>,
    /// The compute processes holding memory on the GPU (NVML's process list).
    pub processes: Option<Vec<crate::snapshot::GpuProcess>>,
}

/// The health watch: samples by NVML index, and Xid events.
pub trait Monitor: Send {
    fn sample(&mut self, index: u32) -> Option<Sample>;
    /// Xid events since the last call as (NVML index, Xid), waiting at most `wait`.
    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)>;
    /// GPUs (NVML index) whose Xid events are not watched, and why.
    fn unwatched(&self) -> Vec<(u32, String)> {
        Vec::new()
    }
    /// Why the watch watched nothing, or stopped (NVML hung).
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// The GPUs (NVML indexes) there are to sample, when the watch knows (`gpudoctor run`
    /// samples them all; `stress` names its own).
    fn gpus(&self) -> Vec<u32> {
        Vec::new()
    }
}

/// NVML for the whole run (leaked on purpose: the event sets borrow it, and the process ends
/// with the run).
pub struct NvmlMonitor {
    nvml: &'static Nvml,
    /// One event set per GPU, so that a GPU that refuses a type does not take the others'
    /// registrations with it (nvml-wrapper frees a set whose registration failed).
    events: Vec<EventSet<'static>>,
    /// GPUs whose Xid events are not watched, and why.
    unwatched: Vec<(u32, String)>,
    count: u32,
}

impl NvmlMonitor {
    /// None when NVML does not load (no driver): stress then runs without a watch.
    pub fn open() -> Option<NvmlMonitor> {
        let nvml: &'static Nvml = Box::leak(Box::new(super::nvml::open().ok()?));
        let count = nvml
            .device_count()
            .unwrap_or(0)
            .min(crate::probe::nvml::MAX_GPUS);
        #[cfg(unix)]
        let (events, unwatched) = register_xid_events(nvml, count);
        // NVML's events exist on Linux only (nvmlDeviceRegisterEvents: "Linux only"); on
        // Windows the Event Log's nvlddmkm entries stand in, read after the run.
        #[cfg(not(unix))]
        let (events, unwatched) = (
            Vec::new(),
            (0..count)
                .map(|i| (i, "NVML has no Xid events on Windows; the Event Log (nvlddmkm) is read instead".to_string()))
                .collect(),
        );
        Some(NvmlMonitor {
            nvml,
            events,
            unwatched,
            count,
        })
    }
}

/// One event set per GPU for Xid (and double-bit ECC) events, and the GPUs left unwatched.
#[cfg(unix)]
fn register_xid_events(
    nvml: &'static Nvml,
    count: u32,
) -> (Vec<EventSet<'static>>, Vec<(u32, String)>) {
    let mut events = Vec::new();
    let mut unwatched = Vec::new();
    for i in 0..count {
        super::trace::line(&format!("GPU {i}: nvmlDeviceGetSupportedEventTypes"));
        let Ok(dev) = nvml.device_by_index(i) else {
            unwatched.push((i, "nvmlDeviceGetHandleByIndex failed".to_string()));
            continue;
        };
        let supported = match dev.supported_event_types() {
            Ok(t) => t,
            Err(e) => {
                unwatched.push((i, format!("nvmlDeviceGetSupportedEventTypes: {e}")));
                continue;
            }
        };
        // Xid events first; double-bit ECC events only where ECC is on (GeForce and
        // ECC-off GPUs refuse them).
        let mut wanted = Vec::new();
        if supported.contains(EventTypes::CRITICAL_XID_ERROR) {
            wanted.push(EventTypes::CRITICAL_XID_ERROR);
        } else {
            unwatched.push((
                i,
                "the driver offers no Xid events for this GPU (nvmlDeviceGetSupportedEventTypes); on MIG without root only whole-device events are seen".to_string(),
            ));
        }
        if supported.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) {
            wanted.push(EventTypes::DOUBLE_BIT_ECC_ERROR);
        }
        let mut set = None;
        for t in wanted {
            super::trace::line(&format!("GPU {i}: nvmlDeviceRegisterEvents({t:?})"));
            let s = match set.take() {
                Some(s) => s,
                None => match nvml.create_event_set() {
                    Ok(s) => s,
                    Err(e) => {
                        unwatched.push((i, format!("nvmlEventSetCreate: {e}")));
                        break;
                    }
                },
            };
            match dev.register_events(t, s) {
                Ok(s) => set = Some(s),
                Err(e) => {
                    if t == EventTypes::CRITICAL_XID_ERROR {
                        unwatched.push((i, format!("nvmlDeviceRegisterEvents(Xid): {}", e.error)));
                    }
                }
            }
        }
        if let Some(s) = set {
            events.push(s);
        }
    }
    (events, unwatched)
}

impl Monitor for NvmlMonitor {
    /// The light set, once a second: temperature, power, SM clock, clock event reasons,
    /// volatile ECC counts, pending row remaps, PCIe replays, memory in use and the compute
    /// processes holding it (about a dozen calls; the whole health probe, InfoROM validation
    /// included, took about 100 ms a GPU on an H100).
    fn sample(&mut self, index: u32) -> Option<Sample> {
        let dev = self.nvml.device_by_index(index).ok()?;
        super::trace::line(&format!("GPU {index}: sample"));
        let ecc_on = dev.is_ecc_enabled().ok().map(|m| m.currently_enabled) == Some(true);
        let ecc = |t: MemoryError| {
            if ecc_on {
                dev.total_ecc_errors(t, EccCounter::Volatile).ok()
            } else {
                None
            }
        };
        Some(Sample {
            temperature_c: dev.temperature(TemperatureSensor::Gpu).ok(),
            power_w: dev.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            sm_mhz: dev.clock_info(Clock::SM).ok(),
            clock_event_reasons: dev.current_throttle_reasons().ok().map(|r| r.bits()),
            ecc_corrected: ecc(MemoryError::Corrected),
            ecc_uncorrected: ecc(MemoryError::Uncorrected),
            remap_pending: remapped_rows(self.nvml, &dev).map(|r| r.pending),
            pcie_replays: dev.pcie_replay_counter().ok().map(u64::from),
            memory: super::nvml::memory(self.nvml, &dev).get().copied(),
            processes: super::nvml::processes(self.nvml, &dev).get().cloned(),
        })
    }

    fn gpus(&self) -> Vec<u32> {
        (0..self.count).collect()
    }

    fn unwatched(&self) -> Vec<(u32, String)> {
        self.unwatched.clone()
    }

    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        let mut ms = wait.as_millis().min(1000) as u32;
        for set in &self.events {
            // Drain what is queued; only the first wait blocks.
            while let Ok(e) = set.wait(ms) {
                ms = 0;
                let index = e.device.index().unwrap_or(u32::MAX);
                match e.event_data {
                    Some(XidError::Value(x)) => out.push((index, x)),
                    // A double-bit ECC event without an Xid: report it as Xid 48 (DBE), the Xid
                    // the driver logs for it (faults.md section 1).
                    _ if e.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) => {
                        out.push((index, 48))
                    }
                    _ => {}
                }
                if out.len() > 64 {
                    return out;
                }
            }
            ms = 0;
        }
        out
    }
}
