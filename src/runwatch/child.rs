//! The command as a child process: started with the standard input gpudoctor has, its output
//! through a pseudo-terminal where gpudoctor's own output is a terminal (progress bars, colours
//! and tqdm behave as they would without gpudoctor) and through pipes elsewhere; every byte it
//! writes is passed on unchanged and kept in the [`Tail`] (through a pipe without copying it,
//! [`super::splice`]; output to a regular file goes there directly). Signals sent to gpudoctor reach
//! the command ([`crate::interrupt::install_forwarding`]), and the command dies with gpudoctor
//! (`PR_SET_PDEATHSIG`), so it is never left orphaned.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::tail::Tail;

pub use super::{Ended, SpawnError};

/// A started command.
pub struct Running {
    pub pid: u32,
    /// Outputs that are regular files, read back at the end.
    files: Vec<FileWatch>,
    tail: Arc<Mutex<Tail>>,
    relays: Vec<JoinHandle<()>>,
    /// Set once the child is waited for but not yet reaped: from then on its pid must not be
    /// signalled (it could be reused after reaping).
    gone: Arc<Mutex<bool>>,
    /// The pseudo-terminal masters, to pass on window-size changes.
    ptys: Vec<Arc<File>>,
    /// Set when the forwarder must stop.
    done: Arc<AtomicBool>,
    forwarder: Option<JoinHandle<()>>,
}

/// An output that is a regular file: the command writes to it directly, and what it wrote is
/// read back from where the file ended when the command started.
struct FileWatch {
    read: File,
    dev_ino: (u64, u64),
    start: u64,
}

impl FileWatch {
    /// When `f` is a regular file that can be opened again for reading (and is not one already
    /// watched: `> log 2>&1` is one file).
    fn of(f: &File, already: &[FileWatch]) -> Option<FileWatch> {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().ok()?;
        if !m.file_type().is_file() {
            return None;
        }
        let dev_ino = (m.dev(), m.ino());
        if already.iter().any(|w| w.dev_ino == dev_ino) {
            // Same file: read back once; the descriptor still goes to the command.
            return Some(FileWatch {
                read: File::open("/dev/null").ok()?,
                dev_ino: (u64::MAX, u64::MAX),
                start: 0,
            });
        }
        let read = File::open(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
        Some(FileWatch {
            read,
            dev_ino,
            start: m.len(),
        })
    }

    /// The last `cap` bytes written since the start, and how many were written.
    fn read_back(&mut self, cap: u64) -> (Vec<u8>, u64) {
        use std::io::{Seek, SeekFrom};
        let end = self.read.metadata().map(|m| m.len()).unwrap_or(0);
        let written = end.saturating_sub(self.start);
        let from = self.start.max(end.saturating_sub(cap));
        let mut buf = Vec::new();
        if self.read.seek(SeekFrom::Start(from)).is_ok() {
            let _ = (&self.read).take(end - from).read_to_end(&mut buf);
        }
        (buf, written)
    }
}

/// One output of the child: where gpudoctor reads it and where it goes.
struct Stream {
    from: File,
    to: File,
    /// `from` is a pipe (not a pseudo-terminal): passed on with splice where `to` allows.
    pipe: bool,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // A bigger pipe means fewer switches between the command and the relay on heavy output
    // (best effort: the default 64 KiB works too).
    // SAFETY: a plain fcntl on a descriptor we own.
    unsafe { libc::fcntl(r.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
    Ok((r, w))
}

/// A pseudo-terminal in raw mode (bytes pass as written: the real terminal does its own newline
/// translation), sized like the terminal `like` is.
fn pty(like: &File) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut master = -1;
    let mut slave = -1;
    // SAFETY: openpty fills two descriptors we then own; the winsize is read into a zeroed
    // struct and only passed on when TIOCGWINSZ succeeded.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        let have_size = libc::ioctl(like.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) == 0;
        let wsp = if have_size {
            &mut ws as *mut libc::winsize
        } else {
            std::ptr::null_mut()
        };
        if libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            wsp,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let (m, s) = (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave));
        for fd in [master, slave] {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(slave, &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(slave, libc::TCSANOW, &t);
        }
        Ok((m, s))
    }
}

fn is_tty(f: &File) -> bool {
    // SAFETY: isatty on a descriptor we hold.
    unsafe { libc::isatty(f.as_raw_fd()) == 1 }
}

/// The device of a terminal (two descriptors on the same terminal share one pseudo-terminal,
/// so the command's stdout and stderr keep their order there).
fn rdev(f: &File) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    f.metadata().ok().map(|m| m.rdev())
}

