//! The kernel driver's knowledge is what its generators give: `kernel_build.py --check` (mined
//! data + the cited mapping → knowledge/xid.yaml, knowledge/kernel-events.yaml) runs everywhere;
//! `kernel_mine.py --check` (the driver's source → knowledge/mined/) runs only where a copy of
//! NVIDIA/open-gpu-kernel-modules is (KNOWLEDGE_SRC, or the mirror path the script names), and
//! says so when it is not.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::python;
use std::process::Command;

fn script(name: &str, env_src: Option<&str>) -> std::process::Output {
    let mut c = Command::new(python());
    c.arg(format!("scripts/knowledge/{name}"))
        .arg("--check")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(s) = env_src {
        c.env("KNOWLEDGE_SRC", s);
    }
    c.output().expect("python3 runs scripts/knowledge")
}

#[test]
fn the_built_knowledge_is_what_its_inputs_give() {
    let out = script("kernel_build.py", None);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // It reports how many of the driver's formats it mined and mapped.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("NVRM formats mined: 850"), "{text}");
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
    for f in ["knowledge/xid.yaml", "knowledge/kernel-events.yaml"] {
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
fn the_mined_data_is_what_the_driver_source_gives_where_the_source_is() {
    let src = std::env::var("KNOWLEDGE_SRC")
        .unwrap_or_else(|_| "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo".into());
    if !std::path::Path::new(&src).is_dir() {
        eprintln!("kernel_mine.py --check not run: no NVIDIA/open-gpu-kernel-modules at {src} (set KNOWLEDGE_SRC)");
        return;
    }
    let out = script("kernel_mine.py", Some(&src));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
