//! See main.rs.
//! `gpudoctor run` judging from its evidence, and never keeping the job from starting: each case
//! a real process under the real binary, with the kernel log and memory cgroup this machine
//! gives (where it gives none, the case asserts what the verdict must say without them).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

// run(): `gpudoctor run` with a fast sampler, reading the machine's own kernel log and cgroup.
use crate::common::{evidence, gpudoctor_run as run, report_file as report};

const PY: &str = "/usr/bin/python3";

/// A command that leaves a marker file (proof that it ran) and exits with `code`.
fn marked(marker: &Path, code: i32) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo ran > '{}'; exit {code}", marker.display()),
    ]
}

/// Issue 28: `kill -9` of a process that peaks at a few MiB was blamed on host memory. The
/// verdict now follows the evidence the run read, which the report exposes: with the kernel log
/// followed (and no OOM-killer line) or the cgroup's OOM count read (and unchanged), it is
/// "killed by SIGKILL from outside: not the OOM killer", not host memory; with nothing read, host
/// memory at low confidence with what could not be seen.
#[test]
fn issue_28_a_sigkill_the_evidence_clears_is_not_blamed_on_host_memory() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run()
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "sh", "-c", "echo loading; kill -9 $$"])
        .run();
    assert_eq!(r.code, 137, "{}", r.stderr);
    assert_eq!(r.stdout, "loading\n");
    let v = report(&rep);
    let t = &v["timeline"];
    // What the run could read must match what this machine lets a process read.
    let kmsg_readable = std::fs::File::open("/dev/kmsg").is_ok();
    assert_eq!(t["kernel_log"]["followed"], kmsg_readable, "{t:#}");
    let ooms: Vec<&serde_json::Value> = t["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["kind"] == "oom_kill")
        .collect();
    let oom_of_this_run = ooms.iter().any(|e| e["this_run"] == true);
    let kills = |end: &str| t[end]["oom_kills"].as_u64();
    let counts = (kills("cgroup_start"), kills("cgroup_end"));
    let cgroup_rose = matches!(counts, (Some(a), Some(b)) if b > a);
    let cgroup_quiet = matches!(counts, (Some(a), Some(b)) if b == a);
    let kmsg_quiet = kmsg_readable && ooms.is_empty();
    // The peak (a few MiB) against the limit: the cgroup's, or the host's memory when lower.
    let peak = t["host_peak_rss_bytes"].as_u64();
    let limit = [
        t["cgroup_end"]["memory_max"].as_u64(),
        t["host_memory_bytes"].as_u64(),
    ]
    .into_iter()
    .flatten()
    .min();
    let peak_small = matches!((peak, limit), (Some(p), Some(l)) if (p as f64) < 0.25 * l as f64);
    let lead = &v["causes"][0];
    let title = lead["title"].as_str().unwrap();
    let ev = evidence(lead);
    if cgroup_rose || oom_of_this_run {
        // The OOM killer did strike this run's cgroup or process during it: host memory is fair.
        assert_eq!(lead["category"], "host_memory_exhausted", "{v:#}");
    } else if kmsg_quiet || cgroup_quiet || peak_small {
        assert_eq!(lead["category"], "application_error", "{v:#}");
        assert!(
            title.starts_with("Killed by SIGKILL from outside: not the OOM killer ("),
            "{title}"
        );
        if kmsg_quiet {
            assert!(ev.contains("has no OOM-killer line"), "{ev}");
        }
        if !kmsg_readable {
            assert!(ev.contains("not seen: the kernel log was not read"), "{ev}");
        }
        if cgroup_quiet {
            assert!(ev.contains("counted no OOM kill during the run"), "{ev}");
        }
        if peak_small {
            assert!(ev.contains("the run's processes peaked at"), "{ev}");
        }
        assert!(
            v["causes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["category"] != "host_memory_exhausted" || c["confidence"] == "low"),
            "{v:#}"
        );
        assert!(r.stderr.contains("not the OOM killer"), "{}", r.stderr);
    } else {
        assert_eq!(lead["category"], "host_memory_exhausted", "{v:#}");
        assert_eq!(lead["confidence"], "low", "{v:#}");
        assert!(ev.contains("not seen:"), "{ev}");
    }
}

/// With the kernel log unreadable, the verdict says so: it names what it could not see.
#[test]
fn issue_28_a_sigkill_names_the_kernel_log_it_could_not_read() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run()
        .env("GPUDOCTOR_RUN_KMSG", d.path().join("no-such-kmsg"))
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", "sh", "-c", "kill -9 $$"])
        .run();
    assert_eq!(r.code, 137, "{}", r.stderr);
    let v = report(&rep);
    assert_eq!(v["timeline"]["kernel_log"]["followed"], false, "{v:#}");
    let lead = &v["causes"][0];
    let ev = evidence(lead);
    assert!(
        ev.contains("not seen: the kernel log was not read") && ev.contains("no-such-kmsg"),
        "{ev}"
    );
    // Whatever it concluded, it is not high confidence on host memory without the kernel log
    // or a cgroup count that rose.
    if lead["category"] == "host_memory_exhausted" {
        assert_ne!(lead["confidence"], "high", "{v:#}");
    }
}

