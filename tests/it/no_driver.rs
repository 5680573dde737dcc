//! The real no-driver path of a machine without an NVIDIA driver (every developer machine and
//! CI): `check` exits 1 with a `driver.missing` finding that says why, in every format, and
//! never panics.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{finding, has_driver, Run};

#[test]
fn check_exits_1_with_driver_missing_in_every_format() {
    if has_driver() {
        eprintln!("skipping: this machine has an NVIDIA driver");
        return;
    }
    let json = Run::new().args(["check", "--format", "json"]).run();
    assert_eq!(json.code, 1, "stderr: {}", json.stderr);
    let v = json.json();
    assert_eq!(v["schema"], "gpudoctor.report/1");
    assert_eq!(v["verdict"], "fail");
    let missing = finding(&v, "driver.missing");
    assert_eq!(missing["category"], "driver_missing");
    assert_eq!(missing["severity"], "error");
    // It says why: here, no module and no libraries.
    let detail = missing["detail"].as_str().unwrap();
    assert!(detail.contains("kernel module"), "{detail}");
    assert!(!missing["fix"]["commands"].as_array().unwrap().is_empty());
    assert_eq!(
        v["snapshot"]["driver"]["kernel_module"]["code"],
        "not_loaded"
    );

    let human = Run::new().args(["check"]).run();
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("[✗] NVIDIA driver: not found"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("rule driver.missing"));
    assert!(!human.stdout.contains('\x1b'), "no colour off a TTY");

    let md = Run::new().args(["check", "--format", "markdown"]).run();
    assert_eq!(md.code, 1);
    assert!(md.stdout.starts_with("## gpudoctor check: FAIL"));
    assert!(md.stdout.contains("`driver.missing` · `driver_missing`"));

    let alias = Run::new().args(["check", "--json"]).run();
    assert_eq!(alias.code, 1);
    assert_eq!(alias.json()["verdict"], "fail");
}

#[test]
fn skipping_the_driver_rules_makes_the_check_pass_and_colour_can_be_forced() {
    if has_driver() {
        return;
    }
    let r = Run::new()
        .args([
            "check",
            "--skip",
            "driver",
            "--skip",
            "container",
            "--color",
            "always",
        ])
        .run();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains('\x1b'));
    assert!(r.stdout.contains("No issues found."));
}

#[test]
fn snapshot_probes_without_failing() {
    let r = Run::new().args(["snapshot"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["schema"], "gpudoctor.snapshot/1");
    let probes: Vec<&str> = v["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for p in ["host", "driver-files", "nvml", "libcuda", "software"] {
        assert!(probes.contains(&p), "probe {p} missing from {probes:?}");
    }
}

#[test]
fn bad_arguments_exit_2_naming_what_is_wrong() {
    let r = Run::new().args(["check", "--assume", "drivr=1"]).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown key \"drivr\""), "{}", r.stderr);

    let r = Run::new()
        .args(["check", "--no-probe", "--assume", "driver=abc"])
        .run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--assume driver=abc"), "{}", r.stderr);

    let r = Run::new().args(["check", "--timeout", "-1"]).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--timeout"));

    let r = Run::new().args(["check", "--format", "yaml"]).run();
    assert_eq!(r.code, 2);

    let r = Run::new().args(["frobnicate"]).run();
    assert_eq!(r.code, 2);

    let r = Run::new().args(["--version"]).run();
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("gpudoctor "));
}

#[test]
fn a_bad_snapshot_file_exits_2_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("snap.json");
    std::fs::write(
        &p,
        "{\n  \"schema\": \"gpudoctor.snapshot/1\",\n  oops\n}\n",
    )
    .unwrap();
    let r = Run::new().args(["check", "--snapshot"]).arg_path(&p).run();
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!("{}:3:", p.display())),
        "{}",
        r.stderr
    );

    std::fs::write(&p, "{\"schema\": \"gpudoctor.snapshot/9\"}").unwrap();
    let r = Run::new().args(["check", "--snapshot"]).arg_path(&p).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("gpudoctor.snapshot/9"), "{}", r.stderr);

    let r = Run::new()
        .args(["check", "--snapshot", "/nonexistent/x.json"])
        .run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot read the snapshot"));
}

#[test]
fn a_bad_matrix_exits_2_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.yaml");
    std::fs::write(&p, "schema: gpudoctor.matrix/1\ndata_version: \"1\"\ngpus:\n  - cc: \"8.6\"\n    arch: Ampere\n    names: [a10]\n    sorce: x\n").unwrap();
    let r = Run::new()
        .args(["check", "--no-probe", "--matrix"])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("m.yaml"), "{}", r.stderr);
    assert!(
        r.stderr.contains("m.yaml:7:5: unknown field `sorce`"),
        "{}",
        r.stderr
    );
}

#[test]
fn snapshot_output_never_overwrites_a_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("mine.json");
    std::fs::write(&p, "precious").unwrap();
    let r = Run::new().args(["snapshot", "-o"]).arg_path(&p).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already exists"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "precious");
    let r = Run::new()
        .args(["snapshot", "--force", "-o"])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains("gpudoctor.snapshot/1"));
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn rules_lists_every_rule_once() {
    let r = Run::new().args(["rules", "--json"]).run();
    assert_eq!(r.code, 0);
    let v = r.json();
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    let mut dedup = ids.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(ids.len(), dedup.len());
    for id in [
        "driver.missing",
        "driver.library-mismatch",
        "container.no-gpu",
        "libs.path-conflict",
        "framework.cpu-only-build",
        "gpu.memory-held",
        "env.cuda-visible-devices",
        "gpus.expected-count",
    ] {
        assert!(ids.contains(&id), "{id} missing");
    }
    for x in v.as_array().unwrap() {
        for k in ["what", "why", "fix"] {
            assert!(x[k].as_str().unwrap().len() > 20, "{} has no {k}", x["id"]);
        }
    }
}

/// User files that are not regular files of a sane size give a clear error and exit 2 at once:
/// a FIFO (which used to block for good), /dev/zero (which used to eat memory), a huge file.
#[test]
fn user_files_that_are_not_plain_files_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("snap.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let big = d.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(64 << 20).unwrap();
    for (flag, path, want) in [
        (
            "--snapshot",
            fifo.as_path(),
            "is a FIFO (named pipe), not a regular file",
        ),
        (
            "--snapshot",
            std::path::Path::new("/dev/zero"),
            "device, not a regular file",
        ),
        (
            "--snapshot",
            big.as_path(),
            "gpudoctor reads at most 32 MiB",
        ),
        (
            "--policy",
            fifo.as_path(),
            "is a FIFO (named pipe), not a regular file",
        ),
        (
            "--matrix",
            std::path::Path::new("/dev/zero"),
            "device, not a regular file",
        ),
    ] {
        let t = std::time::Instant::now();
        let r = Run::new().args(["check", flag]).arg_path(path).run();
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{flag} {path:?} hung"
        );
        assert_eq!(r.code, 2, "{flag} {path:?}: {}", r.stdout);
        assert!(r.stderr.contains(want), "{flag} {path:?}: {}", r.stderr);
    }
    let r = Run::new()
        .args(["matrix", "validate"])
        .arg_path(&fifo)
        .run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("FIFO"), "{}", r.stderr);
}
