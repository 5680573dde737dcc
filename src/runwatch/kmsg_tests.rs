use super::*;

#[test]
fn a_kmsg_record_is_its_message() {
    // The first record of /dev/kmsg on the machine these tests were written on.
    assert_eq!(
        kmsg_message("5,0,0,-;Linux version 6.18.44-fc-v669 (builder@sandboxing)"),
        "Linux version 6.18.44-fc-v669 (builder@sandboxing)"
    );
    // Other formats stay whole: a dmesg line, a syslog line with ';' in its message.
    let dmesg = "[ 8123.001002] NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.";
    assert_eq!(kmsg_message(dmesg), dmesg);
    assert_eq!(kmsg_message("a; b"), "a; b");
}

/// Only what is written after opening is seen; a line arriving in two writes is read once whole.
#[test]
#[cfg(not(windows))]
fn follows_from_the_end() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("kmsg");
    let dmesg = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kernel-log/h100-node.dmesg"),
    )
    .unwrap();
    let lines: Vec<&str> = dmesg.lines().collect();
    std::fs::write(&p, format!("{}\n", lines[1])).unwrap();
    let mut k = KernelFollower::open(&p).unwrap();
    assert!(k.poll().is_empty());
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let oom = lines.iter().find(|l| l.contains("Killed process")).unwrap();
    let (a, b) = oom.split_at(20);
    write!(f, "6,901,9500000000,-;{a}").unwrap();
    assert!(k.poll().is_empty());
    writeln!(f, "{b}").unwrap();
    writeln!(f, " SUBSYSTEM=pci").unwrap();
    let got = k.poll();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        got[0].0,
        LogEvent::OomKill {
            pid: Some(4242),
            process: Some("python3".into())
        }
    );
    assert!(got[0]
        .1
        .starts_with("[ 9500.000000] Out of memory: Killed process 4242"));
}

/// Windows has no kernel log: the follower says so instead of reading a file.
#[test]
#[cfg(windows)]
fn windows_has_no_kernel_log_to_follow() {
    let e = KernelFollower::open(std::path::Path::new("kmsg"))
        .err()
        .unwrap();
    assert!(e.contains("Windows has no kernel log"), "{e}");
}