/// Starts `argv` with its output relayed to `out` (gpudoctor's real stdout) and `err`.
pub fn spawn(
    argv: &[OsString],
    out: File,
    err: File,
    tail: Arc<Mutex<Tail>>,
) -> Result<Running, SpawnError> {
    let fail = |e: std::io::Error| SpawnError {
        message: format!("cannot set up the command's output: {e}"),
        status: 126,
    };
    let Some((prog, args)) = argv.split_first() else {
        return Err(SpawnError::no_command());
    };
    let mut cmd = Command::new(prog);
    cmd.args(args).stdin(Stdio::inherit());
    let mut streams: Vec<Stream> = Vec::new();
    let (out_tty, err_tty) = (is_tty(&out), is_tty(&err));
    let shared_tty = out_tty && err_tty && rdev(&out).is_some() && rdev(&out) == rdev(&err);
    let mut ptys = Vec::new();
    let mut watched: Vec<FileWatch> = Vec::new();
    if shared_tty {
        let (m, s) = pty(&out).map_err(fail)?;
        let s2 = s.try_clone().map_err(fail)?;
        cmd.stdout(Stdio::from(s)).stderr(Stdio::from(s2));
        let m = File::from(m);
        ptys.push(Arc::new(m.try_clone().map_err(fail)?));
        streams.push(Stream {
            from: m,
            to: out,
            pipe: false,
        });
    } else {
        for (to, tty, is_out) in [(out, out_tty, true), (err, err_tty, false)] {
            // Output to a regular file (a job's log) goes there directly: nothing to relay, no
            // cost; the tail is read back from the file at the end.
            if let Some(w) = FileWatch::of(&to, &watched) {
                if is_out {
                    cmd.stdout(Stdio::from(to));
                } else {
                    cmd.stderr(Stdio::from(to));
                }
                watched.push(w);
                continue;
            }
            let (r, w) = if tty { pty(&to) } else { pipe() }.map_err(fail)?;
            if is_out {
                cmd.stdout(Stdio::from(w));
            } else {
                cmd.stderr(Stdio::from(w));
            }
            let r = File::from(r);
            if tty {
                ptys.push(Arc::new(r.try_clone().map_err(fail)?));
            }
            streams.push(Stream {
                from: r,
                to,
                pipe: !tty,
            });
        }
    }
    die_with_parent(&mut cmd);
    let child = cmd.spawn().map_err(|e| SpawnError::of(prog, &e))?;
    // The write ends now live only in the child: EOF comes when it (and its children) close them.
    drop(cmd);
    let pid = child.id();
    drop(child);
    let relays = start_relays(streams, &tail);
    let gone = Arc::new(Mutex::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let forwarder = {
        let (gone, done, ptys, out_like) = (gone.clone(), done.clone(), ptys.clone(), dup_stdout());
        std::thread::Builder::new()
            .name("run-signals".into())
            .spawn(move || forward(pid, gone, done, ptys, out_like))
            .ok()
    };
    Ok(Running {
        pid,
        files: watched,
        tail,
        relays,
        gone,
        ptys,
        done,
        forwarder,
    })
}

/// The command dies with gpudoctor (the main thread, which waits for it), also when gpudoctor
/// died before it started.
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure calls only async-signal-safe functions (prctl, getppid, kill).
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            // The command dies with gpudoctor (the main thread, which waits for it).
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// One thread per stream that copies the command's output on (splice(2) for a pipe), keeping
/// its tail.
fn start_relays(streams: Vec<Stream>, tail: &Arc<Mutex<Tail>>) -> Vec<JoinHandle<()>> {
    streams
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let tail = tail.clone();
            std::thread::Builder::new()
                .name(format!("run-relay-{i}"))
                .spawn(move || {
                    let (from, to) = if s.pipe {
                        match super::splice::relay(s.from, s.to, tail.clone()) {
                            super::splice::Relayed::Done => return,
                            super::splice::Relayed::Copy(f, t) => (f, t),
                        }
                    } else {
                        (s.from, s.to)
                    };
                    super::relay(super::splice::Gathering(from), to, tail)
                })
                .ok()
        })
        .collect()
}

