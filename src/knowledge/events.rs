//! The kernel-log events as data: what the parser ([`crate::faults::logparse`]) makes of a line,
//! what the snapshot records and what the knowledge describes ([`super::kernel::describe`]); and
//! the level of an Xid. Here, under both the parser and the snapshot, so that the knowledge and
//! the snapshot need not import the parser.

use serde::{Deserialize, Serialize};

use crate::vocab::{Area, Category, Severity};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogEvent {
    Xid {
        xid: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bus_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gpu_instance: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        compute_instance: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        process: Option<String>,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caused_by: Option<u32>,
        /// NVLink5 (144–150): "Fatal" / "Nonfatal".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fatal: Option<bool>,
        /// Xid 154: the recovery action changed to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        recovery_action: Option<u64>,
    },
    FallenOffBus {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bus_id: Option<String>,
    },
    RmInitAdapterFailed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bus_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    ApiMismatch {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_version: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        module_version: Option<String>,
    },
    ProbeNotCalled,
    NoDevicesProbed,
    UnsupportedGpu {
        detail: String,
    },
    OpenModuleNeedsGsp,
    UnsignedModule,
    PcieAer {
        severity: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
    OomKill {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        process: Option<String>,
    },
    NvswitchSxid {
        code: u32,
    },
    /// Any other event of knowledge/kernel-events.yaml, by its id ("gsp_unresponsive",
    /// "nouveau_owns_gpu", ...).
    Kernel {
        event: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bus_id: Option<String>,
        /// The message (for events whose text names it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Windows: the display driver stopped answering within the TDR delay and Windows reset it
    /// (`Display` event 4101 "Display driver nvlddmkm stopped responding and has …recovered",
    /// `nvlddmkm` event 153 "…TDR occurred on GPUID:100"; sources in
    /// tests/fixtures/windows/eventlog/README.md).
    DisplayDriverReset {
        /// The driver (`nvlddmkm`) or the device (`\Device\Video3`) the record names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
}

impl LogEvent {
    /// A key that identifies repeats of the same problem ("xid:79:0000:2b:00").
    pub fn key(&self) -> String {
        match self {
            LogEvent::Xid { xid, bus_id, .. } => {
                format!("xid:{xid}:{}", bus_id.as_deref().unwrap_or("?"))
            }
            LogEvent::FallenOffBus { bus_id } => {
                format!("fallen_off_bus:{}", bus_id.as_deref().unwrap_or("?"))
            }
            LogEvent::RmInitAdapterFailed { bus_id, .. } => {
                format!("rm_init:{}", bus_id.as_deref().unwrap_or("?"))
            }
            LogEvent::ApiMismatch { .. } => "api_mismatch".into(),
            LogEvent::ProbeNotCalled => "probe_not_called".into(),
            LogEvent::NoDevicesProbed => "no_devices".into(),
            LogEvent::UnsupportedGpu { .. } => "unsupported_gpu".into(),
            LogEvent::OpenModuleNeedsGsp => "open_module_gsp".into(),
            LogEvent::UnsignedModule => "unsigned_module".into(),
            LogEvent::PcieAer { severity, device } => {
                format!("aer:{severity}:{}", device.as_deref().unwrap_or("?"))
            }
            LogEvent::OomKill { .. } => "oom_kill".into(),
            LogEvent::NvswitchSxid { code } => format!("sxid:{code}"),
            LogEvent::DisplayDriverReset { .. } => "display_driver_reset".into(),
            LogEvent::Kernel { event, bus_id, .. } => match bus_id {
                Some(b) => format!("{event}:{b}"),
                None => event.clone(),
            },
        }
    }

    /// The id of its event in knowledge/kernel-events.yaml ("xid" for an Xid, whose entry is in
    /// knowledge/xid.yaml).
    pub fn event_id(&self) -> &str {
        match self {
            LogEvent::Xid { .. } => "xid",
            LogEvent::FallenOffBus { .. } => "fallen_off_bus",
            LogEvent::RmInitAdapterFailed { .. } => "rm_init_adapter_failed",
            LogEvent::ApiMismatch { .. } => "api_mismatch",
            LogEvent::ProbeNotCalled => "probe_not_called",
            LogEvent::NoDevicesProbed => "no_devices_probed",
            LogEvent::UnsupportedGpu { .. } => "unsupported_gpu",
            LogEvent::OpenModuleNeedsGsp => "open_module_needs_gsp",
            LogEvent::UnsignedModule => "unsigned_module",
            LogEvent::PcieAer { .. } => "pcie_aer",
            LogEvent::OomKill { .. } => "oom_kill",
            LogEvent::NvswitchSxid { .. } => "nvswitch_sxid",
            LogEvent::DisplayDriverReset { .. } => "display_driver_reset",
            LogEvent::Kernel { event, .. } => event,
        }
    }
}

/// faults.md's severity scale (INFO < APP < WARN < HIGH < CRIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    App,
    Warn,
    High,
    Crit,
}

impl Level {
    /// As a finding severity: HIGH and CRIT fail a node; WARN warns; APP and INFO inform.
    pub fn severity(self) -> Severity {
        match self {
            Level::Crit | Level::High => Severity::Error,
            Level::Warn => Severity::Warning,
            Level::App | Level::Info => Severity::Info,
        }
    }
}

/// A kernel-log event: what a family of messages means and what to do.
#[derive(Debug, Deserialize)]
pub struct Event {
    pub id: String,
    pub title: String,
    pub text: String,
    pub category: Category,
    pub severity: Severity,
    pub area: Area,
    pub causes: Vec<String>,
    pub fix: String,
    pub commands: Vec<String>,
    pub sources: Vec<String>,
    pub families: Vec<Family>,
    /// How much a line of it weighs alone: a cause for the events and the cause families.
    #[serde(default)]
    pub role: Role,
    /// Where its reading stands among the causes `explain` ranks, when the event says (a line
    /// that names why the driver failed stands above the line that says it failed); else the
    /// signature that found the line decides.
    #[serde(default)]
    pub rank: Option<u8>,
}

/// How much a message weighs on its own (kernel_families.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The line says what went wrong.
    #[default]
    Cause,
    /// A detail of a report another line makes (dumps, boxed reports, lines after an Xid).
    Context,
    /// The driver reporting state or a fallback it took: not a fault.
    Notice,
}

/// A message family: the literal pieces of a format, in order.
#[derive(Debug, Deserialize)]
pub struct Family {
    pub pieces: Vec<String>,
    pub emitter: String,
    /// file:line in the emitter's source (or a citation).
    pub source: Vec<String>,
    #[serde(default)]
    pub format: Option<String>,
}

impl Family {
    /// Whether `line` holds the pieces in order.
    pub fn matches(&self, line: &str) -> bool {
        in_order(&self.pieces, line)
    }
}

/// Whether `line` holds `pieces` in order.
pub(crate) fn in_order(pieces: &[String], line: &str) -> bool {
    let mut rest = line;
    for p in pieces {
        match rest.find(p.as_str()) {
            Some(i) => rest = rest.get(i + p.len()..).unwrap_or(""),
            None => return false,
        }
    }
    true
}
