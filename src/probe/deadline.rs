//! Deadlines for everything that touches the machine.
//!
//! A wedged driver can block a read of /proc, an NVML call or a child process for minutes. Each
//! probe therefore runs on its own thread and is waited for only until its deadline; a probe that
//! misses it is reported as timed out and abandoned (its thread dies with the process). Child
//! processes lead process groups of their own and are killed, group and all, at their deadline
//! or when gpudoctor exits ([`kill_helpers`]), whichever comes first.

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The one point in time by which a run (a `check`, a `snapshot`) must end, on the monotonic
/// clock. It is made once, from `--timeout`, when the command line is resolved; the probes,
/// the helper processes and the smoke child all end by it, and every narrower budget (a
/// per-call cap, the margin a child keeps to print its answer) is derived from it with
/// [`Deadline::min`] or [`Deadline::less`], never started on a clock of its own. A child process
/// gets it as the milliseconds remaining when it is spawned ([`Deadline::remaining_millis`]) and
/// turns them back into a deadline on its own clock ([`Deadline::from_remaining_millis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// When it falls.
    at: Instant,
    /// When the run's deadline was made: what [`Deadline::budget`] counts from.
    from: Instant,
}

/// The longest budget a deadline holds: `--timeout` allows an hour; a year never overflows.
const FARTHEST: Duration = Duration::from_secs(365 * 24 * 3600);

impl Deadline {
    /// `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        let now = Instant::now();
        Deadline {
            at: now.checked_add(budget.min(FARTHEST)).unwrap_or(now),
            from: now,
        }
    }
    /// The instant it falls at.
    pub fn instant(self) -> Instant {
        self.at
    }
    /// The time left before it (zero once it has passed).
    pub fn remaining(self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }
    /// Whether it has passed.
    pub fn passed(self) -> bool {
        Instant::now() >= self.at
    }
    /// How long after the run's deadline was made this one falls: what a budget derived from
    /// `--timeout` amounts to (`--timeout 3` less a 0.5 s margin is 2.5 s), for messages.
    pub fn budget(self) -> Duration {
        self.at.saturating_duration_since(self.from)
    }
    /// A sub-budget on the same clock: this deadline, or `cap` from now if that comes first.
    pub fn min(self, cap: Duration) -> Deadline {
        let now = Instant::now();
        match now.checked_add(cap) {
            Some(at) if at < self.at => Deadline { at, ..self },
            _ => self,
        }
    }
    /// This deadline moved `margin` earlier (the time kept back to record an answer).
    pub fn less(self, margin: Duration) -> Deadline {
        Deadline {
            at: self
                .at
                .checked_sub(margin)
                .unwrap_or(self.at)
                .max(self.from),
            ..self
        }
    }
    /// For a child process: the whole milliseconds left now (rounded down, so that the child's
    /// deadline never falls after this one).
    pub fn remaining_millis(self) -> u64 {
        u64::try_from(self.remaining().as_millis()).unwrap_or(u64::MAX)
    }
    /// In a child process: the deadline its parent sent as [`Deadline::remaining_millis`].
    pub fn from_remaining_millis(ms: u64) -> Deadline {
        Deadline::after(Duration::from_millis(ms))
    }
}

impl From<Instant> for Deadline {
    fn from(at: Instant) -> Deadline {
        Deadline {
            at,
            from: Instant::now().min(at),
        }
    }
}

/// How a probe run on a thread ended.
#[derive(Debug)]
pub enum Outcome<T> {
    Done(T),
    TimedOut,
    Panicked(String),
}

/// A probe started on its own thread.
pub struct Pending<T> {
    pub name: &'static str,
    started: Instant,
    rx: mpsc::Receiver<(thread::Result<T>, Duration)>,
}

/// Starts `f` on a named thread. Panics inside it are caught and reported, never propagated.
pub fn spawn<T: Send + 'static>(
    name: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Pending<T> {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    let spawned = thread::Builder::new()
        .name(format!("probe-{name}"))
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            if super::trace::enabled() {
                let took = started.elapsed().as_secs_f64() * 1000.0;
                super::trace::line(&format!("probe {name} done in {took:.1} ms"));
            }
            let _ = tx.send((r, started.elapsed()));
        });
    if let Err(e) = spawned {
        // Could not start a thread: report it as a panic-like failure through the channel.
        let (tx2, rx2) = mpsc::channel();
        let _ =
            tx2.send((
                Err(Box::new(format!("could not start a thread: {e}"))
                    as Box<dyn std::any::Any + Send>),
                Duration::ZERO,
            ));
        return Pending {
            name,
            started,
            rx: rx2,
        };
    }
    Pending { name, started, rx }
}

impl<T> Pending<T> {
    /// Waits until `deadline` at the latest. The duration is how long the probe itself ran
    /// (or, when it timed out, how long it had run by then).
    pub fn wait(self, deadline: impl Into<Deadline>) -> (Outcome<T>, Duration) {
        match self.rx.recv_timeout(deadline.into().remaining()) {
            Ok((Ok(v), took)) => (Outcome::Done(v), took),
            Ok((Err(payload), took)) => (Outcome::Panicked(panic_message(payload.as_ref())), took),
            Err(_) => (Outcome::TimedOut, self.started.elapsed()),
        }
    }
}