/// Issue 28: a Python MemoryError was "general error"; it is host memory.
#[test]
fn issue_28_a_python_memory_error_is_host_memory() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    let r = run()
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--", PY, "-c", "x = [1]\nraise MemoryError"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("\nMemoryError\n"), "{}", r.stderr);
    let v = report(&rep);
    assert_eq!(v["causes"][0]["category"], "host_memory_exhausted", "{v:#}");
    assert!(
        evidence(&v["causes"][0]).contains("output: MemoryError"),
        "{v:#}"
    );
}

/// Issue 28: an existing --report file kept the job from starting (exit 2). It is replaced, said
/// so, and the command runs with its status passed through.
#[test]
fn issue_28_an_existing_report_file_is_replaced_and_the_job_runs() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("r.json");
    std::fs::write(&rep, "an earlier report\n").unwrap();
    let marker = d.path().join("ran");
    let r = run()
        .args(["--format", "json", "--report"])
        .arg_path(&rep)
        .args(["--"])
        .args(marked(&marker, 3))
        .run();
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(marker.exists(), "the command did not run: {}", r.stderr);
    let v = report(&rep);
    assert_eq!(v["exit"]["code"], 3);
    assert!(
        r.stderr.contains(&format!(
            "(report: {}, replacing the file that was there)",
            rep.display()
        )),
        "{}",
        r.stderr
    );
}