fn dup_stdout() -> Option<File> {
    crate::outguard::file().ok()
}

/// Passes signals on to the command until it is gone, and the terminal's size to the
/// pseudo-terminals.
fn forward(
    pid: u32,
    gone: Arc<Mutex<bool>>,
    done: Arc<AtomicBool>,
    ptys: Vec<Arc<File>>,
    out_like: Option<File>,
) {
    while !done.load(Ordering::SeqCst) {
        let sigs = crate::interrupt::take_forward();
        if !sigs.is_empty() {
            if let Ok(g) = gone.lock() {
                if !*g {
                    for s in sigs {
                        // SAFETY: the child is not yet reaped (checked under the lock that the
                        // waiter takes before reaping), so the pid is still its own.
                        unsafe { libc::kill(pid as libc::pid_t, s) };
                    }
                }
            }
        }
        if crate::interrupt::take_resized() {
            if let Some(o) = &out_like {
                // SAFETY: ioctls on descriptors we hold, with a zeroed winsize.
                unsafe {
                    let mut ws: libc::winsize = std::mem::zeroed();
                    if libc::ioctl(o.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) == 0 {
                        for p in &ptys {
                            libc::ioctl(p.as_raw_fd(), libc::TIOCSWINSZ, &ws);
                        }
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Running {
    /// Waits for the command to end and reaps it; then waits for its output to drain (at most
    /// `drain` more: a daemon it started may hold the output open). Returns how it ended and
    /// its peak resident memory (ru_maxrss, bytes) as the kernel counted it.
    pub fn wait(mut self, drain: Duration) -> (Ended, Option<u64>) {
        // Wait without reaping, mark it gone, then reap: the forwarder never signals a pid that
        // could already belong to another process.
        loop {
            // SAFETY: waitid with WNOWAIT on our own child, into a zeroed siginfo.
            let r = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 {
                break;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break;
            }
        }
        let mut status = 0;
        // SAFETY: a zeroed rusage filled by wait4 on our own child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        {
            let mut g = match self.gone.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            *g = true;
            loop {
                // SAFETY: as above.
                let r = unsafe { libc::wait4(self.pid as libc::pid_t, &mut status, 0, &mut ru) };
                if r >= 0
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
        }
        self.done.store(true, Ordering::SeqCst);
        let ended = if libc::WIFSIGNALED(status) {
            Ended::Signaled {
                signal: libc::WTERMSIG(status),
                core_dumped: libc::WCOREDUMP(status),
            }
        } else {
            Ended::Exited(libc::WEXITSTATUS(status))
        };
        // ru_maxrss is in KiB on Linux.
        let maxrss = (ru.ru_maxrss > 0).then(|| ru.ru_maxrss as u64 * 1024);
        super::drain(std::mem::take(&mut self.relays), drain);
        self.ptys.clear();
        if let Ok(mut t) = self.tail.lock() {
            for w in &mut self.files {
                let (bytes, written) = w.read_back(t.capacity() as u64);
                t.push_counted(&bytes, written);
            }
        }
        if let Some(f) = self.forwarder.take() {
            let _ = f.join();
        }
        (ended, maxrss)
    }
}