impl<T> Pending<T> {
    /// As [`Pending::wait`], but gives up (TimedOut) as soon as `stop` is set: a signal must
    /// not wait for a probe stuck in a driver.
    pub fn wait_unless(
        self,
        deadline: impl Into<Deadline>,
        stop: &std::sync::atomic::AtomicBool,
    ) -> (Outcome<T>, Duration) {
        let deadline = deadline.into().instant();
        loop {
            let now = Instant::now();
            let slice = (now + Duration::from_millis(50)).min(deadline);
            match self.rx.recv_timeout(slice.saturating_duration_since(now)) {
                Ok((Ok(v), took)) => return (Outcome::Done(v), took),
                Ok((Err(payload), took)) => {
                    return (Outcome::Panicked(panic_message(payload.as_ref())), took)
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return (Outcome::TimedOut, self.started.elapsed())
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if Instant::now() >= deadline || stop.load(std::sync::atomic::Ordering::SeqCst)
                    {
                        return (Outcome::TimedOut, self.started.elapsed());
                    }
                }
            }
        }
    }
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "unknown panic".to_string()
    }
}

/// What a child process printed before it exited or was killed.
#[derive(Debug)]
pub struct RunOutput {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// "exit status 1", "killed by signal 6 (SIGABRT)", "timed out after 3 s".
    pub fn describe(&self, limit: Duration) -> String {
        if self.timed_out {
            return format!(
                "timed out after {:.1} s and was killed",
                limit.as_secs_f64()
            );
        }
        match self.status {
            Some(s) => describe_status(s),
            None => "ended in an unknown way".to_string(),
        }
    }
}

#[cfg(unix)]
fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = s.signal() {
        let name = match sig {
            6 => " (SIGABRT)",
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            7 => " (SIGBUS)",
            _ => "",
        };
        return format!("killed by signal {sig}{name}");
    }
    match s.code() {
        Some(c) => format!("exit status {c}"),
        None => "ended in an unknown way".to_string(),
    }
}

#[cfg(not(unix))]
fn describe_status(s: ExitStatus) -> String {
    match s.code() {
        Some(c) => describe_exit_code(c),
        None => "ended in an unknown way".to_string(),
    }
}

/// A Windows exit code: a process that crashed ends with its NTSTATUS (0xC0000005 for an access
/// violation, 0xC0000409 for a fail-fast), named from explain's table.
pub fn describe_exit_code(c: i32) -> String {
    let Some(u) = crate::explain::tables::crash_ntstatus(i64::from(c)) else {
        return format!("exit status {c}");
    };
    match crate::explain::tables::ntstatus_name(u) {
        Some(name) => format!("crashed with 0x{u:08X} ({name})"),
        None => format!("crashed with NTSTATUS 0x{u:08X}"),
    }
}

/// Child processes still running, by PID (each leads its own process group on Unix).
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn live(pid: u32, add: bool) {
    if let Ok(mut v) = LIVE.lock() {
        if add {
            v.push(pid);
        } else {
            v.retain(|p| *p != pid);
        }
    }
}

/// Kills a child's whole process group (a helper's own children included).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: a plain system call; a negative PID names the group the child leads.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

/// Kills every child process group still running: called when gpudoctor exits, so that a helper
/// stuck in a hung driver call (abandoned with its probe at the deadline) never outlives it.
pub fn kill_helpers() {
    let pids: Vec<u32> = LIVE
        .lock()
        .map(|mut v| v.drain(..).collect())
        .unwrap_or_default();
    #[cfg(unix)]
    for pid in pids {
        if let Ok(pid) = i32::try_from(pid) {
            // SAFETY: as in kill_group.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    #[cfg(windows)]
    for pid in pids {
        terminate(pid);
    }
    #[cfg(not(any(unix, windows)))]
    let _ = pids;
}

/// Ends a helper by PID (Windows has no process groups to signal). A helper left running would
/// also hold gpudoctor's own standard output open: Windows children inherit every inheritable
/// handle, so whoever reads gpudoctor's output would wait for the helper too.
#[cfg(windows)]
fn terminate(pid: u32) {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, TerminateProcess, PROCESS_TERMINATE};
    // SAFETY: plain process calls on a handle opened and closed here.
    unsafe {
        let h = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if !h.is_null() {
            TerminateProcess(h, 1);
            CloseHandle(h);
        }
    }
}

/// Runs `cmd` with no standard input, collecting at most `cap` bytes of each output stream,
/// and kills it (its process group on Unix) if it has not exited within `limit`.
pub fn run(cmd: Command, limit: Duration, cap: usize) -> std::io::Result<RunOutput> {
    run_with_input(cmd, None, limit, cap)
}

/// [`run`] with `input` written to the child's standard input (then closed) from a thread of its
/// own, so that a child that never reads cannot block gpudoctor.
pub fn run_with_input(
    mut cmd: Command,
    input: Option<Vec<u8>>,
    limit: Duration,
    cap: usize,
) -> std::io::Result<RunOutput> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    live(child.id(), true);
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&bytes);
        });
    }
    let out_reader = child.stdout.take().map(|s| reader_thread(s, cap));
    let err_reader = child.stderr.take().map(|s| reader_thread(s, cap));
    let deadline = Instant::now() + limit;
    let mut status = None;
    let mut timed_out = false;
    let mut nap = Duration::from_micros(200);
    loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                status = Some(s);
                break;
            }
            Ok(None) => {}
            Err(_) => break,
        }
        if Instant::now() >= deadline {
            timed_out = true;
            kill_group(&mut child);
            status = child.wait().ok();
            break;
        }
        thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
    live(child.id(), false);
    let collect =
        |h: Option<thread::JoinHandle<Vec<u8>>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(RunOutput {
        status,
        stdout: collect(out_reader),
        stderr: collect(err_reader),
        timed_out,
    })
}

fn reader_thread<R: Read + Send + 'static>(mut r: R, cap: usize) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if buf.len() < cap {
                        let take = n.min(cap - buf.len());
                        buf.extend_from_slice(&chunk[..take]);
                    }
                }
            }
        }
        buf
    })
}

#[cfg(test)]
#[path = "deadline_tests.rs"]
mod tests;
