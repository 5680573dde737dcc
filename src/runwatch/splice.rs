//! Linux: the command's output passed on through a pipe without copying it through gpudoctor.
//! `tee(2)` duplicates what the command wrote into a capture pipe (page references, no copy) and
//! `splice(2)` moves it on to gpudoctor's output; the capture pipes hold the newest output until
//! it is asked for ([`Tail::bytes`]), and the oldest ones are closed once newer ones hold the
//! tail's capacity. A command that writes in small pieces fills a pipe's slots with little data,
//! so beyond [`MAX_PIPES`] the oldest pipe is read into the ring (one copy, as the plain relay
//! makes). Where either end refuses (not a pipe; an output `splice` cannot write to) before any
//! byte has moved, or no capture pipe can be made, the caller relays the rest by copying. Either
//! relay lets a trickle of small writes gather for a millisecond ([`GATHER`]).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};

use super::tail::{errno, queued, read_queued, Capture, Tail};

/// Bytes a capture pipe is asked to hold (the unprivileged maximum by default,
/// /proc/sys/fs/pipe-max-size; a smaller pipe works too, with more of them).
const CAPTURE_PIPE_BYTES: libc::c_int = 1 << 20;

/// Capture pipes kept before the oldest is read into the ring.
pub const MAX_PIPES: usize = 8;

/// A command that writes a line at a time (Python with PYTHONUNBUFFERED, `print(flush=True)`)
/// would wake the relay, and the relay the reader after it, for every line: where less than
/// [`GATHER_BYTES`] is waiting, the relay lets output gather this long first. The command does
/// not wait meanwhile (its pipe holds 1 MiB), and a person does not see a millisecond.
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);
const GATHER_BYTES: usize = 64 << 10;

/// Lets output gather on `fd` (see [`GATHER`]) unless the writer has closed it.
fn gather(fd: RawFd, came: libc::c_short) {
    if came & libc::POLLHUP == 0 && queued(fd) < GATHER_BYTES {
        std::thread::sleep(GATHER);
    }
}

/// The copying relay's source (a pseudo-terminal, or a pipe where splice is refused): waits
/// for output, lets it gather, then reads.
pub struct Gathering(pub File);

impl std::io::Read for Gathering {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(came) = wait(self.0.as_raw_fd(), libc::POLLIN) {
            gather(self.0.as_raw_fd(), came);
        }
        self.0.read(buf)
    }
}

/// Set (to anything but 0) to relay by copying, as on other systems (for comparing the two).
pub const COPY_ENV: &str = "GPUDOCTOR_RUN_COPY";

fn lock(tail: &Mutex<Tail>) -> MutexGuard<'_, Tail> {
    match tail.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn capture_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: a plain fcntl on a descriptor we own; best effort.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, CAPTURE_PIPE_BYTES) };
    Ok((r, w))
}

impl Tail {
    /// The newest capture pipe's number.
    fn newest(&self) -> Option<u64> {
        self.pending.back().map(|c| c.id)
    }

    /// A new capture pipe (read end) after the others: closes the oldest while the newer ones
    /// hold the capacity, and reads the oldest into the ring while there are too many. Returns
    /// its number.
    fn add_pipe(&mut self, fd: OwnedFd) -> u64 {
        self.captures += 1;
        let id = self.captures;
        self.pending.push_back(Capture { id, fd });
        let sizes: Vec<usize> = self
            .pending
            .iter()
            .map(|c| queued(c.fd.as_raw_fd()))
            .collect();
        let mut newer: usize = sizes.iter().skip(1).sum();
        let mut i = 0;
        while self.pending.len() > 1 && newer >= self.capacity() {
            // Everything in the ring and this pipe is older than the newest `cap` bytes.
            self.pending.pop_front();
            self.clear_ring();
            i += 1;
            newer -= sizes.get(i).copied().unwrap_or(0);
        }
        while self.pending.len() > MAX_PIPES {
            if let Some(c) = self.pending.pop_front() {
                let data = read_queued(c.fd.as_raw_fd());
                self.keep(&data);
            }
        }
        id
    }

    /// Forgets capture pipe `id` and `n` counted bytes: a duplicate of output not passed on.
    fn undo(&mut self, id: u64, n: usize) {
        self.pending.retain(|c| c.id != id);
        self.total = self.total.saturating_sub(n as u64);
    }
}

