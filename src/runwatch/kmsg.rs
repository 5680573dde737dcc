//! New kernel-log lines during a run: /dev/kmsg opened at the start and read from its end, so
//! only what the kernel says while the command runs is seen (an Xid, an NVRM error, the OOM
//! killer naming a process), parsed by [`crate::faults::logparse`], the parser `check` uses.
//! Where /dev/kmsg cannot be read (dmesg_restrict without root) the run says so and goes on.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::faults::logparse::{LogEvent, LogParser};

/// Follows the kernel log from the moment it is opened.
pub struct KernelFollower {
    f: File,
    parser: LogParser,
    /// An incomplete last line (a plain file read in chunks; /dev/kmsg gives whole records).
    partial: Vec<u8>,
}

/// Records read at most per call (a flood of messages must not stall the sampler).
const MAX_RECORDS: usize = 20_000;

impl KernelFollower {
    /// Opens `path` (/dev/kmsg, or a plain file in tests) at its end.
    pub fn open(path: &Path) -> Result<KernelFollower, String> {
        if cfg!(windows) {
            return Err(
                "Windows has no kernel log to follow; the System event log is read when the run ends"
                    .into(),
            );
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true);
        #[cfg(unix)]
        opts.custom_flags(libc::O_NONBLOCK);
        let mut f = opts
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // On /dev/kmsg, SEEK_END moves past the last record (kernel Documentation/ABI/testing/dev-kmsg).
        f.seek(SeekFrom::End(0))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(KernelFollower {
            f,
            parser: LogParser::new(),
            partial: Vec::new(),
        })
    }

    /// The events in the lines written since the last call, each with its line (the message
    /// only, cleaned).
    pub fn poll(&mut self) -> Vec<(LogEvent, String)> {
        let mut out = Vec::new();
        // A /dev/kmsg record can be up to about 8 KiB; a smaller read fails with EINVAL.
        let mut buf = vec![0u8; 16 * 1024];
        for _ in 0..MAX_RECORDS {
            let n = match self.f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // EPIPE: records were overwritten before we read them; go on from the next.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(_) => break,
            };
            self.partial.extend_from_slice(buf.get(..n).unwrap_or(&[]));
            while let Some(nl) = self.partial.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.partial.drain(..=nl).collect();
                let text = String::from_utf8_lossy(&line);
                if let Some(ev) = self.feed(&text) {
                    out.push(ev);
                }
            }
            if self.partial.len() > 64 * 1024 {
                self.partial.clear();
            }
        }
        out
    }

    fn feed(&mut self, raw: &str) -> Option<(LogEvent, String)> {
        // Continuation lines of a /dev/kmsg record (" SUBSYSTEM=pci") carry no message.
        if raw.starts_with(' ') {
            return None;
        }
        let msg = kmsg_message(raw.trim_end());
        let ev = self.parser.feed(msg)?;
        Some((ev, crate::sanitize::clean_line(msg, 300)))
    }
}

/// The message of a /dev/kmsg record ("6,1234,5678901,-;NVRM: Xid ..."); other lines as they are.
fn kmsg_message(line: &str) -> &str {
    match line.split_once(';') {
        Some((head, msg))
            if !head.is_empty()
                && head.bytes().all(|b| {
                    b.is_ascii_digit() || b == b',' || b == b'-' || b.is_ascii_alphabetic()
                })
                && head.matches(',').count() >= 3 =>
        {
            msg
        }
        _ => line,
    }
}

#[cfg(test)]
#[path = "kmsg_tests.rs"]
mod tests;
