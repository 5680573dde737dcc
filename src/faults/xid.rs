//! The Xid catalog: what each Xid means, its category, how serious it is and what to do, from
//! NVIDIA's Xid catalog (NV-CAT, https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)
//! and the older cause table (NV-OLD, https://docs.nvidia.com/deploy/xid-errors/index.html), as
//! transcribed in ../shared/reference/faults.md §1. NVIDIA publishes no severity field: the
//! levels are faults.md's synthesis of NVIDIA's resolution buckets, DCGM and cloud practice.

use crate::report::{Category, Severity};

/// faults.md's severity scale (INFO < APP < WARN < HIGH < CRIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

/// One catalog entry (a single Xid or a group that shares a meaning).
#[derive(Debug, Clone, Copy)]
pub struct XidInfo {
    pub xids: &'static [(u32, u32)],
    pub name: &'static str,
    pub meaning: &'static str,
    pub category: Category,
    pub level: Level,
    pub action: &'static str,
}

use Category::{
    ApplicationError as App, DriverFault as Drv, EccMemory as Mem, HardwareFault as Hw,
    PcieDegraded as Pcie, ThermalPower as Pwr,
};

/// NV-CAT / NV-OLD, faults.md §1.
pub const CATALOG: &[XidInfo] = &[
    XidInfo { xids: &[(1, 7), (9, 10), (12, 12), (14, 24), (26, 30), (33, 36)], name: "LEGACY_DRIVER_ERROR", meaning: "a push-buffer or driver-programming error (unused on Ampere and newer)", category: Drv, level: Level::Warn, action: "report it; reboot if it repeats" },
    XidInfo { xids: &[(8, 8)], name: "FIFO_ERROR_IDLE_TIMEOUT", meaning: "the GPU stopped processing", category: App, level: Level::App, action: "restart the application; if it recurs, check cooling and PCIe" },
    XidInfo { xids: &[(11, 11), (25, 25)], name: "GR_ERROR_MISSING_HW / GR_ILLEGAL_NOTIFY", meaning: "an invalid or corrupted push buffer", category: App, level: Level::App, action: "restart the application" },
    XidInfo { xids: &[(13, 13)], name: "GR_EXCEPTION", meaning: "a graphics engine exception, typically an out-of-bounds access or illegal instruction in a kernel", category: App, level: Level::App, action: "restart and debug the application (compute-sanitizer, cuda-gdb); if it repeats on the same SM across applications, run DCGM diagnostics" },
    XidInfo { xids: &[(31, 31)], name: "FIFO_ERROR_MMU_ERR_FLT", meaning: "a GPU memory page fault: the application accessed an illegal address", category: App, level: Level::App, action: "restart and debug the application; suspect the driver or hardware only if it is new after a driver change with the same application" },
    XidInfo { xids: &[(32, 32)], name: "PBDMA_ERROR", meaning: "an invalid or corrupted push buffer, often from the bus", category: Pcie, level: Level::Warn, action: "restart the application; check PCIe (AER errors, replays)" },
    XidInfo { xids: &[(38, 38)], name: "FECS_ERR_WATCHDOG_TIMEOUT", meaning: "a driver firmware error", category: Drv, level: Level::Warn, action: "reboot if it repeats; update the driver" },
    XidInfo { xids: &[(39, 41), (70, 72), (75, 77), (85, 85), (126, 135)], name: "CE_ERROR", meaning: "a copy engine exception", category: App, level: Level::App, action: "restart the application" },
    XidInfo { xids: &[(43, 43)], name: "RESETCHANNEL_VERIF_ERROR", meaning: "the GPU stopped processing after an application's software-induced fault; the GPU stays healthy", category: App, level: Level::App, action: "restart the application" },
    XidInfo { xids: &[(44, 44)], name: "GR_FAULT_DURING_CTXSW", meaning: "a graphics engine fault during a context switch", category: Drv, level: Level::Warn, action: "reset the GPU or reboot if it repeats" },
    XidInfo { xids: &[(45, 45)], name: "PREEMPTIVE_REMOVAL", meaning: "preemptive cleanup after a previous error", category: App, level: Level::Info, action: "look at the Xid before it; alone on an NVSwitch system it can mean Fabric Manager stopped" },
    XidInfo { xids: &[(46, 46)], name: "GPU_TIMEOUT_ERROR", meaning: "the GPU stopped processing", category: Drv, level: Level::High, action: "drain the node and reset the GPU" },
    XidInfo { xids: &[(48, 48)], name: "GPU_ECC_DBE", meaning: "a double-bit (uncorrectable) ECC memory error", category: Mem, level: Level::Crit, action: "drain and reset the GPU (with Xid 63/64 following); otherwise run field diagnostics; RMA per NVIDIA's thresholds" },
    XidInfo { xids: &[(54, 54)], name: "SILENT_RUNNING_PWR_REDUCED_CLOCKING", meaning: "auxiliary power is not connected to the board", category: Pwr, level: Level::High, action: "check the PCIe power cables and the power supply" },
    XidInfo { xids: &[(56, 56)], name: "DISPLAY_CHANNEL_EXCEPTION", meaning: "a display engine error (unused on Ampere and newer)", category: Drv, level: Level::Warn, action: "report it" },
    XidInfo { xids: &[(57, 57)], name: "FB_LINK_TRAINING_FAILURE_ERROR", meaning: "an error programming the video-memory interface", category: Hw, level: Level::High, action: "reset the GPU; RMA if it repeats" },
    XidInfo { xids: &[(58, 58)], name: "FB_MEMORY_ERROR", meaning: "an unstable video-memory interface (EDC error)", category: Hw, level: Level::High, action: "reset the GPU; RMA if it repeats" },
    XidInfo { xids: &[(60, 60)], name: "SEC2_ERROR", meaning: "a video processor exception", category: Drv, level: Level::App, action: "restart the application" },
    XidInfo { xids: &[(61, 61)], name: "PMU_BREAKPOINT", meaning: "an internal micro-controller breakpoint or warning", category: Hw, level: Level::High, action: "report it and reset the GPU" },
    XidInfo { xids: &[(62, 62)], name: "PMU_HALT_ERROR", meaning: "an internal micro-controller halted", category: Hw, level: Level::High, action: "reset the GPU; check cooling; RMA if it repeats" },
    XidInfo { xids: &[(63, 63)], name: "INFOROM_DRAM_RETIREMENT_EVENT", meaning: "a page retirement or row remap was recorded in the InfoROM", category: Mem, level: Level::Info, action: "schedule a GPU reset (the remap or retirement takes effect on reset); if it follows Xid 48, drain and reset now" },
    XidInfo { xids: &[(64, 64)], name: "INFOROM_DRAM_RETIREMENT_FAILURE", meaning: "recording a page retirement or row remap failed", category: Mem, level: Level::Crit, action: "reset the GPU or reboot now; if it repeats, start an RMA" },
    XidInfo { xids: &[(68, 68)], name: "NVDEC0_ERROR", meaning: "a video decoder exception", category: App, level: Level::App, action: "restart the application" },
    XidInfo { xids: &[(69, 69)], name: "GR_CLASS_ERROR", meaning: "a graphics engine class error", category: Drv, level: Level::Warn, action: "restart the application; reboot if it repeats" },
    XidInfo { xids: &[(73, 73)], name: "NVENC2_ERROR", meaning: "an NVENC2 error (unused on Ampere and newer)", category: Drv, level: Level::Warn, action: "restart the application" },
    XidInfo { xids: &[(74, 74)], name: "NVLINK_ERROR", meaning: "an NVLink link error (possibly caused by the remote GPU or NVSwitch)", category: Hw, level: Level::Crit, action: "reset the GPU or reboot; inspect nvidia-smi nvlink -e; reseat and run diagnostics if it repeats" },
    XidInfo { xids: &[(79, 79)], name: "GPU_HAS_FALLEN_OFF_THE_BUS", meaning: "the driver can no longer reach the GPU over PCIe", category: Hw, level: Level::Crit, action: "reboot the node; check PCIe AER errors, power and cooling; reseat the GPU; RMA if it repeats" },
    XidInfo { xids: &[(80, 80)], name: "PBDMA_PUSHBUFFER_CRC_MISMATCH", meaning: "corrupted data was sent to the GPU", category: Pcie, level: Level::Warn, action: "restart the application; check PCIe and host memory" },
    XidInfo { xids: &[(81, 81)], name: "VGA_SUBSYSTEM_ERROR", meaning: "a VGA subsystem error (unused on Ampere and newer)", category: Hw, level: Level::High, action: "report it" },
    XidInfo { xids: &[(92, 92)], name: "EXCESSIVE_SBE_INTERRUPTS", meaning: "a high rate of single-bit ECC errors", category: Mem, level: Level::Warn, action: "watch the single-bit error trend; run field diagnostics" },
    XidInfo { xids: &[(93, 93)], name: "INFOROM_ERASE_LIMIT_EXCEEDED", meaning: "the InfoROM reached its wear limit (non-fatal)", category: Hw, level: Level::Warn, action: "report it" },
    XidInfo { xids: &[(94, 94)], name: "CONTAINED_ERROR", meaning: "a contained uncorrectable memory error: only the faulting application is affected", category: Mem, level: Level::High, action: "restart the affected application; reset the GPU when convenient" },
    XidInfo { xids: &[(95, 95)], name: "UNCONTAINED_ERROR", meaning: "an uncontained uncorrectable memory error: several applications are affected", category: Mem, level: Level::Crit, action: "with MIG, drain the other instances and reset the GPU; without MIG, reboot the node now" },
    XidInfo { xids: &[(109, 109)], name: "CTXSW_TIMEOUT_ERROR", meaning: "a context switch timed out", category: Drv, level: Level::Warn, action: "restart the application; reset the GPU if it persists" },
    XidInfo { xids: &[(110, 110)], name: "SEC_FAULT_ERROR", meaning: "a security fault", category: Hw, level: Level::High, action: "revert recent hardware changes and cold-reset; contact the vendor if it persists" },
    XidInfo { xids: &[(119, 119)], name: "GSP_RPC_TIMEOUT", meaning: "the GSP firmware did not answer a driver RPC", category: Drv, level: Level::High, action: "reset the GPU or reboot; update the driver" },
    XidInfo { xids: &[(120, 120)], name: "GSP_ERROR", meaning: "a GSP firmware error", category: Drv, level: Level::High, action: "reset the GPU or reboot; update the driver" },
    XidInfo { xids: &[(121, 121)], name: "C2C_ERROR", meaning: "corrected errors on the C2C link to the Grace CPU, no operational impact", category: Hw, level: Level::Warn, action: "reboot when convenient to retrain the link" },
    XidInfo { xids: &[(122, 124)], name: "SPI_PMU_RPC_FAIL", meaning: "an SPI PMU RPC read, write or erase failed", category: Hw, level: Level::High, action: "report it and reset the GPU" },
    XidInfo { xids: &[(136, 136)], name: "ALI_TRAINING_FAIL", meaning: "link training failed", category: Hw, level: Level::High, action: "reset the GPU; check the link and cables" },
    XidInfo { xids: &[(137, 137)], name: "NVLINK_PRIV_ERR", meaning: "an NVLink FLA privilege error (an illegal NVLink peer access, usually an application bug)", category: App, level: Level::App, action: "debug the application; suspect the driver or hardware only if it persists" },
    XidInfo { xids: &[(140, 140)], name: "UNRECOVERABLE_ECC_ERROR_ESCAPE", meaning: "an uncorrectable memory error that prevented page offlining or row remapping", category: Mem, level: Level::Crit, action: "reset the GPU; contact the vendor if it persists" },
    XidInfo { xids: &[(143, 143)], name: "GPU_INIT_ERROR", meaning: "the GPU failed to initialise", category: Hw, level: Level::High, action: "reset the GPU; RMA if it persists" },
    XidInfo { xids: &[(144, 150)], name: "NVLINK5_ERROR", meaning: "an NVLink5 unit error (SAW, RLW, TLW, TREX, NVLPW_CTRL, NETIR or MSE)", category: Hw, level: Level::Warn, action: "decode the unit and error status (NVIDIA's Xid 144-150 decode); fatal ones need a GPU reset" },
    XidInfo { xids: &[(151, 151)], name: "KEY_ROTATION_ERROR", meaning: "a confidential-computing key rotation error", category: Drv, level: Level::High, action: "restart the VM" },
    XidInfo { xids: &[(154, 154)], name: "GPU_RECOVERY_ACTION_CHANGED", meaning: "the driver changed the recovery action this GPU needs", category: Hw, level: Level::Warn, action: "act on the recovery action it names" },
    XidInfo { xids: &[(155, 155)], name: "NVLINK_SW_DEFINED_ERROR", meaning: "an NVLink software-defined error", category: Hw, level: Level::High, action: "reset the GPU" },
    XidInfo { xids: &[(156, 156)], name: "RESOURCE_RETIREMENT_EVENT", meaning: "a resource was retired", category: Mem, level: Level::Warn, action: "reset the GPU" },
    XidInfo { xids: &[(157, 157)], name: "RESOURCE_RETIREMENT_FAILURE", meaning: "retiring a resource failed", category: Mem, level: Level::High, action: "report it to the vendor" },
    XidInfo { xids: &[(158, 158)], name: "GPU_FATAL_TIMEOUT", meaning: "a fatal GPU timeout", category: Hw, level: Level::High, action: "reset the GPU" },
    XidInfo { xids: &[(171, 171)], name: "UNCORRECTABLE_DRAM_ERROR", meaning: "an uncorrectable DRAM error (detail of Xid 48)", category: Mem, level: Level::Crit, action: "as for Xid 48: drain and reset the GPU, run field diagnostics" },
    XidInfo { xids: &[(172, 172)], name: "UNCORRECTABLE_SRAM_ERROR", meaning: "an uncorrectable SRAM error (detail of Xid 48)", category: Mem, level: Level::Crit, action: "as for Xid 48: drain and reset the GPU, run field diagnostics" },
];

/// The catalog entry of an Xid, if any (159–170 have no confirmed action and are not listed).
pub fn lookup(xid: u32) -> Option<&'static XidInfo> {
    CATALOG
        .iter()
        .find(|e| e.xids.iter().any(|(lo, hi)| (*lo..=*hi).contains(&xid)))
}

/// NVML / Xid 154 recovery actions (faults.md §1, §3e).
pub fn recovery_action(code: u64) -> (&'static str, Level) {
    match code {
        0 => ("None", Level::Info),
        1 => ("GPU Reset", Level::High),
        2 => ("Node Reboot", Level::Crit),
        3 => ("Drain P2P", Level::Warn),
        4 => ("Drain and Reset", Level::Crit),
        5 => ("Recover IMEX domain", Level::High),
        6 => ("Bus Reset", Level::High),
        7 => ("System Reboot", Level::Crit),
        _ => ("unknown", Level::Warn),
    }
}
