//! The hostile-user suite (issue 28): what a new user tried that gpudoctor got wrong, each case
//! kept here so it stays fixed. Every case failed on main eb8719d.
//!
//! - `write`: files and streams gpudoctor writes (devices, FIFOs, symlinks, full disks);
//! - `run`: `gpudoctor run` judging from its evidence and never keeping the job from starting;
//! - `input`: arguments and configuration refused with a message a person can act on, and
//!   summaries that do not contradict themselves.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::print_stdout
)]

mod input;
mod run;
mod write;
