//! `gpudoctor run -- COMMAND` on real crashes, without a GPU: a Python child that prints a real
//! PyTorch OOM traceback (from the explain corpus) while the simulated GPUs
//! (`GPUDOCTOR_SIM_GPUS`, `GPUDOCTOR_SIM_PROCS`) show another process's memory rising; a child
//! killed by SIGKILL, one that segfaults, one the memory cgroup's OOM killer kills (where the
//! machine lets a test make a cgroup); kernel-log lines written during the run; the exit status
//! passed through; the output passed through byte for byte, through pipes and through a
//! pseudo-terminal; signals passed on; `--save`.
// Linux only: `gpudoctor run` uses a pty, /proc and signals; Windows has its own tests (tests/it/windows*.rs).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Run;

const PY: &str = "/usr/bin/python3";

/// `gpudoctor run` with a fast sampler, no real GPU, and a kernel log the test controls.
fn run(kmsg: &Path) -> Run {
    common::gpudoctor_run().env("GPUDOCTOR_RUN_KMSG", kmsg)
}

fn empty_kmsg(d: &Path) -> PathBuf {
    let p = d.join("kmsg");
    std::fs::write(&p, "").unwrap();
    p
}

use common::{evidence, report_file as report};

#[derive(serde::Deserialize)]
struct Entry {
    source: String,
    text: String,
}

/// A real traceback from the explain corpus, by its source.
fn corpus_text(file: &str, source: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/explain-corpus")
        .join(file);
    let v: Vec<Entry> = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.into_iter()
        .find(|e| e.source == source)
        .unwrap_or_else(|| panic!("{source} is not in {file}"))
        .text
}

/// The PyTorch OOM of https://github.com/xinge008/Cylinder3D/issues/109 (a 16 GB T4), with the
/// GPU filling up as another process's memory rises: the verdict is GPU memory, and its
/// evidence names the other process and how its memory grew.
#[test]
fn a_pytorch_oom_while_another_process_fills_the_gpu() {
    let d = tempfile::tempdir().unwrap();
    let tb = corpus_text(
        "runtime.yaml",
        "https://github.com/xinge008/Cylinder3D/issues/109",
    );
    let tb_file = d.path().join("traceback.txt");
    std::fs::write(&tb_file, format!("{tb}\n")).unwrap();
    let procs = d.path().join("procs");
    std::fs::write(&procs, "").unwrap();
    // The other process: a real one, so that its name is read from /proc.
    let mut other = Command::new("sleep").arg("30").spawn().unwrap();
    let script = format!(
        r#"
import os, sys, time
me, other, procs = os.getpid(), {other}, {procs:?}
gib = 1 << 30
def write(mine, theirs):
    with open(procs + ".new", "w") as f:
        f.write(f"0 {{me}} {{mine}}\n0 {{other}} {{theirs}}\n")
    os.replace(procs + ".new", procs)
for i, theirs in enumerate([1, 1, 3, 6, 9, 9]):
    write(6 * gib, theirs * gib)
    print(f"epoch 1 step {{i}}", flush=True)
    time.sleep(0.3)
sys.stderr.write(open({tb:?}).read())
sys.exit(1)
"#,
        other = other.id(),
        procs = procs.display().to_string(),
        tb = tb_file.display().to_string(),
    );
    let rep = d.path().join("report.json");
    let r = run(&empty_kmsg(d.path()))
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "16384")
        .env("GPUDOCTOR_SIM_PROCS", &procs)
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", PY, "-c", &script])
        .run();
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(r.code, 1, "{}", r.stderr);
    // The traceback passed through as written, then gpudoctor's one line.
    assert!(r.stderr.starts_with(&format!("{tb}\n")), "{}", r.stderr);
    assert!(r.stdout.starts_with("epoch 1 step 0\n"), "{}", r.stdout);
    let v = report(&rep);
    assert_eq!(v["schema"], "gpudoctor.run/1");
    assert_eq!(v["exit"]["code"], 1);
    assert_eq!(v["verdict"]["result"], "failed");
    let lead = &v["causes"][0];
    assert_eq!(lead["category"], "gpu_memory_exhausted", "{v:#}");
    let ev = evidence(lead);
    assert!(ev.contains("Tried to allocate 844.00 MiB"), "{ev}");
    assert!(
        ev.contains(&format!(
            "PID {} (sleep), not part of this run, grew from 1.0 GiB",
            other.id()
        )),
        "{ev}"
    );
    assert!(
        ev.contains("this run held 6.0 GiB of it and other processes 9.0 GiB"),
        "{ev}"
    );
    let g = &v["timeline"]["gpus"][0];
    assert_eq!(g["peak_used_bytes"], 15u64 << 30);
    assert_eq!(g["total_bytes"], 16u64 << 30);
    let holders = g["holders"].as_array().unwrap();
    let mine = holders.iter().find(|h| h["this_run"] == true).unwrap();
    assert_eq!(mine["max_bytes"], 6u64 << 30);
    let theirs = holders.iter().find(|h| h["this_run"] == false).unwrap();
    assert_eq!(theirs["pid"], other.id());
    assert_eq!(theirs["first_bytes"], 1u64 << 30);
    assert_eq!(theirs["max_bytes"], 9u64 << 30);
    // The summary line names the cause.
    assert!(
        r.stderr
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("[gpu_memory_exhausted]"),
        "{}",
        r.stderr
    );
}

