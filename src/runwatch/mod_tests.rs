use super::*;

#[test]
fn plain_text_drops_colours_and_splits_progress_redraws() {
    // tqdm's redraws and a coloured traceback line, as a terminal receives them.
    let raw = b"\r  0%|          | 0/9565 [00:00<?, ?it/s]\r  0%|          | 1/9565 [00:19<50:33:46, 19.03s/it]\n\x1b[31mRuntimeError\x1b[0m: CUDA out of memory.\r\n\x1b]0;title\x07done";
    assert_eq!(
        plain_text(raw),
        "\n  0%|          | 0/9565 [00:00<?, ?it/s]\n  0%|          | 1/9565 [00:19<50:33:46, 19.03s/it]\nRuntimeError: CUDA out of memory.\r\ndone"
            .replace("\r\n", "\n")
    );
}

/// The copying relay (a terminal's, and where splice is refused) into a non-blocking pipe that
/// a slow reader keeps full: it waits for room and loses nothing.
#[cfg(target_os = "linux")]
#[test]
fn the_copying_relay_waits_on_a_full_non_blocking_destination() {
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd};
    let pipe = || {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    };
    let (a_r, mut a_w) = pipe();
    let (mut o_r, o_w) = pipe();
    unsafe {
        let fl = libc::fcntl(o_w.as_raw_fd(), libc::F_GETFL);
        assert_eq!(
            libc::fcntl(o_w.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK),
            0
        );
    }
    let data: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    let want = data.clone();
    let writer = std::thread::spawn(move || a_w.write_all(&data).unwrap());
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            std::thread::sleep(std::time::Duration::from_micros(200));
            match o_r.read(&mut buf).unwrap() {
                0 => return v,
                n => v.extend_from_slice(&buf[..n]),
            }
        }
    });
    let tail = std::sync::Arc::new(std::sync::Mutex::new(tail::Tail::new(1024)));
    relay(a_r, o_w, tail.clone());
    writer.join().unwrap();
    assert!(reader.join().unwrap() == want, "output lost or changed");
    assert_eq!(tail.lock().unwrap().total(), want.len() as u64);
}