/// Waits until `fd` is ready for `events`; the events that came (POLLHUP: the other end is
/// closed), or None when it never will be ready (an error other than an interrupted wait).
fn wait(fd: RawFd, events: libc::c_short) -> Option<libc::c_short> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        // SAFETY: poll on one pollfd we own.
        let r = unsafe { libc::poll(&mut p, 1, -1) };
        if r > 0 {
            return Some(p.revents);
        }
        if r < 0 && errno() != libc::EINTR {
            return None;
        }
    }
}

/// Why [`relay`] stopped.
pub enum Relayed {
    /// The command closed its output, or the destination did (then the command meets a closed
    /// pipe, as it would without gpudoctor).
    Done,
    /// Relay the rest by copying: either end refused before any byte moved, or no capture
    /// pipe could be made.
    Copy(File, File),
}

/// Passes what arrives on the pipe `from` to `to` until the command closes it, keeping the
/// tail in capture pipes.
pub fn relay(from: File, to: File, tail: Arc<Mutex<Tail>>) -> Relayed {
    if std::env::var_os(COPY_ENV).is_some_and(|v| v != "0" && !v.is_empty()) {
        return Relayed::Copy(from, to);
    }
    let (src, dst) = (from.as_raw_fd(), to.as_raw_fd());
    let mut moved: u64 = 0;
    // This relay's capture pipe: its number and write end.
    let mut cur: Option<(u64, OwnedFd)> = None;
    loop {
        let Some(came) = wait(src, libc::POLLIN) else {
            return Relayed::Done;
        };
        gather(src, came);
        let (n, e, id) = {
            let mut t = lock(&tail);
            let w = match &cur {
                Some((id, w)) if t.newest() == Some(*id) => w.as_raw_fd(),
                _ => match capture_pipe() {
                    Ok((r, w)) => {
                        let raw = w.as_raw_fd();
                        cur = Some((t.add_pipe(r), w));
                        raw
                    }
                    Err(_) => return Relayed::Copy(from, to),
                },
            };
            // SAFETY: tee between two pipe descriptors we hold.
            let n =
                unsafe { libc::tee(src, w, CAPTURE_PIPE_BYTES as usize, libc::SPLICE_F_NONBLOCK) };
            let e = if n < 0 { errno() } else { 0 };
            let waiting = if e == libc::EAGAIN { queued(src) } else { 0 };
            if n > 0 {
                t.total += n as u64;
            } else if e == libc::EAGAIN && waiting == 0 && came & libc::POLLHUP != 0 {
                // The command closed its output (tee says EAGAIN, not 0, when the capture
                // pipe is full).
                return Relayed::Done;
            } else if waiting > 0 || e == libc::EPIPE {
                // The capture pipe is full (or was closed): start another.
                cur = None;
                continue;
            }
            (n, e, cur.as_ref().map_or(0, |c| c.0))
        };
        if n == 0 {
            return Relayed::Done;
        }
        if n < 0 {
            match e {
                libc::EINTR | libc::EAGAIN => continue,
                libc::EINVAL if moved == 0 => {
                    lock(&tail).undo(id, 0);
                    return Relayed::Copy(from, to);
                }
                _ => return Relayed::Done,
            }
        }
        let mut left = n as usize;
        while left > 0 {
            // SAFETY: splice from our pipe to the output descriptor we hold; no offsets.
            let m = unsafe {
                libc::splice(
                    src,
                    std::ptr::null_mut(),
                    dst,
                    std::ptr::null_mut(),
                    left,
                    libc::SPLICE_F_MOVE,
                )
            };
            if m > 0 {
                left = left.saturating_sub(m as usize);
                moved += m as u64;
                continue;
            }
            let e = errno();
            match (m, e) {
                (0, _) => return Relayed::Done,
                (_, libc::EINTR) => {}
                (_, libc::EAGAIN) => {
                    if wait(dst, libc::POLLOUT).is_none() {
                        return Relayed::Done;
                    }
                }
                (_, libc::EINVAL) if moved == 0 => {
                    lock(&tail).undo(id, n as usize);
                    return Relayed::Copy(from, to);
                }
                _ => return Relayed::Done,
            }
        }
    }
}

#[cfg(test)]
#[path = "splice_tests.rs"]
mod tests;