/// SIGKILL: exit 137. The kernel log the test controls was followed through the run and has no
/// OOM-killer line, so the verdict is a kill from outside, not host memory (issue 28).
#[test]
fn killed_by_sigkill_exits_137() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run(&empty_kmsg(d.path()))
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args([
            "--",
            PY,
            "-c",
            "import os, signal; print('loading', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
        ])
        .run();
    assert_eq!(r.code, 137, "{}", r.stderr);
    assert_eq!(r.stdout, "loading\n");
    let v = report(&rep);
    assert_eq!(v["exit"]["signal"], 9);
    assert_eq!(v["exit"]["signal_name"], "SIGKILL");
    assert_eq!(v["exit"]["status"], 137);
    let lead = &v["causes"][0];
    assert_eq!(v["timeline"]["kernel_log"]["followed"], true, "{v:#}");
    assert_eq!(lead["category"], "application_error", "{v:#}");
    assert!(
        lead["title"]
            .as_str()
            .unwrap()
            .starts_with("Killed by SIGKILL from outside: not the OOM killer"),
        "{lead:#}"
    );
    assert!(
        evidence(lead).contains("has no OOM-killer line"),
        "{lead:#}"
    );
}

/// A real segmentation fault (a NULL read through ctypes): exit 139, SIGSEGV.
#[test]
fn a_segfault_exits_139() {
    let d = tempfile::tempdir().unwrap();
    let r = run(&empty_kmsg(d.path()))
        .args(["--", PY, "-c", "import ctypes; ctypes.string_at(0)"])
        .run();
    assert_eq!(r.code, 139, "{}", r.stderr);
    assert!(
        r.stderr.contains("was killed by SIGSEGV (exit status 139"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Likely cause: SIGSEGV"), "{}", r.stderr);
}

/// The command's exit status is gpudoctor's; a clean run is one line, and nothing with --quiet.
#[test]
fn exit_status_passes_through() {
    let d = tempfile::tempdir().unwrap();
    let k = empty_kmsg(d.path());
    for code in [0, 1, 2, 130] {
        let r = run(&k)
            .args(["--", "sh", "-c", &format!("exit {code}")])
            .run();
        assert_eq!(r.code, code, "{}", r.stderr);
        if code == 0 {
            assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
            assert!(r.stderr.contains("ended well (exit 0)"), "{}", r.stderr);
        } else {
            assert!(
                r.stderr.contains(&format!("exited with status {code}")),
                "{}",
                r.stderr
            );
        }
    }
    let r = run(&k).args(["--quiet", "--", "true"]).run();
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // Not found / not runnable: the shell's 127 and 126.
    let r = run(&k).args(["--", "/nonexistent/command"]).run();
    assert_eq!(r.code, 127, "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot run /nonexistent/command"),
        "{}",
        r.stderr
    );
    let r = run(&k).args(["--"]).arg_path(d.path()).run();
    assert_eq!(r.code, 126, "{}", r.stderr);
}

/// What the command writes reaches gpudoctor's stdout and stderr unchanged: every byte value,
/// lines without a newline, and 48 MiB in uneven writes; both as passed on by splice (the
/// default through a pipe) and by copying (`GPUDOCTOR_RUN_COPY=1`, as through a terminal). The
/// saved tail is the last 4 MiB as they came.
#[test]
fn output_passes_through_byte_for_byte() {
    let script = r#"
import os, sys, hashlib
out, err = sys.stdout.buffer, sys.stderr.buffer
out.write(bytes(range(256)) * 3); out.flush()
err.write(b"partial line without newline"); err.flush()
out.write(b"\r50%\r100%\x1b[0m\x00"); out.flush()
block = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(4096))
n = 0
while n < 48 << 20:
    k = 1 + (n * 7919) % len(block)
    out.write(block[:k]); n += k
out.flush()
err.write(b"\xff\xfe end")
"#;
    let expected = Command::new(PY).args(["-c", script]).output().unwrap();
    for copy in ["0", "1"] {
        let d = tempfile::tempdir().unwrap();
        let rep = d.path().join("r.json");
        let save = d.path().join("saved");
        let r = Run::new()
            .env("GPUDOCTOR_RUN_KMSG", empty_kmsg(d.path()))
            .env("GPUDOCTOR_RUN_COPY", copy)
            .args(["run", "--quiet", "--format", "json", "--report"])
            .arg_path(&rep)
            .args(["--save"])
            .arg_path(&save);
        // Compare bytes, not text.
        let out = raw(r.args(["--", PY, "-c", script]));
        assert_eq!(out.status.code(), Some(0), "copy={copy}");
        assert!(out.stdout.len() > 48 << 20);
        assert!(
            out.stdout == expected.stdout,
            "stdout differs (copy={copy})"
        );
        assert_eq!(out.stderr, expected.stderr, "copy={copy}");
        let v = report(&rep);
        assert_eq!(
            v["output"]["bytes"],
            (expected.stdout.len() + expected.stderr.len()) as u64
        );
        assert_eq!(v["output"]["tail_bytes"], 4u64 << 20);
        // The tail: stdout's last bytes, with stderr's last write wherever it came among them
        // (two outputs, two relays).
        let mut tail = std::fs::read(save.join("output.tail")).unwrap();
        assert_eq!(tail.len(), 4 << 20, "copy={copy}");
        let end: &[u8] = b"\xff\xfe end";
        if let Some(i) = tail.windows(end.len()).position(|w| w == end) {
            tail.drain(i..i + end.len());
        }
        assert!(
            expected.stdout.ends_with(&tail),
            "the tail is not the output's end (copy={copy})"
        );
    }
}

