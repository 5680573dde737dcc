//! The command as a child process on Windows: started with the standard input gpudoctor has,
//! its output and errors through pipes, every byte passed on unchanged and copied into the
//! [`Tail`]. Ctrl-C and Ctrl-Break reach the command from the console itself (every process
//! attached to it gets the event), so nothing is forwarded. Windows has no pseudo-terminal to
//! lend: a program that colours only a console sees pipes, as it would under `| Tee-Object`.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::tail::Tail;
pub use super::{Ended, SpawnError};

/// A started command.
pub struct Running {
    pub pid: u32,
    child: Child,
    relays: Vec<JoinHandle<()>>,
}

/// Starts `argv` with its output relayed to `out` and `err` and copied into `tail`.
pub fn spawn(
    argv: &[OsString],
    out: File,
    err: File,
    tail: Arc<Mutex<Tail>>,
) -> Result<Running, SpawnError> {
    let Some((prog, args)) = argv.split_first() else {
        return Err(SpawnError::no_command());
    };
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| SpawnError::of(prog, &e))?;
    let mut relays = Vec::new();
    let streams: [(Option<Box<dyn Read + Send>>, File); 2] = [
        (
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            out,
        ),
        (
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            err,
        ),
    ];
    for (i, (from, to)) in streams.into_iter().enumerate() {
        let Some(from) = from else { continue };
        let tail = tail.clone();
        if let Ok(h) = std::thread::Builder::new()
            .name(format!("run-relay-{i}"))
            .spawn(move || super::relay(from, to, tail))
        {
            relays.push(h);
        }
    }
    Ok(Running {
        pid: child.id(),
        child,
        relays,
    })
}

impl Running {
    /// Waits for the command to end; then waits for its output to drain (at most `drain` more:
    /// a process it started may hold the pipes open). Returns how it ended and its peak working
    /// set (bytes), which Windows keeps until the process handle is closed.
    pub fn wait(mut self, drain: Duration) -> (Ended, Option<u64>) {
        let ended = loop {
            match self.child.wait() {
                Ok(s) => break Ended::Exited(s.code().unwrap_or(1)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break Ended::Exited(1),
            }
        };
        let peak = peak_working_set(&self.child);
        super::drain(std::mem::take(&mut self.relays), drain);
        (ended, peak)
    }
}

/// PeakWorkingSetSize of an ended process (K32GetProcessMemoryInfo on its handle).
fn peak_working_set(child: &Child) -> Option<u64> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    // SAFETY: a plain C struct, all zeros valid.
    let mut c: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    c.cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    // SAFETY: the handle is the child's, open while `child` lives; `c` is sized as declared.
    let ok = unsafe { K32GetProcessMemoryInfo(child.as_raw_handle(), &mut c, c.cb) };
    (ok != 0 && c.PeakWorkingSetSize > 0).then_some(c.PeakWorkingSetSize as u64)
}
