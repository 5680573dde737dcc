//! Writing safely (issue 28, items 1 and 2): every writer of gpudoctor against a device node, a
//! FIFO, a symbolic link, a read-only folder and a full file system, as root and as `nobody`;
//! and every command's standard output on a full device.
//!
//! The writers: `snapshot -o`, `man --dir`, `matrix update` (its cache file); `run --report`
//! and `run --save` are in `run.rs`. Root-only cases (a device node made with mknod, a tmpfs
//! mounted in a private mount namespace) say so and return when not root; CI runs as root.

#![cfg(target_os = "linux")]

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{is_root, Run};

const BIN: &str = env!("CARGO_BIN_EXE_gpudoctor");

/// A temporary folder that `nobody` can write to, too.
fn open_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// gpudoctor ARGS as root (as this test runs) or as `nobody` (setpriv), with `env`; the exit
/// code and stderr. Bounded: a writer that blocks (opening a FIFO) fails the test, never hangs.
fn gd(as_nobody: bool, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut c = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    c.args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", "/nonexistent-home")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            assert!(!err.contains("panicked"), "{err}");
            return (st.code().unwrap_or(-1), err);
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("gpudoctor {args:?} did not finish in 30 s (blocked on its output?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path in a test's own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
}

/// A character device with /dev/full's numbers, made in the test's folder (root only).
fn mknod_full(p: &Path) -> bool {
    if !is_root() {
        return false;
    }
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: mknod of (1, 7) in a test's own temporary folder.
    unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) == 0 }
}

fn kind(p: &Path) -> &'static str {
    let t = std::fs::symlink_metadata(p).unwrap().file_type();
    if t.is_char_device() {
        "char device"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_symlink() {
        "symlink"
    } else if t.is_file() {
        "file"
    } else {
        "other"
    }
}

/// A complete matrix bundle as a release ships it (scripts/matrix-bundle.sh).
fn bundle(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = dir.join("gpudoctor-matrix.yaml");
    let st = Command::new(root.join("scripts/matrix-bundle.sh"))
        .arg("--out")
        .arg(dir)
        .arg("--gpudoctor")
        .arg(BIN)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    out
}

/// Each writer, pointed at `target` (a path inside `dir`): the arguments and environment.
struct Writer {
    name: &'static str,
    /// The file name the writer writes inside its folder.
    file: &'static str,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn writers(dir: &Path, from: &Path) -> Vec<Writer> {
    let d = dir.to_str().unwrap().to_string();
    vec![
        Writer {
            name: "snapshot -o --force",
            file: "snap.json",
            args: vec![
                "snapshot".into(),
                "-o".into(),
                format!("{d}/snap.json"),
                "--force".into(),
            ],
            env: vec![],
        },
        Writer {
            name: "man --dir",
            file: "gpudoctor.1",
            args: vec!["man".into(), "--dir".into(), d.clone()],
            env: vec![],
        },
        Writer {
            name: "matrix update",
            file: "matrix.yaml",
            args: vec![
                "matrix".into(),
                "update".into(),
                "--from".into(),
                from.to_str().unwrap().into(),
            ],
            env: vec![("GPUDOCTOR_CACHE_DIR".into(), d)],
        },
    ]
}

fn run_writer(w: &Writer, as_nobody: bool) -> (i32, String) {
    let args: Vec<&str> = w.args.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = w
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    gd(as_nobody, &args, &env)
}

fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

#[test]
fn no_writer_replaces_a_device_node() {
    if !is_root() {
        eprintln!("not root: mknod is not allowed (the /dev/full case below still runs)");
    }
    let src = tempfile::tempdir().unwrap();
    let from = bundle(src.path());
    for as_nobody in users() {
        let d = open_dir();
        for w in writers(d.path(), &from) {
            let target = d.path().join(w.file);
            if !mknod_full(&target) {
                continue;
            }
            let (code, err) = run_writer(&w, as_nobody);
            assert_eq!(code, 2, "{} (nobody: {as_nobody}): {err}", w.name);
            assert!(err.contains("character device"), "{}: {err}", w.name);
            assert_eq!(
                kind(&target),
                "char device",
                "{} replaced the device",
                w.name
            );
        }
    }
    // The report of issue 28: `snapshot -o /dev/full --force`, as root, made /dev/full a file.
    let (code, err) = gd(false, &["snapshot", "-o", "/dev/full", "--force"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(kind(Path::new("/dev/full")), "char device");
}

#[test]
fn no_writer_blocks_on_or_replaces_a_fifo() {
    let src = tempfile::tempdir().unwrap();
    let from = bundle(src.path());
    for as_nobody in users() {
        let d = open_dir();
        for w in writers(d.path(), &from) {
            let target = d.path().join(w.file);
            mkfifo(&target);
            // No reader: a writer that opened the FIFO blocking would hang here (gd's 30 s
            // bound); a FIFO is a stream, and one nobody reads is an error at once.
            let (code, err) = run_writer(&w, as_nobody);
            assert_eq!(code, 2, "{} (nobody: {as_nobody}): {err}", w.name);
            assert!(err.contains("FIFO"), "{}: {err}", w.name);
            assert_eq!(kind(&target), "fifo", "{}", w.name);
            std::fs::remove_file(&target).unwrap();
        }
    }
}

#[test]
fn no_writer_writes_through_a_symlink() {
    let src = tempfile::tempdir().unwrap();
    let from = bundle(src.path());
    for as_nobody in users() {
        let d = open_dir();
        let precious = d.path().join("precious.txt");
        std::fs::write(&precious, "the user's own file\n").unwrap();
        std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o666)).unwrap();
        for w in writers(d.path(), &from) {
            let target = d.path().join(w.file);
            std::os::unix::fs::symlink(&precious, &target).unwrap();
            let (code, err) = run_writer(&w, as_nobody);
            assert_eq!(code, 2, "{} (nobody: {as_nobody}): {err}", w.name);
            assert!(err.contains("symbolic link"), "{}: {err}", w.name);
            assert_eq!(kind(&target), "symlink", "{}", w.name);
            assert_eq!(
                std::fs::read_to_string(&precious).unwrap(),
                "the user's own file\n",
                "{} wrote through the link",
                w.name
            );
            std::fs::remove_file(&target).unwrap();
        }
    }
}

