//! The health watch of `gpudoctor stress`: NVML sampled every second (temperature, power, SM
//! clock, clock event reasons, ECC counters, row remapping, PCIe replays) and Xid events through
//! NVML's event set (they are only new events; past ones are in the kernel log).

use std::sync::Arc;
use std::time::Duration;

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::{EventSet, Nvml};

use super::nvml_health::{health, Progress};
use crate::gpu::stress::{Monitor, Sample};

/// NVML for the whole run (leaked on purpose: the event set borrows it, and the process ends
/// with the run).
pub struct NvmlMonitor {
    nvml: &'static Nvml,
    events: Option<EventSet<'static>>,
    progress: Progress,
}

impl NvmlMonitor {
    /// None when NVML does not load (no driver): stress then runs without a watch.
    pub fn open() -> Option<NvmlMonitor> {
        let nvml: &'static Nvml = Box::leak(Box::new(Nvml::init().ok()?));
        let mut set = nvml.create_event_set().ok();
        if let Ok(n) = nvml.device_count() {
            for i in 0..n {
                let Ok(dev) = nvml.device_by_index(i) else {
                    continue;
                };
                if let Some(s) = set.take() {
                    let want = EventTypes::CRITICAL_XID_ERROR | EventTypes::DOUBLE_BIT_ECC_ERROR;
                    set = dev.register_events(want, s).ok();
                }
            }
        }
        Some(NvmlMonitor {
            nvml,
            events: set,
            progress: Arc::default(),
        })
    }
}

impl Monitor for NvmlMonitor {
    fn sample(&mut self, index: u32) -> Option<Sample> {
        let dev = self.nvml.device_by_index(index).ok()?;
        let h = health(self.nvml, &dev, index, &self.progress);
        Some(Sample {
            temperature_c: dev.temperature(TemperatureSensor::Gpu).ok(),
            power_w: dev.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            sm_mhz: dev.clock_info(Clock::SM).ok(),
            clock_event_reasons: h.clock_event_reasons,
            ecc_corrected: h.ecc.and_then(|e| e.volatile_corrected),
            ecc_uncorrected: h.ecc.and_then(|e| e.volatile_uncorrected),
            remap_pending: h.remapped_rows.map(|r| r.pending),
            pcie_replays: h.pcie_replays,
        })
    }

    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        let Some(set) = self.events.as_ref() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut ms = wait.as_millis().min(1000) as u32;
        // Drain what is queued; only the first wait blocks.
        while let Ok(e) = set.wait(ms) {
            ms = 0;
            let index = e.device.index().unwrap_or(u32::MAX);
            match e.event_data {
                Some(XidError::Value(x)) => out.push((index, x)),
                // A double-bit ECC event without an Xid: report it as Xid 48 (DBE), the Xid the
                // driver logs for it (faults.md section 1).
                _ if e.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) => {
                    out.push((index, 48))
                }
                _ => {}
            }
            if out.len() > 64 {
                break;
            }
        }
        out
    }
}
