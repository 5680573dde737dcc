use super::*;
use std::io::{Read, Write};
use std::thread;

fn pipe_pair() -> (File, File) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

/// Deterministic bytes of every value.
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Splits `data` into writes of sizes from `sizes` in turn.
fn chunks(data: &[u8], sizes: &[usize]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    for i in 0.. {
        if at >= data.len() {
            break;
        }
        let k = sizes[i % sizes.len()].min(data.len() - at);
        out.push(data[at..at + k].to_vec());
        at += k;
    }
    out
}

/// Writes `parts` into a pipe (one write each) while the relay passes them to a pipe that is
/// read to its end; returns what came out and the tail.
fn through(parts: Vec<Vec<u8>>, cap: usize) -> (Vec<u8>, Arc<Mutex<Tail>>) {
    let (a_r, mut a_w) = pipe_pair();
    let (mut o_r, o_w) = pipe_pair();
    let writer = thread::spawn(move || {
        for p in parts {
            a_w.write_all(&p).unwrap();
        }
    });
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        o_r.read_to_end(&mut v).unwrap();
        v
    });
    let tail = Arc::new(Mutex::new(Tail::new(cap)));
    assert!(matches!(relay(a_r, o_w, tail.clone()), Relayed::Done));
    writer.join().unwrap();
    (reader.join().unwrap(), tail)
}

fn last(data: &[u8], cap: usize) -> &[u8] {
    &data[data.len().saturating_sub(cap)..]
}

#[test]
fn a_large_stream_passes_whole_and_leaves_its_last_bytes() {
    let data = bytes(24 << 20, 7);
    let parts = chunks(&data, &[131_072, 1, 65_537, 300_000, 4096, 17, 1 << 20]);
    let (out, tail) = through(parts, 3 << 20);
    assert!(
        out == data,
        "output differs ({} of {} bytes)",
        out.len(),
        data.len()
    );
    let mut t = tail.lock().unwrap();
    assert_eq!(t.total(), data.len() as u64);
    assert!(t.bytes() == last(&data, 3 << 20), "tail differs");
    // Only the newest capture pipe is left open.
    assert_eq!(t.pending.len(), 1);
}

#[test]
fn small_writes_fill_pipes_with_little_and_still_keep_the_tail() {
    // Each write is a pipe slot of its own when the relay keeps up: a capture pipe then holds a
    // few KiB, and beyond MAX_PIPES the oldest are read into the ring.
    let data = bytes(6 << 20, 11);
    let parts = chunks(&data, &[37, 120, 80, 1, 64]);
    let (out, tail) = through(parts, 1 << 20);
    assert!(out == data, "output differs");
    let mut t = tail.lock().unwrap();
    assert_eq!(t.total(), data.len() as u64);
    assert!(t.bytes() == last(&data, 1 << 20), "tail differs");
}

#[test]
fn a_short_output_is_all_kept() {
    let (out, tail) = through(vec![b"step 1\n".to_vec(), b"Traceback".to_vec()], 4 << 20);
    assert_eq!(out, b"step 1\nTraceback");
    assert_eq!(tail.lock().unwrap().bytes(), b"step 1\nTraceback");
}

/// The tail asked for while the command still writes (a daemon holding the output after the
/// command ended): what is there is read, and what comes later still passes and is kept.
#[test]
fn the_tail_read_mid_stream_loses_nothing() {
    let (a_r, mut a_w) = pipe_pair();
    let (mut o_r, o_w) = pipe_pair();
    let tail = Arc::new(Mutex::new(Tail::new(1 << 20)));
    let t2 = tail.clone();
    let relayer = thread::spawn(move || matches!(relay(a_r, o_w, t2), Relayed::Done));
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        o_r.read_to_end(&mut v).unwrap();
        v
    });
    let first = bytes(3 << 20, 3);
    a_w.write_all(&first).unwrap();
    // Wait until all of it passed the relay.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tail.lock().unwrap().total() < first.len() as u64 {
        assert!(
            std::time::Instant::now() < until,
            "the relay did not pass the first part"
        );
        thread::sleep(std::time::Duration::from_millis(5));
    }
    let mid = tail.lock().unwrap().bytes();
    assert!(mid == last(&first, 1 << 20), "tail mid-stream differs");
    let second = bytes(1 << 19, 5);
    a_w.write_all(&second).unwrap();
    drop(a_w);
    assert!(relayer.join().unwrap());
    let out = reader.join().unwrap();
    let mut all = first.clone();
    all.extend_from_slice(&second);
    assert!(out == all, "output differs");
    assert!(tail.lock().unwrap().bytes() == last(&all, 1 << 20));
}

