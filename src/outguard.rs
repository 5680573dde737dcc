//! gpudoctor's standard output belongs to its report alone.
//!
//! NVIDIA libraries and Python extension modules sometimes print to file descriptor 1 (a
//! debug line, a licence banner, a warning), which would corrupt `--format json` or a
//! Prometheus text file. [`protect`] moves the real standard output to a private descriptor
//! and points descriptor 1 at standard error, so whatever a library prints lands on stderr;
//! the report is written through [`writer`]. Child processes started afterwards inherit the
//! same arrangement (their stdout is a pipe gpudoctor reads, so it is unaffected).

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

static REAL: OnceLock<File> = OnceLock::new();

/// Moves standard output aside (once; later calls do nothing). Unix only: elsewhere the
/// report goes to standard output as it is.
pub fn protect() {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        if REAL.get().is_some() {
            return;
        }
        // SAFETY: plain descriptor system calls; `saved` is a new descriptor owned by the File.
        unsafe {
            let saved = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
            if saved < 0 {
                return;
            }
            if libc::dup2(2, 1) < 0 {
                libc::close(saved);
                return;
            }
            let _ = REAL.set(File::from_raw_fd(saved));
        }
    }
}

/// Where the report goes: the real standard output.
pub fn writer() -> Box<dyn Write + Send> {
    match REAL.get().and_then(|f| f.try_clone().ok()) {
        Some(f) => Box::new(f),
        None => Box::new(std::io::stdout()),
    }
}

/// The real standard output as a file of its own (`gpudoctor run` passes its command's output
/// there, and sizes a pseudo-terminal like it).
pub fn file() -> std::io::Result<File> {
    match REAL.get() {
        Some(f) => f.try_clone(),
        #[cfg(unix)]
        None => {
            use std::os::fd::AsFd;
            Ok(File::from(std::io::stdout().as_fd().try_clone_to_owned()?))
        }
        #[cfg(windows)]
        None => {
            use std::os::windows::io::AsHandle;
            Ok(File::from(
                std::io::stdout().as_handle().try_clone_to_owned()?,
            ))
        }
        #[cfg(not(any(unix, windows)))]
        None => Err(std::io::Error::other("no separate standard output here")),
    }
}

/// Standard error as a file of its own (`gpudoctor run` passes its command's errors there).
pub fn stderr_file() -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        Ok(File::from(std::io::stderr().as_fd().try_clone_to_owned()?))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsHandle;
        Ok(File::from(
            std::io::stderr().as_handle().try_clone_to_owned()?,
        ))
    }
    #[cfg(not(any(unix, windows)))]
    Err(std::io::Error::other("no separate standard error here"))
}

/// Whether the console behind standard output shows ANSI colour. On Windows 10 and 11 it does
/// once ENABLE_VIRTUAL_TERMINAL_PROCESSING is set on it (Windows Terminal sets it, the classic
/// console host does not); an older console refuses, and then colour stays off. Elsewhere: yes.
#[cfg(windows)]
pub fn ansi_console() -> bool {
    use windows_sys::Win32::System::Console::{
        GetConsoleMode, GetStdHandle, SetConsoleMode, ENABLE_VIRTUAL_TERMINAL_PROCESSING,
        STD_OUTPUT_HANDLE,
    };
    // SAFETY: plain console calls on this process's own standard output handle; `mode` is a
    // valid out-pointer.
    unsafe {
        let h = GetStdHandle(STD_OUTPUT_HANDLE);
        let mut mode = 0u32;
        if GetConsoleMode(h, &mut mode) == 0 {
            return false;
        }
        mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
            || SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0
    }
}

#[cfg(not(windows))]
pub fn ansi_console() -> bool {
    true
}

/// Whether the real standard output is a terminal.
pub fn is_terminal() -> bool {
    match REAL.get() {
        Some(f) => f.is_terminal(),
        None => std::io::stdout().is_terminal(),
    }
}
