//! The last bytes of the command's output: a fixed-size ring that keeps the newest `cap` bytes
//! of everything written through it, so a crash's traceback is at hand however long the run.
//! On Linux the newest part may still sit in capture pipes ([`super::splice`]: output passed on
//! without copying it through gpudoctor); they are read into the ring when the bytes are asked
//! for.

#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// A ring buffer of the newest bytes.
#[derive(Debug)]
pub struct Tail {
    buf: Vec<u8>,
    cap: usize,
    /// Where the oldest byte is, once the ring is full.
    start: usize,
    /// Every byte pushed, kept or not.
    pub(super) total: u64,
    /// Capture pipes holding output newer than the ring's, oldest first.
    #[cfg(target_os = "linux")]
    pub(super) pending: std::collections::VecDeque<Capture>,
    /// Capture pipes made so far (each one's number).
    #[cfg(target_os = "linux")]
    pub(super) captures: u64,
}

impl Tail {
    pub fn new(cap: usize) -> Tail {
        Tail {
            buf: Vec::new(),
            cap: cap.max(1),
            start: 0,
            total: 0,
            #[cfg(target_os = "linux")]
            pending: Default::default(),
            #[cfg(target_os = "linux")]
            captures: 0,
        }
    }

    /// Appends `data`, dropping the oldest bytes beyond the capacity.
    pub fn push(&mut self, data: &[u8]) {
        self.settle();
        self.total += data.len() as u64;
        self.keep(data);
    }

    /// Forgets the kept bytes (all of them are older than bytes kept elsewhere).
    #[cfg(target_os = "linux")]
    pub(super) fn clear_ring(&mut self) {
        self.buf.clear();
        self.start = 0;
    }

    /// Appends `data` to the ring without counting it (counted when it passed).
    pub(super) fn keep(&mut self, data: &[u8]) {
        if data.len() >= self.cap {
            let keep = data.get(data.len() - self.cap..).unwrap_or(data);
            self.buf.clear();
            self.buf.extend_from_slice(keep);
            self.start = 0;
            return;
        }
        let room = self.cap - self.buf.len();
        if room > 0 {
            // Still filling: append what fits.
            let (now, later) = data.split_at(data.len().min(room));
            self.buf.extend_from_slice(now);
            if later.is_empty() {
                return;
            }
            return self.overwrite(later);
        }
        self.overwrite(data);
    }

    /// Full ring: writes over the oldest bytes (data is shorter than the capacity).
    fn overwrite(&mut self, data: &[u8]) {
        let first = data.len().min(self.cap - self.start);
        let (a, b) = data.split_at(first);
        if let Some(dst) = self.buf.get_mut(self.start..self.start + a.len()) {
            dst.copy_from_slice(a);
        }
        if let Some(dst) = self.buf.get_mut(..b.len()) {
            dst.copy_from_slice(b);
        }
        self.start = (self.start + data.len()) % self.cap;
    }

    /// Appends `data`, the end of `total` bytes that passed elsewhere (an output read back
    /// from its file).
    pub fn push_counted(&mut self, data: &[u8], total: u64) {
        self.push(data);
        self.total += total.saturating_sub(data.len() as u64);
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Reads what the capture pipes hold into the ring (they stay open: output may still come).
    #[cfg(not(target_os = "linux"))]
    fn settle(&mut self) {}

    /// Reads what the capture pipes hold into the ring, oldest first; closes all but the
    /// newest, which a relay may still be writing to.
    #[cfg(target_os = "linux")]
    fn settle(&mut self) {
        while let Some(c) = self.pending.front() {
            let data = read_queued(c.fd.as_raw_fd());
            self.keep(&data);
            if self.pending.len() == 1 {
                break;
            }
            self.pending.pop_front();
        }
    }

    /// The kept bytes, oldest first.
    pub fn bytes(&mut self) -> Vec<u8> {
        self.settle();
        let (old, new) = self.buf.split_at(self.start.min(self.buf.len()));
        let mut v = Vec::with_capacity(self.buf.len());
        v.extend_from_slice(new);
        v.extend_from_slice(old);
        v
    }

    /// Bytes pushed in all.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// A capture pipe's read end, with its number: the command's stdout and stderr each have a
/// relay, and the pipes hold their bytes in the order they came, so a relay writes only into
/// the newest pipe, and only when that one is its own.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub struct Capture {
    pub(super) id: u64,
    pub(super) fd: OwnedFd,
}

#[cfg(target_os = "linux")]
pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Bytes waiting in a pipe.
#[cfg(target_os = "linux")]
pub(super) fn queued(fd: RawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } != 0 {
        return 0;
    }
    usize::try_from(n).unwrap_or(0)
}

/// Reads everything a pipe holds now (FIONREAD bytes: the read never waits).
#[cfg(target_os = "linux")]
pub(super) fn read_queued(fd: RawFd) -> Vec<u8> {
    let mut want = queued(fd);
    let mut buf = vec![0u8; want];
    let mut at = 0;
    while want > 0 {
        let Some(dst) = buf.get_mut(at..) else { break };
        // SAFETY: reading into the unfilled part of our own buffer.
        let n = unsafe { libc::read(fd, dst.as_mut_ptr().cast(), dst.len()) };
        if n > 0 {
            at += n as usize;
            want = want.saturating_sub(n as usize);
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            break;
        }
    }
    buf.truncate(at);
    buf
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