/// A source that is not a pipe (a socket) is refused before anything is read from it.
#[test]
fn a_source_that_is_not_a_pipe_is_left_for_copying() {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    (&b).write_all(b"hello").unwrap();
    let (_o_r, o_w) = pipe_pair();
    let tail = Arc::new(Mutex::new(Tail::new(64)));
    let from = File::from(OwnedFd::from(a));
    match relay(from, o_w, tail.clone()) {
        Relayed::Copy(mut f, _) => {
            let mut buf = [0u8; 5];
            f.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"hello");
        }
        Relayed::Done => panic!("a socket was taken for a pipe"),
    }
    let mut t = tail.lock().unwrap();
    assert_eq!(t.total(), 0);
    assert!(t.pending.is_empty());
    assert!(t.bytes().is_empty());
}

/// The destination closed (`gpudoctor run -- cmd | head`): the relay stops and closes its end,
/// so the command meets the closed pipe.
#[test]
fn a_closed_destination_ends_the_relay() {
    let (a_r, mut a_w) = pipe_pair();
    let (o_r, o_w) = pipe_pair();
    drop(o_r);
    let writer = thread::spawn(move || {
        let data = bytes(8 << 20, 9);
        a_w.write_all(&data).is_err()
    });
    let tail = Arc::new(Mutex::new(Tail::new(1 << 20)));
    assert!(matches!(relay(a_r, o_w, tail), Relayed::Done));
    assert!(
        writer.join().unwrap(),
        "the writer never met the closed pipe"
    );
}

/// A capture pipe holding `data` (read end), as the relay leaves a full one.
fn filled(data: &[u8]) -> OwnedFd {
    let (r, mut w) = pipe_pair();
    w.write_all(data).unwrap();
    OwnedFd::from(r)
}

/// Many pipes with little in them (a command writing a line at a time): beyond MAX_PIPES the
/// oldest are read into the ring, in order, and the tail is still the newest bytes.
#[test]
fn many_small_pipes_are_read_into_the_ring_in_order() {
    let mut t = Tail::new(1000);
    let mut all = Vec::new();
    for i in 0..3 * MAX_PIPES {
        let line = format!("step {i} loss 0.{i:03}\n").into_bytes();
        t.add_pipe(filled(&line));
        all.extend_from_slice(&line);
        assert!(t.pending.len() <= MAX_PIPES);
    }
    assert_eq!(t.pending.len(), MAX_PIPES);
    assert_eq!(t.bytes(), all);
}

/// Newer pipes that hold the capacity between them make the older pipes and the ring useless:
/// they are closed.
#[test]
fn pipes_older_than_the_capacity_are_dropped() {
    let mut t = Tail::new(25);
    t.push(b"ring bytes, older than all pipes");
    let mut all = b"ring bytes, older than all pipes".to_vec();
    for i in 0..6u8 {
        let part = [b'a' + i; 10];
        t.add_pipe(filled(&part));
        all.extend_from_slice(&part);
    }
    // 25 bytes are held by the three newest pipes: the others are gone.
    assert_eq!(t.pending.len(), 3);
    assert_eq!(t.bytes(), &all[all.len() - 25..]);
}

