//! Every file gpudoctor writes (`snapshot -o`, `run --report` and `--save`, `matrix update`,
//! `man --dir`) goes through [`write`], so that nothing the user owns is destroyed:
//!
//! - the bytes go to a new temporary file in the target's own folder, are synced, and only then
//!   take the target's name (rename, or a hard link when nothing may be replaced), so a full
//!   disk or a crash leaves the old file whole and no half-written one;
//! - only a regular file is ever replaced, and only when the caller allows it; a symbolic
//!   link, a directory, a FIFO, a socket or a device is refused with a message that says what
//!   it is and what to do instead (run as root, `-o /dev/full --force` once replaced the device
//!   node with a regular file);
//! - `-` is standard output, and the streams a shell names as files (`/dev/stdout`,
//!   `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`, `/dev/null`, `/dev/tty`; `NUL` and `CON`
//!   on Windows) are written to as streams, never replaced;
//! - every failure (no space, a read-only folder, a closed descriptor) is an error that names
//!   the path, for the caller to turn into exit 2.

use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether an existing regular file at the target may be replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// An existing file is an error ([`io::ErrorKind::AlreadyExists`]).
    Keep,
    /// An existing regular file is replaced (its permissions are kept); anything else that is
    /// not a regular file is still refused.
    Replace,
}

/// What [`write`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// A new file was created.
    Created,
    /// An existing regular file was replaced.
    Replaced,
    /// The bytes went to a stream (standard output or error, an open descriptor, a terminal,
    /// /dev/null); nothing was created or replaced.
    Stream,
}

/// Where a path leads, decided from its name and `lstat` alone (nothing is opened).
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// gpudoctor's standard output (the report's own descriptor, see [`crate::outguard`]).
    Stdout,
    /// Standard error.
    Stderr,
    /// An open file descriptor named as `/dev/fd/N` or `/proc/self/fd/N` (N > 2).
    Descriptor(i32),
    /// A device that is a sink by nature (`/dev/null`, `/dev/tty`, `NUL`, `CON`), opened for
    /// writing without creating or truncating anything.
    Device(PathBuf),
    /// A regular file, existing or not.
    File { path: PathBuf, exists: bool },
}

/// Decides what `path` is. A symbolic link, a directory, a FIFO, a socket or any other device
/// is an error whose message says what to do instead.
pub fn target(path: &Path) -> io::Result<Target> {
    let text = path.to_string_lossy();
    if text == "-" {
        return Ok(Target::Stdout);
    }
    if let Some(t) = stream_by_name(&text) {
        return Ok(t);
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::File {
            path: path.to_path_buf(),
            exists: false,
        }),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => {
            let to = std::fs::read_link(path)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            Err(refused(format!(
                "it is a symbolic link{to}; gpudoctor does not write through links: name the file itself, or another path"
            )))
        }
        Ok(m) if m.is_dir() => Err(refused(
            "it is a directory: name a file inside it".to_string(),
        )),
        Ok(m) if m.is_file() => Ok(Target::File {
            path: path.to_path_buf(),
            exists: true,
        }),
        Ok(m) => Err(refused(format!(
            "it is {}, not a regular file; gpudoctor writes only regular files: name a new file, or use `-` for standard output",
            special_kind(&m)
        ))),
    }
}

/// Writes `bytes` to `path` as the module header describes.
pub fn write(path: &Path, bytes: &[u8], existing: Existing) -> io::Result<Written> {
    match target(path)? {
        Target::Stdout => {
            let mut w = crate::outguard::writer();
            w.write_all(bytes)?;
            w.flush()?;
            Ok(Written::Stream)
        }
        Target::Stderr => {
            let mut w = io::stderr();
            w.write_all(bytes)?;
            w.flush()?;
            Ok(Written::Stream)
        }
        Target::Descriptor(fd) => {
            let mut f = descriptor(fd)?;
            f.write_all(bytes)?;
            f.flush()?;
            Ok(Written::Stream)
        }
        Target::Device(p) => {
            let mut f = std::fs::OpenOptions::new().write(true).open(p)?;
            f.write_all(bytes)?;
            f.flush()?;
            Ok(Written::Stream)
        }
        Target::File { path, exists } => {
            if exists && existing == Existing::Keep {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "the file exists; gpudoctor does not overwrite it",
                ));
            }
            replace_file(&path, bytes, existing)
        }
    }
}

