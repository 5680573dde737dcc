//! Breadcrumbs: where a sacrificial helper process was when it died.
//!
//! Everything that calls into a driver library (NVML, libcuda, the smoke tests) runs in a child
//! process (`gpudoctor __probe-nvml`, `__smoke`), because a library that segfaults, aborts or
//! calls `exit` takes its whole process with it. Before each call into the library the child
//! writes one breadcrumb line to stderr (unbuffered, so it is out before a crash); the parent
//! reads the last one to say which call the library died or hung in.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

const TAG: &str = "@gpudoctor-at ";

static ON: AtomicBool = AtomicBool::new(false);

/// Turns breadcrumbs on (in a helper process).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// Records that the process is about to do `what` ("nvmlInit_v2", "GPU 0: memory").
pub fn at(what: &str) {
    if ON.load(Ordering::Relaxed) {
        let line = format!("{TAG}{}\n", crate::sanitize::clean_line(what, 200));
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// The last breadcrumb in a helper's stderr.
pub fn last(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(TAG))
        .map(|s| s.trim().to_string())
}

/// A helper's stderr without its breadcrumbs: what the library itself said.
pub fn said(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with(TAG) && !l.trim().is_empty())
        .collect()
}
