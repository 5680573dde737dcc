//! The Xid catalog: what each Xid means, its category, how serious it is and what to do. The
//! table is data, knowledge/xid.yaml (read by [`crate::knowledge::kernel`]): every Xid number the
//! driver defines (nverror.h, mined) joined with NVIDIA's Xid catalog (NV-CAT,
//! https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) and the older cause table
//! (NV-OLD, https://docs.nvidia.com/deploy/xid-errors/index.html), as transcribed in
//! scripts/knowledge/xid_catalog.yaml. NVIDIA publishes no severity field: the levels are
//! faults.md's synthesis of NVIDIA's resolution buckets, DCGM and cloud practice.

pub use crate::knowledge::events::Level;
pub use crate::knowledge::kernel::XidInfo;

/// The entry of an Xid: every number the driver defines or NVIDIA's catalog lists. Numbers the
/// catalog says nothing about are there with `catalog: none` and a plain "no published action".
pub fn lookup(xid: u32) -> Option<&'static XidInfo> {
    crate::knowledge::kernel::xid(xid)
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