/// Refused targets are [`io::ErrorKind::InvalidInput`]: the user named the wrong thing.
fn refused(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// The names that mean a stream, whatever the file system says.
fn stream_by_name(text: &str) -> Option<Target> {
    if cfg!(windows) {
        // Reserved device names, with or without an extension or a `\\.\` prefix.
        let base = text.trim_start_matches(r"\\.\").to_ascii_uppercase();
        let stem = base.split('.').next().unwrap_or("");
        return matches!(stem, "NUL" | "CON").then(|| Target::Device(PathBuf::from(text)));
    }
    let fd = text
        .strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .and_then(|n| n.parse::<i32>().ok());
    match (text, fd) {
        ("/dev/stdout", _) | (_, Some(1)) => Some(Target::Stdout),
        ("/dev/stderr", _) | (_, Some(2)) => Some(Target::Stderr),
        (_, Some(n)) if n > 2 => Some(Target::Descriptor(n)),
        ("/dev/null" | "/dev/tty", _) => Some(Target::Device(PathBuf::from(text))),
        _ => None,
    }
}

/// A writable copy of descriptor `fd` (the original stays open for whoever owns it).
#[cfg(unix)]
fn descriptor(fd: i32) -> io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor number either fails (EBADF) or returns a new
    // descriptor that the File then owns.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("file descriptor {fd} is not open ({e})"),
        ));
    }
    // SAFETY: `dup` is a new descriptor owned by nobody else.
    Ok(unsafe { File::from_raw_fd(dup) })
}

#[cfg(not(unix))]
fn descriptor(fd: i32) -> io::Result<File> {
    Err(refused(format!(
        "file descriptor {fd}: descriptors by number are a Unix facility"
    )))
}

/// What a file that is neither a regular file nor a directory is, in words.
#[cfg(unix)]
pub(crate) fn special_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device (a disk)"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
pub(crate) fn special_kind(_meta: &Metadata) -> &'static str {
    "a device or special file"
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// The temporary file beside `path`: hidden, named for this process, never an existing file.
fn temp_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| refused("the path names no file".to_string()))?;
    let mut last = None;
    for _ in 0..16 {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.gpudoctor-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot create a file in {} ({e}): is the folder there and writable?",
                        dir.display()
                    ),
                ))
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

fn replace_file(path: &Path, bytes: &[u8], existing: Existing) -> io::Result<Written> {
    let (tmp, mut f) = temp_beside(path)?;
    let result = (|| -> io::Result<Written> {
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        // Look again just before the rename: what is there now decides.
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_file() && existing == Existing::Replace => {
                // The replaced file's permissions carry over (a private snapshot stays private).
                let _ = std::fs::set_permissions(&tmp, m.permissions());
                std::fs::rename(&tmp, path)?;
                Ok(Written::Replaced)
            }
            Ok(_) => match target(path)? {
                Target::File { exists: true, .. } => Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "the file exists; gpudoctor does not overwrite it",
                )),
                _ => Err(refused(
                    "something other than a regular file appeared there while writing".to_string(),
                )),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A hard link fails if the name was taken meanwhile: nothing is replaced.
                match std::fs::hard_link(&tmp, path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
                    // File systems without hard links (FAT, some network mounts).
                    Err(_) => std::fs::rename(&tmp, path)?,
                }
                Ok(Written::Created)
            }
            Err(e) => Err(e),
        }
    })();
    // The temporary name goes in every case (after a hard link it is the second name).
    let _ = std::fs::remove_file(&tmp);
    result
}

/// An output error in words a person can act on (the OS text, and what to do where it helps).
pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::StorageFull => format!("{e}: free some space and run it again"),
        io::ErrorKind::BrokenPipe => format!("{e}: the program reading the output stopped first"),
        _ => e.to_string(),
    }
}

#[cfg(test)]
#[path = "safewrite_tests.rs"]
mod tests;
