//! gpudoctor: a doctor for NVIDIA GPU machines.
//!
//! One direction: [`probe`] (the only code that touches the machine) → [`snapshot::Snapshot`]
//! (plain, versioned data) → [`rules`] (pure functions) → [`report::Report`] → [`render`], with
//! the shared [`vocab`] and the [`knowledge`] under them all; a test keeps every import to that
//! direction (docs/decisions.md, "The pipeline's direction").
//! NVIDIA libraries are loaded at run time only, so one binary runs with no driver at all.

pub mod app;
pub mod assume;
pub mod build_info;
pub mod cli;
mod commands;
pub mod compat;
pub mod explain;
pub mod faults;
pub mod fixes;
pub mod gpu;
pub mod interrupt;
pub mod knowledge;
pub mod matrix;
pub mod matrix_show;
pub mod matrix_update;
pub mod outguard;
pub mod policy;
pub mod probe;
pub mod recommend;
pub mod redact;
pub mod render;
pub mod report;
pub mod rules;
pub mod runwatch;
pub mod safewrite;
pub mod sanitize;
pub mod snapshot;
pub mod trace;
pub mod userfile;
pub mod version;
pub mod vocab;

#[cfg(test)]
mod architecture_tests;
#[cfg(test)]
mod house_tests;