/// A 1 GiB stream through a pipe (splice's path, where the capture pipes are dropped and
/// rotated many times over): every byte arrives in order, the count is right, and the saved
/// tail is the stream's last 4 MiB. The bytes are a 1 MiB pattern rotated by one every MiB, so
/// a lost, repeated or reordered piece shows.
#[test]
fn a_gigabyte_stream_passes_whole() {
    const MIB: usize = 1 << 20;
    let expect = |p: usize| ((p % MIB + p / MIB) % 256) as u8;
    let script = "import sys\nout = sys.stdout.buffer\nbase = bytes(range(256)) * 4096\nfor i in range(1024):\n    r = i % 256\n    out.write(base[r:] + base[:r])\n";
    let d = tempfile::tempdir().unwrap();
    let save = d.path().join("saved");
    let mut cmd = Run::new()
        .env("GPUDOCTOR_RUN_KMSG", empty_kmsg(d.path()))
        .args(["run", "--quiet", "--save"])
        .arg_path(&save)
        .args(["--", PY, "-c", script])
        .into_command();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; MIB];
    let mut at = 0usize;
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if let Some(i) = (0..n).find(|&i| buf[i] != expect(at + i)) {
            panic!(
                "byte {} is {} where {} was written",
                at + i,
                buf[i],
                expect(at + i)
            );
        }
        at += n;
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(at, 1024 * MIB);
    let tail = std::fs::read(save.join("output.tail")).unwrap();
    assert_eq!(tail.len(), 4 * MIB);
    let from = 1024 * MIB - 4 * MIB;
    assert!(
        tail.iter().enumerate().all(|(i, &b)| b == expect(from + i)),
        "the tail is not the stream's last 4 MiB"
    );
    let v = report(&save.join("report.json"));
    assert_eq!(v["output"]["bytes"], (1024 * MIB) as u64);
}