/// `unshare -m`: SCRIPT in a private mount namespace (so the tmpfs mounts vanish with it), with
/// $G the binary and $D a fresh folder. None when mount namespaces or tmpfs are not available.
fn in_mount_ns(script: &str) -> Option<(i32, String, String)> {
    if !is_root() {
        return None;
    }
    let d = open_dir();
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script])
        .env("G", BIN)
        .env("D", d.path())
        .env("HOME", "/nonexistent-home")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if err.contains("SKIP-NO-MOUNT") {
        eprintln!("no tmpfs here: {err}");
        return None;
    }
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    ))
}

#[test]
fn a_read_only_folder_is_an_error_as_root_and_not() {
    // As root: a read-only tmpfs (root passes every permission check, not a read-only mount).
    let r = in_mount_ns(
        r#"mount -t tmpfs -o ro,size=64k tmpfs "$D" || { echo SKIP-NO-MOUNT >&2; exit 0; }
           "$G" snapshot -o "$D/snap.json"; echo "snapshot=$?"
           "$G" man --dir "$D"; echo "man=$?"
           ls -A "$D" | wc -l | sed 's/^/entries=/'"#,
    );
    if let Some((_, out, err)) = r {
        assert!(out.contains("snapshot=2"), "{out}\n{err}");
        assert!(out.contains("man=2"), "{out}\n{err}");
        assert!(out.contains("entries=0"), "{out}\n{err}");
        assert!(err.contains("Read-only file system"), "{err}");
        // What to do, not only the OS's word (before: "cannot write …: Read-only file system").
        assert!(err.contains("is the folder there and writable?"), "{err}");
    } else {
        eprintln!("not root or no mount namespace: the read-only mount case did not run");
    }
    // As nobody: a folder without write permission.
    if is_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = format!("{}/snap.json", d.path().display());
        let (code, err) = gd(true, &["snapshot", "-o", &out], &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("Permission denied"), "{err}");
        assert!(err.contains("is the folder there and writable?"), "{err}");
        assert!(!Path::new(&out).exists());
    }
}

#[test]
fn a_full_file_system_leaves_the_old_file_whole_and_exits_2() {
    // A 4 KiB tmpfs filled to the last byte, holding an old snapshot that --force would replace.
    let r = in_mount_ns(
        r#"mount -t tmpfs -o size=4k tmpfs "$D" || { echo SKIP-NO-MOUNT >&2; exit 0; }
           printf 'old snapshot\n' > "$D/snap.json"
           dd if=/dev/zero of="$D/fill" bs=1k count=64 2>/dev/null
           "$G" snapshot -o "$D/snap.json" --force; echo "snapshot=$?"
           "$G" man --dir "$D"; echo "man=$?"
           printf 'content=%s\n' "$(cat "$D/snap.json")"
           ls -A "$D" | tr '\n' ' ' | sed 's/^/entries=/'"#,
    );
    let Some((_, out, err)) = r else {
        eprintln!("not root or no mount namespace: the full file system case did not run");
        return;
    };
    assert!(out.contains("snapshot=2"), "{out}\n{err}");
    assert!(out.contains("man=2"), "{out}\n{err}");
    assert!(out.contains("content=old snapshot"), "{out}");
    // No temporary file left behind, nothing half-written.
    assert!(out.contains("entries=fill snap.json "), "{out}");
    assert!(err.contains("No space left on device"), "{err}");
}

#[test]
fn every_command_fails_with_2_when_standard_output_cannot_be_written() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let cases: &[&[&str]] = &[
        &["check"],
        &["check", "--format", "json"],
        &["check", "--no-probe", "--assume", "driver=535.104.05"],
        &["snapshot"],
        &["snapshot", "-o", "-"],
        &["explain", "0xC0000409"],
        &["explain", "--json", "137"],
        &["rules"],
        &["recommend", "--json"],
        &["matrix", "show"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
        &["--version"],
    ];
    for args in cases {
        let mut c = Run::new().args(*args).into_command();
        let out = c.stdout(full()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("could not write to standard output"),
            "{args:?}: {err}"
        );
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
    }
    // stress's JSON Lines stream, on the simulated GPUs.
    let mut c = Run::new()
        .args(["stress", "--seconds", "1", "--format", "jsonl"])
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .into_command();
    let out = c.stdout(full()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("could not write"), "{err}");
}

