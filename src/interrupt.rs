//! Ctrl-C and SIGTERM for long runs (`stress`): the handler only records the signal; a watcher
//! thread turns it into a stop request that the GPU workers see between kernels, so memory is
//! freed and the partial report printed before gpudoctor exits 130 or 143.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Installs the handlers and returns a flag set when SIGINT or SIGTERM arrives (checked every
/// 20 ms until `done` is set).
pub fn watch(done: Arc<AtomicBool>) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    // SAFETY: on_signal is async-signal-safe (one atomic store).
    unsafe {
        let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
    let s = stop.clone();
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if SIGNAL.load(Ordering::SeqCst) != 0 {
                    s.store(true, Ordering::SeqCst);
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    stop
}

/// The signal received, if any: SIGINT (2) or SIGTERM (15).
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
