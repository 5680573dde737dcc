//! What this binary is: its version, the git commit and target it was built from, and the data
//! version of its embedded compatibility matrix (captured by `build.rs`). `gpudoctor --version`
//! prints them, so a bug report or a fleet inventory names the exact build.

/// The crate version ("0.1.0").
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit it was built from (12 hex digits), or "unknown" outside a git checkout.
pub const GIT_COMMIT: &str = env!("GPUDOCTOR_GIT_COMMIT");
/// The target triple ("aarch64-unknown-linux-gnu").
pub const TARGET: &str = env!("GPUDOCTOR_TARGET");
/// The embedded matrix's data version (the newest `data_version` of `compat-matrix/*.yaml`).
pub const MATRIX_VERSION: &str = env!("GPUDOCTOR_MATRIX_VERSION");

/// `gpudoctor --version`: clap prints "gpudoctor " before it.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("GPUDOCTOR_GIT_COMMIT"),
    "\ntarget: ",
    env!("GPUDOCTOR_TARGET"),
    "\nmatrix: ",
    env!("GPUDOCTOR_MATRIX_VERSION"),
);

#[cfg(test)]
#[path = "build_info_tests.rs"]
mod tests;
