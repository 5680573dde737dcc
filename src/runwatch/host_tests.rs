use super::*;

/// A /proc with the given (pid, stat) files.
#[cfg(not(windows))]
fn fake_proc(entries: &[(u32, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (pid, stat) in entries {
        let p = d.path().join(pid.to_string());
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("stat"), stat).unwrap();
        std::fs::write(p.join("statm"), "1000 256 10 1 0 100 0\n").unwrap();
    }
    d
}

#[test]
#[cfg(not(windows))]
fn the_tree_follows_parents_whatever_the_names() {
    // Names with spaces and parentheses, as /proc/PID/stat writes them.
    let d = fake_proc(&[
        (10, "10 (python3) S 1 10 10 0"),
        (11, "11 (pt_data_worker) S 10 10 10 0"),
        (12, "12 (a) b) c) S 11 10 10 0"),
        (13, "13 (sleep) S 1 13 13 0"),
    ]);
    let mut t = tree(d.path(), 10);
    t.sort();
    assert_eq!(t, vec![10, 11, 12]);
    assert_eq!(rss(d.path(), 11), Some(256 * page_size()));
}

/// Windows: the working set of a live process (this one), through its handle.
#[test]
#[cfg(windows)]
fn the_working_set_of_this_process_is_read() {
    let ws = rss(Path::new(""), std::process::id()).unwrap();
    assert!(ws > 1 << 20, "{ws}");
    assert_eq!(tree(Path::new(""), 4242), vec![4242]);
}

/// cgroup v1 as on the machine these tests were written on (memory.oom_control's real text).
#[test]
#[cfg(not(windows))]
fn reads_a_v1_memory_cgroup() {
    let d = tempfile::tempdir().unwrap();
    let proc_ = d.path().join("proc");
    std::fs::create_dir_all(proc_.join("self")).unwrap();
    std::fs::write(
        proc_.join("self/cgroup"),
        "9:name=systemd:/\n4:memory:/process_api/9510c6c3\n0::/\n",
    )
    .unwrap();
    let m = d.path().join("sys/memory/process_api/9510c6c3");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
    std::fs::write(
        m.join("memory.oom_control"),
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    )
    .unwrap();
    std::fs::write(m.join("memory.usage_in_bytes"), "1048576\n").unwrap();
    let c = cgroup(&proc_, "self", &d.path().join("sys")).unwrap();
    assert_eq!(c.version, "v1");
    assert_eq!(c.memory_max, None, "v1's 'no limit' is no limit");
    assert_eq!(c.oom_kills, Some(2));
    assert_eq!(c.memory_current, Some(1 << 20));
    std::fs::write(m.join("memory.limit_in_bytes"), "67108864\n").unwrap();
    assert_eq!(reread(&c).memory_max, Some(64 << 20));
}

/// cgroup v2, and a container whose /proc/self/cgroup names a host path its mount lacks.
#[test]
#[cfg(not(windows))]
fn reads_a_v2_memory_cgroup_from_inside_a_container() {
    let d = tempfile::tempdir().unwrap();
    let proc_ = d.path().join("proc");
    std::fs::create_dir_all(proc_.join("self")).unwrap();
    std::fs::write(
        proc_.join("self/cgroup"),
        "0::/kubepods/burstable/pod1/abc\n",
    )
    .unwrap();
    let sys = d.path().join("sys");
    std::fs::create_dir_all(&sys).unwrap();
    std::fs::write(sys.join("memory.max"), "8589934592\n").unwrap();
    std::fs::write(
        sys.join("memory.events"),
        "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
    )
    .unwrap();
    std::fs::write(sys.join("memory.peak"), "8589000000\n").unwrap();
    let c = cgroup(&proc_, "self", &sys).unwrap();
    assert_eq!(c.version, "v2");
    assert_eq!(c.memory_max, Some(8 << 30));
    assert_eq!(c.oom_kills, Some(1));
    assert_eq!(c.memory_peak, Some(8_589_000_000));
    std::fs::write(sys.join("memory.max"), "max\n").unwrap();
    assert_eq!(reread(&c).memory_max, None);
}

/// The tree from (pid, parent) pairs: children of children, not the parent's other children,
/// and no loop where a reused PID makes a cycle (Windows keeps a dead parent's PID).
#[test]
fn descendants_follow_parents_without_looping() {
    let pairs = [(10, 1), (11, 10), (12, 11), (13, 1), (10, 12), (14, 14)];
    let mut t = descendants(10, &pairs);
    t.sort();
    assert_eq!(t, vec![10, 11, 12]);
    assert_eq!(descendants(99, &pairs), vec![99]);
}

/// MemTotal from /proc/meminfo (the first lines of this machine's, recorded), and from the real
/// file where there is one: the host's limit when no cgroup sets a lower one.
#[test]
fn the_host_memory_total() {
    let text =
        "MemTotal:       24684084 kB\nMemFree:         1650812 kB\nMemAvailable:   19232412 kB\n";
    assert_eq!(meminfo_total(text), Some(24_684_084 * 1024));
    assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
    assert_eq!(meminfo_total("MemTotal: many kB\n"), None);
    if cfg!(target_os = "linux") {
        let n = memory_total(Path::new("/proc")).unwrap();
        assert!(n > 64 << 20, "{n}");
    }
}