/// stdout and stderr: two relays, one tail. Each writes only into the newest capture pipe when
/// that one is its own, so the tail keeps the order the pieces came in and neither relay closes
/// the other's pipe (a first version lost stderr's last write that way).
#[test]
fn two_relays_share_the_tail_in_order() {
    let tail = Arc::new(Mutex::new(Tail::new(1 << 20)));
    let mut writers = Vec::new();
    let mut relays = Vec::new();
    let mut readers = Vec::new();
    for _ in 0..2 {
        let (a_r, a_w) = pipe_pair();
        let (mut o_r, o_w) = pipe_pair();
        writers.push(a_w);
        let t = tail.clone();
        relays.push(thread::spawn(move || {
            matches!(relay(a_r, o_w, t), Relayed::Done)
        }));
        readers.push(thread::spawn(move || {
            let mut v = Vec::new();
            o_r.read_to_end(&mut v).unwrap();
            v
        }));
    }
    let mut all = Vec::new();
    let mut each = [Vec::new(), Vec::new()];
    for i in 0..40usize {
        let which = i % 2;
        // Every few rounds a piece bigger than a capture pipe.
        let size = if i % 7 == 3 { (1 << 20) + 4321 } else { 50 + i };
        let piece = bytes(size, i as u64 + 1);
        writers[which].write_all(&piece).unwrap();
        all.extend_from_slice(&piece);
        each[which].extend_from_slice(&piece);
        // Let it pass before the other output writes, so the order is known.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while tail.lock().unwrap().total() < all.len() as u64 {
            assert!(std::time::Instant::now() < until, "piece {i} did not pass");
            thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    drop(writers);
    for r in relays {
        assert!(r.join().unwrap());
    }
    for (r, want) in readers.into_iter().zip(each) {
        assert!(r.join().unwrap() == want, "an output differs");
    }
    let got = tail.lock().unwrap().bytes();
    assert!(got == last(&all, 1 << 20), "the tail is out of order");
}

/// A pipe whose write end is non-blocking, and a reader that empties it slowly (16 KiB every
/// 200 µs: the 64 KiB pipe is full most of the time); the reader returns all it read.
fn slow_non_blocking_pipe() -> (File, thread::JoinHandle<Vec<u8>>) {
    let (mut o_r, o_w) = pipe_pair();
    unsafe {
        let fl = libc::fcntl(o_w.as_raw_fd(), libc::F_GETFL);
        assert_eq!(
            libc::fcntl(o_w.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK),
            0
        );
    }
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            thread::sleep(std::time::Duration::from_micros(200));
            match o_r.read(&mut buf).unwrap() {
                0 => return v,
                n => v.extend_from_slice(&buf[..n]),
            }
        }
    });
    (o_w, reader)
}

/// gpudoctor's output may be a pipe another program set non-blocking: when it is full, the
/// relay waits for room instead of dropping output.
#[test]
fn a_non_blocking_destination_that_fills_loses_nothing() {
    let (a_r, mut a_w) = pipe_pair();
    let (o_w, reader) = slow_non_blocking_pipe();
    let data = bytes(4 << 20, 13);
    let want = data.clone();
    let writer = thread::spawn(move || a_w.write_all(&data).unwrap());
    let tail = Arc::new(Mutex::new(Tail::new(1 << 20)));
    assert!(matches!(relay(a_r, o_w, tail.clone()), Relayed::Done));
    writer.join().unwrap();
    assert!(reader.join().unwrap() == want, "output lost or changed");
    assert!(tail.lock().unwrap().bytes() == last(&want, 1 << 20));
}

/// The same for the copying relay (a terminal's, and where splice is refused).
#[test]
fn the_copying_relay_waits_on_a_full_non_blocking_destination() {
    let (a_r, mut a_w) = pipe_pair();
    let (o_w, reader) = slow_non_blocking_pipe();
    let data: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    let want = data.clone();
    let writer = thread::spawn(move || a_w.write_all(&data).unwrap());
    let tail = Arc::new(Mutex::new(Tail::new(1024)));
    super::super::relay(a_r, o_w, tail.clone());
    writer.join().unwrap();
    assert!(reader.join().unwrap() == want, "output lost or changed");
    assert_eq!(tail.lock().unwrap().total(), want.len() as u64);
}