/// The command's raw output, through common::Run's command.
fn raw(r: Run) -> std::process::Output {
    let mut cmd: Command = r.into_command();
    cmd.output().unwrap()
}

/// Where gpudoctor's output is a terminal, so is the command's (progress bars work), and its
/// bytes are not translated twice (the pseudo-terminal is raw: one "\r\n" per newline, made by
/// the outer terminal, not "\r\r\n").
#[test]
fn a_terminal_gets_a_pseudo_terminal() {
    let d = tempfile::tempdir().unwrap();
    let (mut master, slave) = openpty();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("GPUDOCTOR_RUN_KMSG", empty_kmsg(d.path()))
        .args([
            "run",
            "--quiet",
            "--",
            PY,
            "-c",
            "import os, sys; print(os.isatty(1), os.isatty(2)); print('a'); sys.stderr.write('b\\n')",
        ])
        .stdin(Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // All slaves are closed now: read until EIO.
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&got), "True True\r\na\r\nb\r\n");
}

fn openpty() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    let (mut m, mut s) = (0, 0);
    unsafe {
        assert_eq!(
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            0
        );
        (std::fs::File::from_raw_fd(m), std::fs::File::from_raw_fd(s))
    }
}

/// SIGINT and SIGTERM sent to gpudoctor reach the command; gpudoctor waits for it, reports, exits
/// with its status, and leaves nothing running.
#[test]
fn signals_reach_the_command() {
    let d = tempfile::tempdir().unwrap();
    let k = empty_kmsg(d.path());
    for (sig, status, said) in [
        (libc::SIGINT, 130, "KeyboardInterrupt"),
        (libc::SIGTERM, 143, ""),
    ] {
        let script = "import os, time\nprint(os.getpid(), flush=True)\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('KeyboardInterrupt', flush=True)\n    raise\n";
        let mut g = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("GPUDOCTOR_RUN_KMSG", &k)
            .args(["run", "--", PY, "-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(g.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let pid: i32 = line.trim().parse().unwrap();
        let t = Instant::now();
        unsafe { libc::kill(g.id() as i32, sig) };
        let st = g.wait().unwrap();
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let mut err = String::new();
        g.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert_eq!(st.code(), Some(status), "{err}");
        assert!(t.elapsed() < Duration::from_secs(20));
        assert!(rest.contains(said), "{rest}");
        assert!(
            err.contains("interrupted") || err.contains("killed by"),
            "{err}"
        );
        // The command is gone, not orphaned.
        assert_ne!(
            unsafe { libc::kill(pid, 0) },
            0,
            "the command {pid} outlived gpudoctor"
        );
    }
}

/// Kernel-log lines written during the run (the real formats of
/// tests/fixtures/kernel-log/h100-node.dmesg): an Xid 79 leads the verdict; the OOM killer
/// naming the command's own pid makes a SIGKILL certain.
#[test]
fn kernel_log_lines_during_the_run() {
    let d = tempfile::tempdir().unwrap();
    let k = d.path().join("kmsg");
    // Lines from before the run are not the run's.
    std::fs::write(
        &k,
        "[ 9500.000000] Out of memory: Killed process 4242 (python3) total-vm:123456kB, anon-rss:654321kB\n",
    )
    .unwrap();
    let dmesg =
        std::fs::read_to_string(common::fixtures().join("kernel-log/h100-node.dmesg")).unwrap();
    let xid79 = dmesg
        .lines()
        .find(|l| l.contains("79, GPU has fallen off"))
        .unwrap();
    let script = format!(
        "import time\nopen({k:?}, 'a').write({xid79:?} + '\\n')\ntime.sleep(0.5)\nraise SystemExit(1)\n",
        k = k.display().to_string()
    );
    let rep = d.path().join("r1.json");
    let r = run(&k)
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", PY, "-c", &script])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = report(&rep);
    assert_eq!(
        v["timeline"]["events"].as_array().unwrap().len(),
        1,
        "{v:#}"
    );
    let lead = &v["causes"][0];
    assert_eq!(lead["category"], "hardware_fault", "{v:#}");
    assert!(
        evidence(lead).contains("Xid (PCI:0000:2a:00): 79"),
        "{lead:#}"
    );

    // The OOM killer names the command's own pid, then SIGKILL.
    let script = format!(
        "import os, signal, time\nopen({k:?}, 'a').write('[ 9600.000000] Out of memory: Killed process %d (python3) total-vm:123456kB, anon-rss:654321kB\\n' % os.getpid())\ntime.sleep(0.5)\nos.kill(os.getpid(), signal.SIGKILL)\n",
        k = k.display().to_string()
    );
    let rep = d.path().join("r2.json");
    let r = run(&k)
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", PY, "-c", &script])
        .run();
    assert_eq!(r.code, 137, "{}", r.stderr);
    let v = report(&rep);
    let lead = &v["causes"][0];
    assert_eq!(lead["category"], "host_memory_exhausted");
    assert_eq!(lead["confidence"], "high");
    assert!(evidence(lead).contains("was part of this run"), "{lead:#}");
    assert!(!evidence(lead).contains("not the OOM killer"), "{lead:#}");
}

/// A memory cgroup with a 64 MiB limit (v1 or v2, where this machine lets the test make one):
/// the command allocating 512 MiB is killed by the cgroup's OOM killer, and the verdict says so
/// from the cgroup's own count.
#[test]
fn the_cgroup_oom_killer() {
    let Some(cg) = TestCgroup::make(64 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let bin = env!("CARGO_BIN_EXE_gpudoctor");
    // gpudoctor itself starts inside the cgroup (as in a container), so the command does too.
    let out = Command::new("sh")
        .args([
            "-c",
            "echo $$ > \"$PROCS\" && exec \"$BIN\" run --format json --report \"$REP\" -- \"$PY\" -c 'b = b\"x\" * (512 << 20); print(len(b))'",
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("BIN", bin)
        .env("PY", PY)
        .env("GPUDOCTOR_RUN_INTERVAL", "0.1")
        .env("GPUDOCTOR_RUN_KMSG", empty_kmsg(d.path()))
        .env("PROCS", cg.dir.join("cgroup.procs"))
        .env("REP", &rep)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(137), "{err}");
    let v = report(&rep);
    let lead = &v["causes"][0];
    assert_eq!(lead["category"], "host_memory_exhausted", "{v:#}");
    assert_eq!(lead["confidence"], "high", "{v:#}");
    let ev = evidence(lead);
    assert!(ev.contains("counted 1 OOM kill(s) during the run"), "{ev}");
    assert!(ev.contains("memory cgroup limit 64 MiB"), "{ev}");
}

/// A memory cgroup made for one test, removed after it.
struct TestCgroup {
    dir: PathBuf,
}

impl TestCgroup {
    fn make(limit: u64) -> Option<TestCgroup> {
        let skip = |why: String| {
            eprintln!("skipping the cgroup test: {why}");
            None
        };
        if unsafe { libc::geteuid() } != 0 {
            return skip("it needs root to make a memory cgroup".into());
        }
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let name = format!("gpudoctor-test-{}", std::process::id());
        // v1: the memory hierarchy; v2: the unified one (the test's own cgroup must allow
        // children with the memory controller).
        let (dir, files): (PathBuf, &[(&str, String)]) = if let Some(p) = own
            .lines()
            .find_map(|l| l.split_once(":memory:").map(|x| x.1.to_string()))
        {
            let base = Path::new("/sys/fs/cgroup/memory").join(p.trim_start_matches('/'));
            let base = if base.is_dir() {
                base
            } else {
                PathBuf::from("/sys/fs/cgroup/memory")
            };
            (
                base.join(&name),
                &[
                    ("memory.limit_in_bytes", limit.to_string()),
                    ("memory.memsw.limit_in_bytes", limit.to_string()),
                ][..],
            )
        } else if let Some(p) = own.lines().find_map(|l| l.strip_prefix("0::")) {
            let base = Path::new("/sys/fs/cgroup").join(p.trim_start_matches('/'));
            (
                base.join(&name),
                &[
                    ("memory.max", limit.to_string()),
                    ("memory.swap.max", "0".to_string()),
                ][..],
            )
        } else {
            return skip("no memory cgroup in /proc/self/cgroup".into());
        };
        if let Err(e) = std::fs::create_dir(&dir) {
            return skip(format!("cannot make {}: {e}", dir.display()));
        }
        let cg = TestCgroup { dir };
        for (i, (f, v)) in files.iter().enumerate() {
            if let Err(e) = std::fs::write(cg.dir.join(f), v) {
                // The first (the limit) is required; swap accounting may be off.
                if i == 0 {
                    return skip(format!("cannot set {f}: {e}"));
                }
            }
        }
        Some(cg)
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `--save DIR`: the report, the output's tail as written, the timeline as JSON Lines and the
/// snapshot; a second run into the same directory runs the command and saves into a new
/// subfolder (issue 28: an existing folder never keeps the job from starting).
#[test]
fn save_writes_the_bug_report_files_and_never_overwrites() {
    let d = tempfile::tempdir().unwrap();
    let k = empty_kmsg(d.path());
    let save = d.path().join("bug");
    let r = run(&k)
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .args(["--format", "markdown", "--save"])
        .arg_path(&save)
        .args(["--", PY, "-c", "import sys, time; print('step 1', flush=True); time.sleep(0.35); sys.stderr.write('RuntimeError: CUDA error: an illegal memory access was encountered\\n'); sys.exit(1)"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("### gpudoctor run:"), "{}", r.stderr);
    let v = report(&save.join("report.json"));
    assert_eq!(v["schema"], "gpudoctor.run/1");
    assert_eq!(v["saved"], save.display().to_string());
    assert_eq!(
        std::fs::read(save.join("output.tail")).unwrap(),
        b"step 1\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(save.join("timeline.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 3, "{lines:?}");
    assert_eq!(lines.last().unwrap()["gpus"].as_array().unwrap().len(), 2);
    assert_eq!(
        lines.len() as u64,
        v["timeline"]["samples"].as_u64().unwrap()
    );
    let snap = report(&save.join("snapshot.json"));
    assert_eq!(snap["schema"], "gpudoctor.snapshot/1");
    // Again into the same directory: the command runs, its files go to run-2, the first run's
    // stay as they were.
    let marker = d.path().join("started");
    let r = run(&k)
        .args(["--save"])
        .arg_path(&save)
        .args(["--", "touch"])
        .arg_path(&marker)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("this run's go to"), "{}", r.stderr);
    assert!(marker.exists());
    assert_eq!(report(&save.join("report.json")), v);
    assert_eq!(
        report(&save.join("run-2/report.json"))["saved"],
        save.join("run-2").display().to_string()
    );
}

/// The real NVML watch (the one `stress` uses) through the stand-in libnvidia-ml with the H100
/// values recorded on a real machine and two compute processes that are not the run's; and an
/// NVML that hangs in nvmlInit, which costs the watch but neither the command nor its status.
#[test]
fn the_nvml_watch_through_the_stand_in() {
    let d = tempfile::tempdir().unwrap();
    common::build_standin("libnvidia-ml.c", d.path(), "libnvidia-ml.so.1", &[]);
    let k = empty_kmsg(d.path());
    let rep = d.path().join("r.json");
    let r = run(&k)
        .env("LD_LIBRARY_PATH", d.path())
        .env("STANDIN_NVML_PROCS", "2")
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "sh", "-c", "sleep 2.6; exit 3"])
        .run();
    assert_eq!(r.code, 3, "{}", r.stderr);
    let v = report(&rep);
    let g = &v["timeline"]["gpus"][0];
    assert_eq!(g["total_bytes"], 85_520_809_984u64, "{v:#}");
    assert_eq!(g["max_temperature_c"], 50);
    let pids: Vec<_> = g["holders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["pid"].as_u64().unwrap(), h["this_run"].as_bool().unwrap()))
        .collect();
    assert_eq!(pids, vec![(1000, false), (1001, false)]);
    assert_eq!(v["notes"].as_array().unwrap().len(), 0, "{v:#}");

    let rep = d.path().join("r2.json");
    let t = Instant::now();
    let r = run(&k)
        .env("LD_LIBRARY_PATH", d.path())
        .env("STANDIN_NVML_FAIL", "nvmlInit_v2=hang")
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "sh", "-c", "sleep 0.5; exit 4"])
        .run();
    assert_eq!(r.code, 4, "{}", r.stderr);
    // The command's status at once; the machine's probe after the failure waits at most 5 s
    // for the hung NVML.
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    let v = report(&rep);
    let notes = v["notes"].to_string();
    assert!(notes.contains("NVML"), "{notes}");
}

/// Output to a regular file (`> log 2>&1`, a batch job's log) goes there directly, with nothing
/// relayed; the tail is read back from the file, so the verdict still reads the traceback.
#[test]
fn a_log_file_is_written_directly_and_read_back() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("job.log");
    std::fs::write(&log, "an earlier job's line\n").unwrap();
    let rep = d.path().join("r.json");
    let out = Command::new("sh")
        .args([
            "-c",
            "exec \"$BIN\" run --format json --report \"$REP\" -- \"$PY\" -c 'import sys; print(\"step 1\", flush=True); sys.exit(\"RuntimeError: CUDA error: an illegal memory access was encountered\")' >>\"$LOG\" 2>&1",
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("BIN", env!("CARGO_BIN_EXE_gpudoctor"))
        .env("PY", PY)
        .env("REP", &rep)
        .env("LOG", &log)
        .env("GPUDOCTOR_RUN_KMSG", empty_kmsg(d.path()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&log).unwrap();
    let written = "step 1\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    assert!(
        text.starts_with(&format!("an earlier job's line\n{written}")),
        "{text}"
    );
    let v = report(&rep);
    assert_eq!(v["output"]["bytes"], written.len() as u64, "{v:#}");
    assert_eq!(v["output"]["tail_bytes"], written.len() as u64);
    assert_eq!(v["causes"][0]["category"], "application_error", "{v:#}");
    assert!(evidence(&v["causes"][0]).contains("illegal memory access"));
}
