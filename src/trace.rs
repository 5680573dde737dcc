//! `GPUDOCTOR_TRACE=1`: a line on stderr for each probe thread that ends and each NVML call
//! that starts, with the milliseconds since the process started. For finding where time goes on
//! a real machine (the GPU validation kit sets it); silent otherwise.

use std::sync::OnceLock;
use std::time::Instant;

fn start() -> Option<Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    *START.get_or_init(|| {
        std::env::var_os("GPUDOCTOR_TRACE")
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Instant::now())
    })
}

/// Whether tracing is on; the first call fixes the time origin.
pub fn enabled() -> bool {
    start().is_some()
}

/// Writes `[trace +12.3 ms] what` to stderr when tracing is on.
pub fn line(what: &str) {
    if let Some(t0) = start() {
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "[trace +{ms:.1} ms] {}",
            crate::sanitize::clean_line(what, 200)
        );
    }
}
