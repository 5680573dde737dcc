//! Ctrl-C and SIGTERM for long runs (`stress`): the handler only records the signal; a watcher
//! thread turns it into a stop request that the GPU workers see between kernels, so memory is
//! freed and the partial report printed before gpudoctor exits 130 or 143.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

static SIGNAL: AtomicI32 = AtomicI32::new(0);

#[cfg(unix)]
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
    #[cfg(windows)]
    // SAFETY: on_console_event only stores to an atomic; it runs on a thread Windows creates.
    unsafe {
        windows_sys::Win32::System::Console::SetConsoleCtrlHandler(Some(on_console_event), 1);
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

/// Ctrl-C becomes SIGINT (exit 130), Ctrl-Break and closing the console SIGTERM (exit 143): the
/// same stop, partial report and exit codes as on Linux.
#[cfg(windows)]
unsafe extern "system" fn on_console_event(event: u32) -> windows_sys::core::BOOL {
    let Some(sig) = console_signal(event) else {
        return 0;
    };
    SIGNAL.store(sig as i32, Ordering::SeqCst);
    1
}

/// The signal a console event stands for: Ctrl-C SIGINT (2), Ctrl-Break and closing the
/// console SIGTERM (15); None for the others (logoff, shutdown), left to Windows.
#[cfg(windows)]
fn console_signal(event: u32) -> Option<u32> {
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT};
    match event {
        CTRL_C_EVENT => Some(2),
        CTRL_BREAK_EVENT | CTRL_CLOSE_EVENT => Some(15),
        _ => None,
    }
}

/// The signal received, if any: SIGINT (2) or SIGTERM (15).
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Signals `gpudoctor run` passes on to its command, as a bit set by number.
static FORWARD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Every signal of [`FORWARDED`] received, sent by a person or a program or by the terminal.
static SEEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// SIGWINCH arrived (the terminal was resized).
static RESIZED: AtomicBool = AtomicBool::new(false);

/// The signals `gpudoctor run` passes on: interrupt, terminate, hang-up, quit, and the two user
/// signals batch schedulers send before a time limit (Slurm's `--signal`).
#[cfg(target_os = "linux")]
pub const FORWARDED: [i32; 6] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

#[cfg(target_os = "linux")]
extern "C" fn on_forwarded(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Only atomic operations: async-signal-safe.
    if !(1..64).contains(&sig) {
        return;
    }
    let bit = 1u64 << sig;
    if sig == libc::SIGWINCH {
        RESIZED.store(true, Ordering::SeqCst);
        return;
    }
    SEEN.fetch_or(bit, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = if info.is_null() {
        0
    } else {
        unsafe { (*info).si_code }
    };
    // A signal the terminal generated (Ctrl-C, Ctrl-\, hang-up) comes from the kernel and went to
    // the whole foreground process group, the command included: passing it on would deliver it
    // twice. One sent with kill(2) came to gpudoctor alone.
    if code != libc::SI_KERNEL {
        FORWARD.fetch_or(bit, Ordering::SeqCst);
    }
}

/// Installs the handlers of `gpudoctor run` (the signals of [`FORWARDED`], and SIGWINCH).
/// The command started afterwards gets the default handlers back at exec.
#[cfg(target_os = "linux")]
pub fn install_forwarding() {
    for sig in FORWARDED.iter().copied().chain([libc::SIGWINCH]) {
        // SAFETY: a zeroed sigaction with a valid SA_SIGINFO handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_forwarded
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// `gpudoctor run` on Windows: Ctrl-C, Ctrl-Break and closing the console reach every process
/// attached to the console, the command included, so nothing is passed on; gpudoctor records
/// the event (as SIGINT 2 or SIGTERM 15) and stays to report how the command ended.
#[cfg(windows)]
pub fn install_forwarding() {
    // SAFETY: the handler only updates an atomic; it runs on a thread Windows creates.
    unsafe {
        windows_sys::Win32::System::Console::SetConsoleCtrlHandler(Some(on_run_console_event), 1);
    }
}

#[cfg(windows)]
unsafe extern "system" fn on_run_console_event(event: u32) -> windows_sys::core::BOOL {
    let Some(sig) = console_signal(event) else {
        return 0;
    };
    SEEN.fetch_or(1u64 << sig, Ordering::SeqCst);
    1
}

/// The signals to pass on since the last call (signal numbers).
pub fn take_forward() -> Vec<i32> {
    bits(FORWARD.swap(0, Ordering::SeqCst))
}

/// Every forwardable signal received so far, in number order.
pub fn seen() -> Vec<i32> {
    bits(SEEN.load(Ordering::SeqCst))
}

/// Whether the terminal was resized since the last call.
pub fn take_resized() -> bool {
    RESIZED.swap(false, Ordering::SeqCst)
}

fn bits(b: u64) -> Vec<i32> {
    (1..64).filter(|s| b & (1u64 << s) != 0).collect()
}
