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
//!   on Windows), FIFOs and sockets are written to as streams, never replaced; a FIFO that no
//!   process reads is an error at once, never a hang, and a stream nobody reads for 10 s is
//!   given up;
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
    /// A device that is a sink by nature (`/dev/null`, `/dev/tty`, `NUL`, `CON`), or a FIFO or
    /// socket: opened for writing without creating or truncating anything.
    Device(PathBuf),
    /// A regular file, existing or not.
    File { path: PathBuf, exists: bool },
}

/// Decides what `path` is. A symbolic link, a directory, or a device that is not a sink is an
/// error whose message says what to do instead.
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
        Ok(m) if is_pipe_or_socket(&m) => Ok(Target::Device(path.to_path_buf())),
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
            write_patiently(&mut crate::outguard::writer(), bytes)?;
            Ok(Written::Stream)
        }
        Target::Stderr => {
            write_patiently(&mut io::stderr(), bytes)?;
            Ok(Written::Stream)
        }
        Target::Descriptor(fd) => {
            write_patiently(&mut descriptor(fd)?, bytes)?;
            Ok(Written::Stream)
        }
        Target::Device(p) => {
            write_patiently(&mut open_stream(&p)?, bytes)?;
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

/// Checks, before long work whose result goes to `path`, that it can be written there: what
/// [`target`] says, and for a file, that its folder takes a new file. Nothing is left behind.
pub fn ready(path: &Path) -> io::Result<Target> {
    let t = target(path)?;
    if let Target::File { path, .. } = &t {
        let (tmp, _f) = temp_beside(path)?;
        let _ = std::fs::remove_file(tmp);
    }
    Ok(t)
}

/// Opens a FIFO, a socket or a sink device for writing, without blocking: a FIFO that no
/// process reads fails at once (ENXIO) rather than hanging gpudoctor.
#[cfg(unix)]
fn open_stream(p: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                io::Error::new(e.kind(), "it is a FIFO that no process is reading")
            } else {
                let what = std::fs::metadata(p)
                    .map(|m| special_kind(&m))
                    .unwrap_or("a stream");
                io::Error::new(e.kind(), format!("cannot open {what} for writing: {e}"))
            }
        })
}

#[cfg(not(unix))]
fn open_stream(p: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new().append(true).open(p)
}

/// Writes all of `bytes` to a stream that may be non-blocking (a FIFO opened so, or a
/// descriptor another program set so); gives up when nothing is taken for 10 s.
fn write_patiently(to: &mut impl Write, mut bytes: &[u8]) -> io::Result<()> {
    let mut idle = std::time::Instant::now();
    while !bytes.is_empty() {
        match to.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = bytes.get(n..).unwrap_or(&[]);
                idle = std::time::Instant::now();
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if idle.elapsed() > std::time::Duration::from_secs(10) {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "nothing read it for 10 s",
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(e) => return Err(e),
        }
    }
    to.flush()
}

#[cfg(unix)]
fn is_pipe_or_socket(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo() || meta.file_type().is_socket()
}

#[cfg(not(unix))]
fn is_pipe_or_socket(_meta: &Metadata) -> bool {
    false
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
