//! Hardware and driver faults: the Xid catalog, the kernel-log parser shared by `check` and
//! `explain --log`, and what NVML says about each GPU's health.

pub mod logparse;
pub mod xid;
