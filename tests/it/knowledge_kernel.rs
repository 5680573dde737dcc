//! The kernel driver's knowledge is what its generators give, from pinned inputs, everywhere (CI
//! included): `kernel_mine.py --check` (the pinned extract of the driver's source,
//! scripts/knowledge/kernel-extract.json → knowledge/mined/) and `kernel_build.py --check` (mined
//! data + the cited mapping and family rules → knowledge/xid.yaml, kernel-events.yaml,
//! kernel-messages.yaml). `kernel_mine.py extract --check` (NVIDIA/open-gpu-kernel-modules → the
//! extract, each file's sha256 with it) needs a copy of the repository (KNOWLEDGE_SRC, or the
//! mirror path the script names) and says so when there is none.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::python;
use std::process::Command;

/// The script's standard output, once it has exited 0 (else its output is the failure).
fn succeeded(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn script(name: &str, env_src: Option<&str>) -> std::process::Output {
    script_args(name, &["--check"], env_src)
}

fn script_args(name: &str, args: &[&str], env_src: Option<&str>) -> std::process::Output {
    let mut c = Command::new(python());
    c.arg(format!("scripts/knowledge/{name}"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(s) = env_src {
        c.env("KNOWLEDGE_SRC", s);
    }
    c.output().expect("python3 runs scripts/knowledge")
}

#[test]
fn the_built_knowledge_is_what_its_inputs_give() {
    let text = succeeded(script("kernel_build.py", None));
    // It reports how many of the driver's formats it mined and mapped.
    assert!(text.contains("NVRM formats mined: 1929"), "{text}");
    // Every mined format has a category and a fix (an event's, or its family's).
    assert!(text.contains("with a category and a fix: 1929;"), "{text}");
}

#[test]
fn the_mined_data_is_what_the_pinned_extract_gives() {
    let text = succeeded(script("kernel_mine.py", None));
    assert!(text.contains("kernel-nvrm.json: 1929 entries"), "{text}");
    assert!(text.contains("kernel-xid.json: 133 entries"), "{text}");
}

#[test]
fn an_edit_of_the_pinned_extract_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["scripts/knowledge", "knowledge/mined"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    let ok = |d: &std::path::Path| {
        Command::new(python())
            .args(["scripts/knowledge/kernel_mine.py", "--check"])
            .current_dir(d)
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(ok(dir.path()));
    // A message of the driver reworded in the extract: the committed mined data is stale.
    let p = dir.path().join("scripts/knowledge/kernel-extract.json");
    let t = std::fs::read_to_string(&p).unwrap();
    assert!(t.contains("GSP RM heartbeat timed out"));
    std::fs::write(
        &p,
        t.replacen("GSP RM heartbeat timed out", "GSP RM heartbeat late", 1),
    )
    .unwrap();
    assert!(
        !ok(dir.path()),
        "a changed extract passes kernel_mine.py --check"
    );
}

#[test]
fn a_hand_edit_of_the_generated_file_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["scripts/knowledge", "knowledge/mined"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    for f in [
        "knowledge/xid.yaml",
        "knowledge/kernel-events.yaml",
        "knowledge/kernel-messages.yaml",
    ] {
        std::fs::copy(root.join(f), dir.path().join(f)).unwrap();
    }
    let ok = |d: &std::path::Path| {
        Command::new(python())
            .args(["scripts/knowledge/kernel_build.py", "--check"])
            .current_dir(d)
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(ok(dir.path()));
    let p = dir.path().join("knowledge/xid.yaml");
    let t = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, t.replacen("level: crit", "level: info", 1)).unwrap();
    assert!(
        !ok(dir.path()),
        "an edited knowledge/xid.yaml passes --check"
    );
}

#[test]
fn the_pinned_extract_is_what_the_driver_source_gives_where_the_source_is() {
    let src = std::env::var("KNOWLEDGE_SRC")
        .unwrap_or_else(|_| "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo".into());
    if !std::path::Path::new(&src).is_dir() {
        eprintln!("kernel_mine.py extract --check not run: no NVIDIA/open-gpu-kernel-modules at {src} (set KNOWLEDGE_SRC)");
        return;
    }
    succeeded(script_args(
        "kernel_mine.py",
        &["extract", "--check"],
        Some(&src),
    ));
}

/// The Linux kernel's messages (knowledge/linux-messages.yaml) are what linux_mine.py gives from
/// the pinned extract of Debian's linux-source packages and the cited families, everywhere.
#[test]
fn the_linux_knowledge_is_what_its_pinned_extract_gives() {
    let text = succeeded(script("linux_mine.py", None));
    assert!(text.contains("formats mined"), "{text}");
}

/// `linux_mine.py extract --check` where the pinned packages are (target/knowledge-inputs/linux/
/// or $LINUX_DEBS; `apt-get download` fetches them as scripts/knowledge/linux.lock says): the
/// extract is what the packages give, each .deb's sha256 checked against the lock.
#[test]
fn the_linux_extract_is_what_the_pinned_packages_give_where_they_are() {
    let dir = std::env::var("LINUX_DEBS").unwrap_or_else(|_| {
        format!(
            "{}/target/knowledge-inputs/linux",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    let lock = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/knowledge/linux.lock"),
    )
    .unwrap();
    let debs: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.trim().strip_prefix("deb: "))
        .collect();
    assert_eq!(debs.len(), 2, "{lock}");
    if !debs
        .iter()
        .all(|d| std::path::Path::new(&dir).join(d).exists())
    {
        eprintln!("linux_mine.py extract --check not run: the pinned packages are not in {dir}");
        return;
    }
    succeeded(script_args("linux_mine.py", &["extract", "--check"], None));
}
