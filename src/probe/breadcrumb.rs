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

/// Records that GPU `ordinal`'s thread is about to do `what`. GPUs run on threads of their own,
/// so their breadcrumbs interleave: each is keyed by its GPU, and [`last`] names every GPU that
/// had not finished, not merely whichever thread wrote last (issue 29 item 7).
pub fn at_gpu(ordinal: u32, what: &str) {
    if ON.load(Ordering::Relaxed) {
        let line = format!(
            "{TAG}[gpu {ordinal}] {}\n",
            crate::sanitize::clean_line(what, 200)
        );
        // One write of the whole line: stderr is unbuffered and locked per write_all, so lines
        // of different threads do not mix within a line.
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// Records that GPU `ordinal`'s thread is done with the library.
pub fn gpu_done(ordinal: u32) {
    at_gpu(ordinal, DONE);
}

const DONE: &str = "-";

/// Where the helper was, from its stderr's breadcrumbs: the steps of the GPU threads that had
/// not finished ("CUDA device 0: pcie; CUDA device 2: kernel", by GPU), or with none in
/// progress the last breadcrumb of the process itself.
pub fn last(stderr: &str) -> Option<String> {
    let mut open: std::collections::BTreeMap<u32, String> = std::collections::BTreeMap::new();
    let mut global: Option<String> = None;
    for l in stderr.lines() {
        let Some(rest) = l.strip_prefix(TAG) else {
            continue;
        };
        let keyed = rest.strip_prefix("[gpu ").and_then(|r| {
            let (n, what) = r.split_once("] ")?;
            Some((n.parse::<u32>().ok()?, what.trim()))
        });
        match keyed {
            Some((n, DONE)) => {
                open.remove(&n);
            }
            Some((n, what)) => {
                open.insert(n, what.to_string());
            }
            None => global = Some(rest.trim().to_string()),
        }
    }
    if open.is_empty() {
        global
    } else {
        Some(open.into_values().collect::<Vec<_>>().join("; "))
    }
}

/// A helper's stderr without its breadcrumbs: what the library itself said.
pub fn said(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with(TAG) && !l.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crumb(what: &str) -> String {
        format!("{TAG}{what}\n")
    }

    /// GPU 0 is stuck in its pcie step while GPU 1 goes on and finishes: the parent names GPU
    /// 0's step, not GPU 1's last line (which the last breadcrumb alone would give).
    #[test]
    fn interleaved_gpu_threads_name_the_unfinished_gpu() {
        let err = [
            crumb("cuInit"),
            crumb("[gpu 0] CUDA device 0: context"),
            crumb("[gpu 1] CUDA device 1: context"),
            crumb("[gpu 0] CUDA device 0: pcie"),
            "a line the library printed\n".to_string(),
            crumb("[gpu 1] CUDA device 1: pcie"),
            crumb("[gpu 1] CUDA device 1: kernel"),
            crumb("[gpu 1] -"),
        ]
        .concat();
        assert_eq!(last(&err).as_deref(), Some("CUDA device 0: pcie"));
        // Two in progress: both, by GPU.
        let two = [
            crumb("[gpu 2] CUDA device 2: kernel"),
            crumb("[gpu 0] CUDA device 0: memory"),
        ]
        .concat();
        assert_eq!(
            last(&two).as_deref(),
            Some("CUDA device 0: memory; CUDA device 2: kernel")
        );
        // None in progress: the process's own last breadcrumb.
        let done = [
            crumb("cuInit"),
            crumb("[gpu 0] CUDA device 0: d2d"),
            crumb("[gpu 0] -"),
        ]
        .concat();
        assert_eq!(last(&done).as_deref(), Some("cuInit"));
        assert_eq!(last("nothing"), None);
        assert_eq!(said(&err), ["a line the library printed"]);
    }
}