/// Issue 28: a --save folder holding a run's files kept the job from starting. The job runs;
/// its files go to a new subfolder, said on stderr; the first run's files are untouched.
#[test]
fn issue_28_an_existing_save_folder_gets_a_new_subfolder_and_the_job_runs() {
    let d = tempfile::tempdir().unwrap();
    let save = d.path().join("bug");
    let r = run()
        .args(["--save"])
        .arg_path(&save)
        .args(["--", "sh", "-c", "echo first; exit 1"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let first = std::fs::read(save.join("report.json")).unwrap();
    assert_eq!(std::fs::read(save.join("output.tail")).unwrap(), b"first\n");
    let marker = d.path().join("ran");
    let r = run()
        .args(["--save"])
        .arg_path(&save)
        .args(["--"])
        .args(marked(&marker, 4))
        .run();
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(marker.exists(), "the command did not run: {}", r.stderr);
    let sub = save.join("run-2");
    assert!(
        r.stderr
            .contains(&format!("this run's go to {}", sub.display())),
        "{}",
        r.stderr
    );
    assert_eq!(report(&sub.join("report.json"))["exit"]["code"], 4);
    assert_eq!(
        report(&sub.join("report.json"))["saved"],
        sub.display().to_string()
    );
    assert!(sub.join("timeline.jsonl").exists());
    assert_eq!(std::fs::read(save.join("report.json")).unwrap(), first);
    assert_eq!(std::fs::read(save.join("output.tail")).unwrap(), b"first\n");
}

/// Issue 28: `--format json` wrote the report to stderr, mixed with the command's own. Without
/// --report it goes to a new file named on stderr; stderr holds the command's lines and
/// gpudoctor's one line, no JSON.
#[test]
fn issue_28_the_json_report_never_goes_into_the_commands_stderr() {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = run()
        .args(["--format", "json", "--", "sh", "-c"])
        .args(["echo 'the job says {\"a\": 1}' >&2; exit 5"])
        .into_command();
    let out = cmd.current_dir(d.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(!err.contains("gpudoctor.run/1"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(lines[0], "the job says {\"a\": 1}");
    let named = lines[1]
        .rsplit_once("(report: ")
        .and_then(|(_, p)| p.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no report named: {err}"));
    let p = PathBuf::from(named);
    assert!(
        p.starts_with(d.path().canonicalize().unwrap()) || p.starts_with(d.path()),
        "{named}"
    );
    let v = report(&p);
    assert_eq!(v["schema"], "gpudoctor.run/1");
    assert_eq!(v["exit"]["code"], 5);
}

/// `--report /dev/fd/3` and `--report /dev/stdout` are written as streams (a pipe here), never
/// replaced: the report arrives whole where the user pointed, after the command's own output.
#[test]
fn a_report_to_a_descriptor_is_written_as_a_stream() {
    let bin = env!("CARGO_BIN_EXE_gpudoctor");
    let sh = |script: &str| {
        Command::new("sh")
            .args(["-c", script])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("BIN", bin)
            .env("GPUDOCTOR_RUN_INTERVAL", "0.1")
            .output()
            .unwrap()
    };
    // fd 3 is the pipe to this test; the command's stdout goes nowhere.
    let out = sh("\"$BIN\" run --format json --report /dev/fd/3 -- sh -c 'echo out; echo err >&2; exit 6' 3>&1 >/dev/null");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["exit"]["code"], 6);
    assert!(err.starts_with("err\n"), "{err}");
    assert!(!err.contains("gpudoctor.run/1"), "{err}");
    // /dev/stdout: the command's output, then the report.
    let out = sh("\"$BIN\" run --format json --report /dev/stdout -- sh -c 'echo out; exit 7'");
    assert_eq!(out.status.code(), Some(7));
    let text = String::from_utf8_lossy(&out.stdout);
    let json = text
        .strip_prefix("out\n")
        .unwrap_or_else(|| panic!("{text}"));
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["exit"]["code"], 7);
    assert!(std::fs::symlink_metadata("/dev/stdout").is_ok());
    // /dev/null, a character device: written to, not replaced; the status passes.
    let out = sh("\"$BIN\" run --format json --report /dev/null -- sh -c 'exit 2'");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("(report: /dev/null)"), "{err}");
    let m = std::fs::metadata("/dev/null").unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &m.file_type()
    ));
}

/// Issue 28: a report that cannot be written never costs the command its status: the command
/// runs, its status passes through, and one line says the report was lost, with the path and
/// the reason. As root, a real failure needs a path under a file or in /proc.
#[test]
fn issue_28_a_report_that_cannot_be_written_is_said_lost_and_the_status_passes() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(st.success());
    // A symbolic link to a file is not replaced (only regular files are), nor is its target.
    let target = d.path().join("target.json");
    std::fs::write(&target, "kept\n").unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let cases: [(PathBuf, &str); 5] = [
        (PathBuf::from("/proc/version/r.json"), "Not a directory"),
        (
            PathBuf::from("/proc/gpudoctor-r.json"),
            "cannot create a file in /proc",
        ),
        (d.path().to_path_buf(), "it is a directory"),
        (fifo.clone(), "no process is reading"),
        (link.clone(), "it is a symbolic link"),
    ];
    for (i, (target, why)) in cases.iter().enumerate() {
        let marker = d.path().join(format!("ran-{i}"));
        let r = run()
            .args(["--format", "json", "--report"])
            .arg_path(target)
            .args(["--"])
            .args(marked(&marker, 9))
            .run();
        assert_eq!(r.code, 9, "{}: {}", target.display(), r.stderr);
        assert!(
            marker.exists(),
            "{}: the command did not run: {}",
            target.display(),
            r.stderr
        );
        let lost: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("gpudoctor: the report was lost: "))
            .collect();
        assert_eq!(lost.len(), 1, "{}: {}", target.display(), r.stderr);
        assert!(
            lost[0].contains(&format!("cannot write it to {}: ", target.display()))
                && lost[0].contains(why),
            "{}: {}",
            target.display(),
            r.stderr
        );
        assert!(!r.stderr.contains("gpudoctor.run/1"), "{}", r.stderr);
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept\n");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // A --save folder that cannot be made: the command runs; nothing saved, said so.
    let marker = d.path().join("ran-save");
    let r = run()
        .args(["--save", "/proc/version/bug", "--"])
        .args(marked(&marker, 8))
        .run();
    assert_eq!(r.code, 8, "{}", r.stderr);
    assert!(marker.exists(), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("gpudoctor: nothing was saved: --save /proc/version/bug: "),
        "{}",
        r.stderr
    );
}