#[test]
fn dash_and_dev_stdout_are_standard_output_not_files() {
    let d = tempfile::tempdir().unwrap();
    for name in ["-", "/dev/stdout", "/dev/fd/1"] {
        let out = Run::new()
            .args(["snapshot", "-o", name])
            .into_command()
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: stdout is not the snapshot: {e}"));
        assert_eq!(v["schema"], "gpudoctor.snapshot/1");
        assert!(
            std::fs::read_dir(d.path()).unwrap().next().is_none(),
            "{name}: a file was created"
        );
    }
    // /dev/null is a sink: written to, never replaced, no --force needed.
    let (code, err) = gd(false, &["snapshot", "-o", "/dev/null"], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(kind(Path::new("/dev/null")), "char device");
}

/// `run --report` and `--save` against the same targets, as root and as nobody: the command
/// always runs and its status (7) passes through, the target is never replaced, and one line
/// says what was lost. A device node, a FIFO nobody reads, a symlink.
#[test]
fn run_never_replaces_a_device_fifo_or_symlink_and_keeps_the_status() {
    for as_nobody in users() {
        let d = open_dir();
        let precious = d.path().join("precious.txt");
        std::fs::write(&precious, "the user's own file\n").unwrap();
        std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o666)).unwrap();
        let dev = d.path().join("dev");
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        let mut targets = vec![(fifo.clone(), "fifo"), (link.clone(), "symlink")];
        if mknod_full(&dev) {
            targets.push((dev.clone(), "char device"));
        }
        for (target, was) in &targets {
            let t = target.to_str().unwrap();
            let (code, err) = gd(
                as_nobody,
                &[
                    "run", "--format", "json", "--report", t, "--", "sh", "-c", "exit 7",
                ],
                &[("GPUDOCTOR_RUN_INTERVAL", "0.1")],
            );
            assert_eq!(code, 7, "{t} (nobody: {as_nobody}): {err}");
            assert!(
                err.contains(&format!("the report was lost: cannot write it to {t}")),
                "{t}: {err}"
            );
            assert_eq!(kind(target), *was, "{t}");
        }
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "the user's own file\n"
        );
        // --save into a folder whose report.json is a symlink: the run's files go to a new
        // subfolder, and the link and its target stay as they were.
        let save = d.path().join("save");
        std::fs::create_dir(&save).unwrap();
        std::fs::set_permissions(&save, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::symlink(&precious, save.join("report.json")).unwrap();
        let (code, err) = gd(
            as_nobody,
            &[
                "run",
                "--save",
                save.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "exit 7",
            ],
            &[("GPUDOCTOR_RUN_INTERVAL", "0.1")],
        );
        assert_eq!(code, 7, "{err}");
        assert_eq!(kind(&save.join("report.json")), "symlink");
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "the user's own file\n"
        );
    }
}

/// `run --report` into a read-only folder and onto a full file system: the command runs, its
/// status passes, the report is said lost, and nothing half-written is left (root: tmpfs mounts
/// in a private namespace).
#[test]
fn run_reports_on_a_read_only_or_full_file_system_are_said_lost() {
    let r = in_mount_ns(
        r#"mkdir "$D/ro" "$D/full"
           mount -t tmpfs -o ro,size=64k tmpfs "$D/ro" || { echo SKIP-NO-MOUNT >&2; exit 0; }
           mount -t tmpfs -o size=4k tmpfs "$D/full" || { echo SKIP-NO-MOUNT >&2; exit 0; }
           printf 'old report\n' > "$D/full/r.json"
           dd if=/dev/zero of="$D/full/fill" bs=1k count=64 2>/dev/null
           GPUDOCTOR_RUN_INTERVAL=0.1 "$G" run --report "$D/ro/r.json" -- sh -c 'exit 7'; echo "ro=$?"
           GPUDOCTOR_RUN_INTERVAL=0.1 "$G" run --report "$D/full/r.json" -- sh -c 'exit 7'; echo "full=$?"
           printf 'content=%s\n' "$(cat "$D/full/r.json")"
           ls -A "$D/ro" "$D/full" | tr '\n' ' ' | sed 's/^/entries=/'"#,
    );
    let Some((_, out, err)) = r else {
        eprintln!("not root or no mount namespace: the read-only and full cases did not run");
        return;
    };
    assert!(out.contains("ro=7"), "{out}\n{err}");
    assert!(out.contains("full=7"), "{out}\n{err}");
    assert_eq!(err.matches("the report was lost").count(), 2, "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(out.contains("content=old report"), "{out}");
    assert!(
        !out.contains(".gpudoctor-"),
        "a temporary file was left: {out}"
    );
}
