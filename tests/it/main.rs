//! gpudoctor's integration tests, one test binary (issue 33, item 2): each file of tests/it is a
//! module here, and the helpers they share are in `common`. One binary links once, where one per
//! file linked the library and its dependencies ~40 times (most of a test run's time and of
//! target/'s size). `cargo test --test it MODULE::` runs one file's tests, e.g.
//! `cargo test --test it render::`.
//!
//! Platform-specific modules say so in their first line (`#![cfg(unix)]`, `#![cfg(windows)]`):
//! the Linux host compiles and runs all but the `windows*` ones that need Windows, and
//! scripts/test-windows.sh runs the `windows*` modules under Wine.
//!
//! Everything here runs in one process, in parallel: no test may change the process's
//! environment, working directory or other global state; a test that needs its own environment
//! runs gpudoctor (or a script) as a child process with that environment.

mod common;

mod assume;
mod compat_table;
mod completions;
mod explain_catalog;
mod explain_cli;
mod explain_corpus;
mod explain_families;
mod explain_kernel_reports;
mod explain_real;
mod faults;
mod fixes;
mod fleet_formats;
mod fleet_scripts;
mod frameworks;
mod gates;
mod health;
mod hostile;
mod install;
mod knowledge_kernel;
mod matrix;
mod matrix_audit;
mod no_driver;
mod policy;
mod ptx;
mod ptx_interp;
mod readme;
mod real_libraries;
mod recommend;
mod render;
mod rules;
mod run;
mod smoke;
mod standin;
mod standin_gpu;
mod standin_nvml;
mod stress;
mod validate_kit;
mod versions;
mod windows;
mod windows_fixes;
mod windows_libs;
mod windows_run;
mod windows_standin;
mod windows_standin_gpu;
mod windows_tdr;
