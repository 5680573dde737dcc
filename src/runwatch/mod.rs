//! `gpudoctor run -- COMMAND`: the command runs as a child with its input and output passed
//! through unchanged ([`child`], keeping the last MiB of its output in a [`tail::Tail`]) while
//! a [`sampler`] records the GPUs (the watch `stress` uses), the host memory of its process
//! tree, its memory cgroup and new kernel-log lines. When it ends, [`verdict`] turns its exit
//! status, its output's tail (read by `explain`), the events and the timeline into causes with
//! evidence, and [`render`] prints them. The command's status is gpudoctor's.

#[cfg(target_os = "linux")]
pub mod child;
#[cfg(windows)]
#[path = "child_windows.rs"]
pub mod child;
pub mod host;
#[cfg(any(target_os = "linux", windows))]
pub mod kmsg;
#[cfg(any(target_os = "linux", windows))]
pub mod render;
#[cfg(any(target_os = "linux", windows))]
pub mod sampler;
#[cfg(target_os = "linux")]
pub mod splice;
pub mod tail;
#[cfg(any(target_os = "linux", windows))]
pub mod verdict;

#[cfg(any(target_os = "linux", windows))]
pub use engine::*;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Its exit code; on Windows a crash's NTSTATUS (0xC0000409 is -1073740791).
    Exited(i32),
    Signaled {
        signal: i32,
        core_dumped: bool,
    },
}

impl Ended {
    /// The status a shell gives: the exit code, or 128 + the signal. On Linux an exit code is
    /// one byte; Windows keeps all 32 bits (a crash's NTSTATUS), and so does gpudoctor there.
    pub fn shell_status(self) -> i32 {
        match self {
            Ended::Exited(c) if cfg!(windows) => c,
            Ended::Exited(c) => c & 0xff,
            Ended::Signaled { signal, .. } => 128 + signal,
        }
    }
}

/// Copies one output of the command to its destination and the tail until the command closes
/// it. When the destination is closed (`gpudoctor run -- cmd | head`), stops reading, so the
/// command meets the closed pipe as it would without gpudoctor.
#[cfg(any(target_os = "linux", windows))]
fn relay(
    mut from: impl std::io::Read,
    mut to: std::fs::File,
    tail: std::sync::Arc<std::sync::Mutex<tail::Tail>>,
) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A pseudo-terminal's master reads EIO once every slave is closed; a Windows pipe
            // reads "broken pipe" once the command's end is.
            Err(_) => return,
        };
        let chunk = buf.get(..n).unwrap_or(&[]);
        if let Ok(mut t) = tail.lock() {
            t.push(chunk);
        }
        if !write_waiting(&mut to, chunk) {
            // Nowhere to write to: close our end so the command sees it.
            return;
        }
    }
}

/// Writes all of `data`; where the destination is non-blocking (another program set it so)
/// and full, waits for room rather than dropping output. False when it cannot be written.
#[cfg(any(target_os = "linux", windows))]
fn write_waiting(to: &mut impl std::io::Write, mut data: &[u8]) -> bool {
    while !data.is_empty() {
        match to.write(data) {
            Ok(0) => return false,
            Ok(n) => data = data.get(n..).unwrap_or(&[]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(_) => return false,
        }
    }
    true
}

/// Waits for the relays to finish passing the output on, at most `drain` in all: a process the
/// command started may hold its output open after it ended.
#[cfg(any(target_os = "linux", windows))]
fn drain(relays: Vec<std::thread::JoinHandle<()>>, drain: std::time::Duration) {
    let until = std::time::Instant::now() + drain;
    for r in relays {
        while !r.is_finished() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if r.is_finished() {
            let _ = r.join();
        }
    }
}

/// Why the command could not be started, with the status a shell would give (126 found but not
/// runnable, 127 not found).
#[derive(Debug)]
pub struct SpawnError {
    pub message: String,
    pub status: i32,
}

impl SpawnError {
    /// `gpudoctor run --` with nothing after it.
    pub fn no_command() -> SpawnError {
        SpawnError {
            message: "no command given: gpudoctor run -- COMMAND [ARGS...]".into(),
            status: 2,
        }
    }

    /// The command could not be started: 127 when not found, 126 otherwise, as shells say.
    pub fn of(prog: &std::ffi::OsStr, e: &std::io::Error) -> SpawnError {
        SpawnError {
            status: if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            },
            message: format!(
                "cannot run {}: {e}",
                crate::sanitize::clean_line(&prog.to_string_lossy(), 200)
            ),
        }
    }
}

