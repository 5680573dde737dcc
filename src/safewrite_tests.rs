#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use super::*;

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".gpudoctor-"))
        .collect()
}

#[test]
fn a_new_file_is_created_and_no_temporary_file_stays() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("snap.json");
    assert_eq!(write(&p, b"one", Existing::Keep).unwrap(), Written::Created);
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
    assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
}

#[test]
fn an_existing_file_is_kept_unless_replacing_is_allowed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("snap.json");
    std::fs::write(&p, b"old").unwrap();
    let e = write(&p, b"new", Existing::Keep).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(
        write(&p, b"new", Existing::Replace).unwrap(),
        Written::Replaced
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    assert!(leftovers(d.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("private.json");
    std::fs::write(&p, b"old").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    write(&p, b"new", Existing::Replace).unwrap();
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[cfg(unix)]
#[test]
fn a_symlink_is_refused_and_what_it_points_to_is_untouched() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.txt");
    std::fs::write(&real, b"precious").unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for existing in [Existing::Keep, Existing::Replace] {
        let e = write(&link, b"x", existing).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), b"precious");
    assert!(leftovers(d.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_fifo_is_a_stream_and_one_nobody_reads_is_an_error_at_once() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo on a path in a fresh temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // No reader: an error now, not a writer blocked in open(2) for ever.
    let start = std::time::Instant::now();
    let e = write(&fifo, b"x", Existing::Replace).unwrap_err();
    assert!(e.to_string().contains("no process is reading"), "{e}");
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    // With a reader, the bytes go through it; the FIFO stays a FIFO.
    let reader = {
        let p = fifo.clone();
        std::thread::spawn(move || {
            // Blocks until a writer opens the FIFO.
            let mut f = std::fs::File::open(&p).unwrap();
            let mut got = Vec::new();
            f.read_to_end(&mut got).unwrap();
            got
        })
    };
    let mut wrote = None;
    for _ in 0..200 {
        match write(&fifo, b"through the pipe", Existing::Keep) {
            Ok(w) => {
                wrote = Some(w);
                break;
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    assert_eq!(wrote, Some(Written::Stream));
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[cfg(unix)]
#[test]
fn a_device_node_is_refused_and_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: mknod is not allowed; tests/hostile covers devices as non-root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dev = d.path().join("full");
    let c = std::ffi::CString::new(dev.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mknod of /dev/full's numbers (1, 7) in a fresh temporary directory.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
    if r != 0 {
        eprintln!("mknod refused here ({})", io::Error::last_os_error());
        return;
    }
    let e = write(&dev, b"x", Existing::Replace).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
    assert!(std::fs::symlink_metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let e = write(d.path(), b"x", Existing::Replace).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
}

#[test]
fn a_missing_folder_is_an_error_that_names_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("no/such/dir/x.json");
    let e = write(&p, b"x", Existing::Keep).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(e.to_string().contains("no/such/dir"), "{e}");
}

#[cfg(unix)]
#[test]
fn stream_names_are_streams_not_files() {
    assert_eq!(target(Path::new("-")).unwrap(), Target::Stdout);
    assert_eq!(target(Path::new("/dev/stdout")).unwrap(), Target::Stdout);
    assert_eq!(target(Path::new("/dev/fd/1")).unwrap(), Target::Stdout);
    assert_eq!(
        target(Path::new("/proc/self/fd/2")).unwrap(),
        Target::Stderr
    );
    assert_eq!(
        target(Path::new("/dev/fd/7")).unwrap(),
        Target::Descriptor(7)
    );
    assert_eq!(
        target(Path::new("/dev/null")).unwrap(),
        Target::Device(PathBuf::from("/dev/null"))
    );
    // Any other device is refused, /dev/full included.
    assert!(target(Path::new("/dev/full")).is_err());
    assert!(target(Path::new("/dev/zero")).is_err());
}

#[cfg(unix)]
#[test]
fn an_open_descriptor_is_written_and_a_closed_one_is_an_error() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let (mut r, w) = std::io::pipe().unwrap();
    let fd = w.as_raw_fd();
    let p = PathBuf::from(format!("/dev/fd/{fd}"));
    assert_eq!(
        write(&p, b"hello", Existing::Keep).unwrap(),
        Written::Stream
    );
    drop(w);
    let mut got = String::new();
    r.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello");
    // A closed descriptor: not the one just dropped, whose number another test's thread may
    // have reopened meanwhile, but one above any process's limit.
    let closed = PathBuf::from(format!("/dev/fd/{}", i32::MAX));
    let e = write(&closed, b"x", Existing::Keep).unwrap_err();
    assert!(e.to_string().contains("not open"), "{e}");
}

#[test]
fn out_of_space_is_said_with_what_to_do() {
    let e = io::Error::from(io::ErrorKind::StorageFull);
    assert!(describe(&e).contains("free some space"), "{}", describe(&e));
}