/// The JSON report's schema.
pub const RUN_SCHEMA: &str = "gpudoctor.run/1";

/// Bytes of output kept for the verdict and `--save` (the last 4 MiB: a long traceback and the
/// log lines before it, with room for progress-bar redraws).
pub const TAIL_BYTES: usize = 4 << 20;

/// Removes terminal escape sequences (colours, cursor moves of progress bars) and turns
/// carriage-return redraws into lines, so the matcher reads what a person saw.
pub fn plain_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.peek() {
                // CSI: ESC [ params final-byte (0x40..=0x7e).
                Some('[') => {
                    it.next();
                    for d in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
                // OSC: ESC ] ... BEL or ESC \.
                Some(']') => {
                    it.next();
                    while let Some(d) = it.next() {
                        if d == '\u{7}' {
                            break;
                        }
                        if d == '\u{1b}' {
                            it.next();
                            break;
                        }
                    }
                }
                _ => {
                    it.next();
                }
            },
            '\r' => {
                if it.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(any(target_os = "linux", windows))]
mod engine {
    use std::ffi::OsString;
    use std::fs::File;
    use std::path::PathBuf;
    use std::sync::{mpsc, Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::child;
    use super::sampler::{self, SamplerOptions, Timeline};
    use super::tail::Tail;
    use super::{Ended, SpawnError};

    /// How to watch.
    pub struct WatchOptions {
        pub argv: Vec<OsString>,
        pub tail_bytes: usize,
        pub interval: Duration,
        /// timeline.jsonl, when saving.
        pub jsonl: Option<File>,
        /// Where new kernel-log lines are read (/dev/kmsg).
        pub kmsg: PathBuf,
    }

    /// What a run left behind.
    pub struct Watched {
        pub ended: Ended,
        pub duration_s: f64,
        pub started_unix_s: f64,
        pub tail: Vec<u8>,
        pub output_bytes: u64,
        pub timeline: Timeline,
        pub maxrss: Option<u64>,
        /// Signals gpudoctor received while the command ran.
        pub signals: Vec<i32>,
    }

    /// Runs the command to its end, watching.
    pub fn watch(o: WatchOptions) -> Result<Watched, SpawnError> {
        crate::interrupt::install_forwarding();
        let tail = Arc::new(Mutex::new(Tail::new(o.tail_bytes)));
        let setup = |e: std::io::Error| SpawnError {
            message: format!("cannot reach gpudoctor's own output: {e}"),
            status: 126,
        };
        let out = crate::outguard::file().map_err(setup)?;
        let err = crate::outguard::stderr_file().map_err(setup)?;
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        // The kernel log is opened at its end before the command starts: an Xid in its first
        // milliseconds is the run's (opened later, on the sampler thread, it could be missed).
        let follower = super::kmsg::KernelFollower::open(&o.kmsg);
        let started = Instant::now();
        let running = child::spawn(&o.argv, out, err, tail.clone())?;
        let shared: Arc<Mutex<Timeline>> = Arc::default();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let ended_flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sampler = {
            let opts = SamplerOptions {
                pid: running.pid,
                interval: o.interval,
                kmsg: o.kmsg,
                proc_root: PathBuf::from("/proc"),
                sys_cgroup: PathBuf::from("/sys/fs/cgroup"),
                jsonl: o.jsonl,
                started,
                started_unix_s,
                ended: ended_flag.clone(),
            };
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("run-sampler".into())
                .spawn(move || sampler::run(opts, follower, stop_rx, shared))
                .ok()
        };
        let (ended, maxrss) = running.wait(Duration::from_secs(2));
        let duration_s = started.elapsed().as_secs_f64();
        ended_flag.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = stop_tx.send(());
        // The sampler's last look takes milliseconds; a hung NVML must not hold the report.
        if let Some(h) = sampler {
            let until = Instant::now() + Duration::from_secs(3);
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
        let mut timeline = shared.lock().map(|t| t.clone()).unwrap_or_default();
        if timeline.samples == 0 {
            timeline
                .unwatched
                .push("the sampler took no sample (the command ended at once)".into());
        }
        let (bytes, total) = tail
            .lock()
            .map(|mut t| (t.bytes(), t.total()))
            .unwrap_or_default();
        Ok(Watched {
            ended,
            duration_s,
            started_unix_s,
            tail: bytes,
            output_bytes: total,
            timeline,
            maxrss,
            signals: crate::interrupt::seen(),
        })
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
