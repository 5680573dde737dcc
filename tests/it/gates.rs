//! Issue 17, "Gates that cannot be fooled": a selection, a Python path or a GPU index that names
//! nothing exits 2 with what exists; marks never claim more than was checked, and every renderer
//! says the same; a `--deep` import that times out is a `probe.timeout` finding with the
//! `--timeout` to give, with progress on a terminal only; messages that do not contradict
//! themselves; a man page for every subcommand; fleet scripts that find the binary or say how to
//! install it; cargo's own LD_LIBRARY_PATH is not a GPU setting.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

#[cfg(unix)]
use common::finding;
use common::{root, snapshot_fixture, Run};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const NODRIVER: &str = "debian12-docker-nodriver.json";
const NODRIVER_CHECK: &str = "debian12-docker-nodriver-check.json";
const H100: &str = "synthetic-2xh100.json";

fn check_snapshot(name: &str, extra: &[&str]) -> common::Ran {
    Run::new()
        .args(["check", "--color", "never", "--snapshot"])
        .arg_path(&snapshot_fixture(name))
        .args(extra.iter().copied())
        .run()
}

// ---------------------------------------------------------------------------------------------
// Selections, paths and indexes that name nothing

#[test]
fn only_or_skip_matching_no_rule_exits_2_listing_what_exists() {
    for args in [
        vec!["--only", "nosuch"],
        vec!["--skip", "nosuch."],
        vec!["--only", "driver.", "--only", "drvier."],
    ] {
        let r = check_snapshot(NODRIVER, &args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        for want in [
            "no rule id starts with it",
            "Rule prefixes: ",
            "driver.",
            "driver.missing",
            "health.pcie",
            "driver_missing",
            "gpudoctor rules",
        ] {
            assert!(
                r.stderr.contains(want),
                "{args:?}: no {want:?} in {}",
                r.stderr
            );
        }
    }
    // Every rule `gpudoctor rules` lists is named.
    let rules = Run::new().args(["rules"]).run().stdout;
    let r = check_snapshot(NODRIVER, &["--only", "nosuch"]);
    for id in rules.lines().filter_map(|l| l.split_whitespace().next()) {
        assert!(r.stderr.contains(id), "{id} is not listed");
    }
    // Prefixes and categories that exist still work.
    assert_eq!(check_snapshot(NODRIVER, &["--only", "driver."]).code, 1);
    assert_eq!(
        check_snapshot(NODRIVER, &["--only", "driver_missing"]).code,
        1
    );
    assert_eq!(
        check_snapshot(NODRIVER, &["--skip", "container.", "--skip", "driver."]).code,
        0
    );
}

#[test]
fn only_and_skip_that_leave_no_rule_exit_2() {
    let r = check_snapshot(NODRIVER, &["--only", "driver.", "--skip", "driver."]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("leave no rule to run"), "{}", r.stderr);
}

#[test]
fn a_python_path_that_does_not_exist_exits_2() {
    for cmd in ["check", "snapshot"] {
        let r = Run::new()
            .args([cmd, "--python", "/nonexistent/bin/python3"])
            .run();
        assert_eq!(r.code, 2, "{cmd}: {}", r.stdout);
        assert!(
            r.stderr
                .contains("--python /nonexistent/bin/python3: no such file or directory"),
            "{cmd}: {}",
            r.stderr
        );
    }
    // One that exists but is not Python: a file and a directory.
    let d = tempfile::tempdir().unwrap();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "not python\n").unwrap();
    let r = Run::new()
        .args(["check", "--python"])
        .arg_path(&notes)
        .run();
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("not a Python interpreter"),
        "{}",
        r.stderr
    );
    let r = Run::new()
        .args(["snapshot", "--python"])
        .arg_path(d.path())
        .run();
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("a directory with no Python environment in it"),
        "{}",
        r.stderr
    );
    // One that exists is accepted.
    let r = Run::new()
        .args([
            "check",
            "--no-smoke",
            "--format",
            "json",
            "--python",
            "/usr",
        ])
        .run();
    assert!(matches!(r.code, 0 | 1), "{}", r.stderr);
}

#[test]
fn stress_on_a_gpu_index_that_does_not_exist_exits_2_with_those_that_do() {
    let r = Run::new()
        .args(["stress", "--seconds", "1", "--gpu", "5"])
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .run();
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("--gpu 5: no such GPU here (indexes 0..1)"),
        "{}",
        r.stderr
    );
    // An index that exists runs.
    let r = Run::new()
        .args([
            "stress",
            "--seconds",
            "0.5",
            "--gpu",
            "1",
            "--format",
            "json",
        ])
        .env("GPUDOCTOR_SIM_GPUS", "2")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Marks

/// "Title" → symbol, from the human output's area lines.
fn human_marks(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter(|l| l.starts_with('['))
        .map(|l| {
            let sym = l[1..].split(']').next().unwrap().to_string();
            let title = l.split("] ").nth(1).unwrap().split(':').next().unwrap();
            (title.to_string(), sym)
        })
        .collect()
}

const TITLES: [(&str, &str); 9] = [
    ("host", "Host"),
    ("driver", "NVIDIA driver"),
    ("gpus", "GPUs"),
    ("smoke", "GPU smoke tests"),
    ("stress", "Stress test"),
    ("cuda", "CUDA"),
    ("cudnn", "cuDNN"),
    ("frameworks", "Frameworks"),
    ("environment", "Environment"),
];

fn symbol(status: &str) -> &'static str {
    match status {
        "ok" => "✓",
        "warning" => "!",
        "error" => "✗",
        "unknown" => "?",
        "waived" => "~",
        "not_checked" => "-",
        s => panic!("unknown status {s}"),
    }
}

/// The marks of one run in every renderer: human, JSON, Markdown, Prometheus; all must agree.
fn marks_everywhere(args: &[&str]) -> BTreeMap<String, String> {
    let run = |fmt: &str| {
        Run::new()
            .args(["check", "--color", "never", "--format", fmt])
            .args(args.iter().copied())
            .run()
    };
    let human = human_marks(&run("human").stdout);
    let v = run("json").json();
    let json: BTreeMap<String, String> = v["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let key = a["area"].as_str().unwrap();
            let title = TITLES.iter().find(|t| t.0 == key).unwrap().1;
            (
                title.to_string(),
                symbol(a["status"].as_str().unwrap()).to_string(),
            )
        })
        .collect();
    assert_eq!(human, json, "human and JSON marks differ for {args:?}");
    let md = run("markdown").stdout;
    let markdown: BTreeMap<String, String> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| |"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (
                cells[1].to_string(),
                cells[0].trim_start_matches("| ").to_string(),
            )
        })
        .collect();
    assert_eq!(
        human, markdown,
        "human and Markdown marks differ for {args:?}"
    );
    let prom = run("prometheus").stdout;
    let prometheus: BTreeMap<String, String> = prom
        .lines()
        .filter(|l| l.starts_with("gpudoctor_area_status{"))
        .map(|l| {
            let area = l
                .split("area=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let status = l
                .split("status=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let title = TITLES.iter().find(|t| t.0 == area).unwrap().1;
            (title.to_string(), symbol(status).to_string())
        })
        .collect();
    assert_eq!(
        human, prometheus,
        "human and Prometheus marks differ for {args:?}"
    );
    human
}

#[test]
fn rules_left_out_by_skip_are_not_a_tick() {
    let s = snapshot_fixture(NODRIVER);
    let s = s.to_str().unwrap();
    let m = marks_everywhere(&["--snapshot", s, "--skip", "driver."]);
    assert_eq!(m["NVIDIA driver"], "-", "{m:?}");
    let r = check_snapshot(NODRIVER, &["--skip", "driver."]);
    assert!(
        r.stdout
            .contains("left out by --only/--skip: driver.missing"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Not checked: NVIDIA driver"),
        "{}",
        r.stdout
    );
    let v = check_snapshot(NODRIVER, &["--skip", "driver.", "--json"]).json();
    assert!(v["rules_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["rule"] == "driver.missing"));
    // --only one rule: every other area is not checked, and a pass says so.
    let m = marks_everywhere(&["--snapshot", s, "--only", "compat.driver-too-old"]);
    assert_eq!(m["Host"], "-", "{m:?}");
    assert_eq!(m["Environment"], "-", "{m:?}");
    let r = check_snapshot(
        NODRIVER,
        &["--only", "compat.driver-too-old", "--format", "line"],
    );
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .starts_with("PASS: no issues found (not checked: Host, "),
        "{}",
        r.stdout
    );
}

#[test]
fn what_was_not_probed_is_not_a_tick() {
    let m = marks_everywhere(&["--no-probe", "--assume", "torch=2.3.0+cpu"]);
    for area in [
        "Host",
        "NVIDIA driver",
        "GPUs",
        "CUDA",
        "cuDNN",
        "Environment",
    ] {
        assert_eq!(m[area], "-", "{area}: {m:?}");
    }
    let r = Run::new()
        .args(["check", "--no-probe", "--assume", "torch=2.3.0+cpu"])
        .run();
    assert!(
        r.stdout.contains("[-] Host: unknown (not probed)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("[-] Environment: not probed"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("[✓] Host"), "{}", r.stdout);
}

#[test]
fn a_waived_problem_has_its_own_mark() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("policy.yaml");
    std::fs::write(
        &p,
        "schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: driver install booked, OPS-1\n    expires: 2099-12-31\n",
    )
    .unwrap();
    let s = snapshot_fixture(NODRIVER);
    let m = marks_everywhere(&[
        "--snapshot",
        s.to_str().unwrap(),
        "--policy",
        p.to_str().unwrap(),
    ]);
    assert_eq!(m["NVIDIA driver"], "~", "{m:?}");
    let r = check_snapshot(NODRIVER, &["--policy", p.to_str().unwrap()]);
    assert!(r.stdout.contains(" 1 waived."), "{}", r.stdout);
}

#[test]
fn every_renderer_marks_a_troubled_host_the_same() {
    let s = snapshot_fixture(H100);
    let m = marks_everywhere(&["--snapshot", s.to_str().unwrap()]);
    assert_eq!(m["GPUs"], "!", "{m:?}");
    let s = snapshot_fixture(NODRIVER_CHECK);
    let m = marks_everywhere(&["--snapshot", s.to_str().unwrap()]);
    assert_eq!(
        m["GPU smoke tests"], "-",
        "smoke tests that did not run: {m:?}"
    );
}

/// The JUnit testcases: name → "failure" | "skipped" | "passed".
fn junit_cases(xml: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for case in xml.split("<testcase ").skip(1) {
        let name = case
            .split(" name=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let body = case.split("</testcase>").next().unwrap();
        let outcome = if body.contains("<failure") {
            "failure"
        } else if body.contains("<skipped") {
            "skipped"
        } else {
            "passed"
        };
        out.insert(name.to_string(), outcome.to_string());
    }
    out
}

#[test]
fn junit_skips_what_did_not_run_on_a_machine_with_no_gpu() {
    let r = check_snapshot(NODRIVER, &["--format", "junit"]);
    let cases = junit_cases(&r.stdout);
    for rule in [
        "health.memory",
        "health.pcie",
        "stress.memory",
        "stress.compute",
        "smoke.failed",
    ] {
        assert_eq!(
            cases.get(rule).map(String::as_str),
            Some("skipped"),
            "{rule}: {}",
            r.stdout
        );
    }
    assert_eq!(cases["driver.missing"], "failure");
    let skipped = cases.values().filter(|o| *o == "skipped").count();
    assert!(
        r.stdout.contains(&format!("skipped=\"{skipped}\"")),
        "{}",
        r.stdout
    );
    // With GPUs, the GPU rules run (and stress, which check does not run, is still skipped).
    let r = check_snapshot(H100, &["--format", "junit"]);
    let cases = junit_cases(&r.stdout);
    assert_ne!(cases["health.pcie (GPU 0)"], "skipped");
    assert_eq!(cases["stress.memory (GPU 0)"], "skipped", "{}", r.stdout);
}

#[test]
fn stress_junit_on_a_machine_with_no_gpu_skips_the_tests_that_did_not_run() {
    if common::has_driver() {
        return;
    }
    let r = Run::new()
        .args(["stress", "--seconds", "1", "--format", "junit"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let cases = junit_cases(&r.stdout);
    for rule in ["stress.memory", "stress.compute", "stress.watch"] {
        assert_eq!(
            cases.get(rule).map(String::as_str),
            Some("skipped"),
            "{rule}: {}",
            r.stdout
        );
    }
    assert!(cases.values().any(|o| o == "failure"), "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// --deep timeouts and progress

/// A `python3` whose imports hang: it answers everything else as the real one does.
#[cfg(unix)]
fn slow_python(dir: &Path) -> std::path::PathBuf {
    let real = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a python3");
    let p = dir.join("python3");
    common::write_script(
        &p,
        &format!(
            "#!/bin/sh\ncase \"$2\" in *GPUDOCTOR_DEEP*) sleep 30 ;; esac\nexec {real} \"$@\"\n"
        ),
    );
    p
}

#[cfg(unix)]
#[test]
fn a_deep_import_that_times_out_is_a_probe_timeout_finding_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let py = slow_python(d.path());
    let r = Run::new()
        .args([
            "check",
            "--deep",
            "--no-smoke",
            "--timeout",
            "3",
            "--json",
            "--fail-on",
            "warning",
        ])
        .args(["--python"])
        .arg_path(&py)
        .run();
    let v = r.json();
    let f = finding(&v, "probe.timeout");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["category"], "probe_timeout");
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .starts_with("Importing the frameworks in "),
        "{f:#}"
    );
    let cmds = f["fix"]["commands"].as_array().unwrap();
    assert_eq!(cmds[0], "gpudoctor check --deep --timeout 30", "{f:#}");
    assert!(v["summary"]["warnings"].as_u64().unwrap() >= 1);
    assert_eq!(r.code, 1, "--fail-on warning fails on it");
    // Not a terminal: no progress output at all.
    assert!(!r.stderr.contains("Probing"), "{}", r.stderr);
    // The human view shows it under Frameworks.
    let r = Run::new()
        .args([
            "check",
            "--deep",
            "--no-smoke",
            "--timeout",
            "3",
            "--color",
            "never",
        ])
        .args(["--python"])
        .arg_path(&py)
        .run();
    let fw = r.stdout.split("Frameworks:").nth(1).unwrap();
    assert!(fw.contains("timed out after 2.5 s"), "{}", r.stdout);
    assert!(
        fw.contains("$ gpudoctor check --deep --timeout 30"),
        "{}",
        r.stdout
    );
}

#[cfg(unix)]
#[test]
fn long_probes_show_progress_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "script (util-linux) is missing"
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let py = slow_python(d.path());
    // script(1) gives gpudoctor a pseudo-terminal for stdout and stderr.
    let cmd = format!(
        "{} check --deep --no-smoke --timeout 2 --color never --python {}",
        env!("CARGO_BIN_EXE_gpudoctor"),
        py.display()
    );
    let o = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent-home")
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Probing this machine and importing each framework (--deep; at most 2 s)"),
        "{out}"
    );
    // And the report follows it.
    assert!(out.contains("Frameworks:"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// Messages

#[test]
fn the_timeout_message_says_what_is_allowed() {
    for bad in ["0", "-1", "3601"] {
        let r = Run::new().args(["check", "--timeout", bad]).run();
        assert_eq!(r.code, 2);
        assert!(
            r.stderr.contains("more than 0 and at most 3600"),
            "{bad}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("between 0"), "{}", r.stderr);
    }
}

#[test]
fn an_unknown_gpu_model_message_gives_an_example_that_follows_its_advice() {
    let r = Run::new()
        .args(["check", "--no-probe", "--assume", "gpu=Frobnitz X9"])
        .run();
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("--assume gpu.cc="), "{}", r.stderr);
    assert!(!r.stderr.contains("example --assume gpu="), "{}", r.stderr);
    // And the example it gives works.
    let example = r.stderr.split("for example ").nth(1).unwrap().trim();
    let (flag, value) = example.split_once(' ').unwrap();
    let r = Run::new().args(["check", "--no-probe", flag, value]).run();
    assert_eq!(r.code, 0, "{example}: {}", r.stderr);
}

#[test]
fn man_pages_exist_for_every_subcommand_they_refer_to() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("man1");
    let r = Run::new().args(["man", "--dir"]).arg_path(&dir).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for f in [
        "gpudoctor.1",
        "gpudoctor-check.1",
        "gpudoctor-stress.1",
        "gpudoctor-matrix-show.1",
    ] {
        assert!(files.iter().any(|x| x == f), "{f} not in {files:?}");
    }
    assert!(
        !files.iter().any(|f| f.contains("__")),
        "hidden commands: {files:?}"
    );
    // Every gpudoctor-X(1) a page refers to was written.
    for f in &files {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        for r in text.split("gpudoctor\\-").skip(1) {
            let name: String = r
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '\\' || *c == '-')
                .collect::<String>()
                .replace("\\-", "-");
            let name = name.trim_end_matches('-');
            if name.is_empty() {
                continue; // "gpudoctor-SUBCOMMAND.1" in a help text
            }
            let page = format!("gpudoctor-{name}.1");
            assert!(files.contains(&page), "{f} refers to {page}, not written");
        }
    }
    // The check page documents its options.
    let check = std::fs::read_to_string(dir.join("gpudoctor-check.1")).unwrap();
    assert!(check.contains("\\-\\-only"), "{check}");
    // One page on stdout, and a subcommand that does not exist.
    let r = Run::new().args(["man", "stress"]).run();
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\\-\\-memory\\-fraction"), "{}", r.stdout);
    let r = Run::new().args(["man", "nosuch"]).run();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("check"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Fleet scripts find the binary or say how to install it

/// Runs a script with no gpudoctor on PATH and no GPUDOCTOR, HOME in `home`.
fn bare_script(rel: &str, home: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(root().join(rel))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("SCONTROL", "true")
        .env("SLURMD_NODENAME", "node1")
        .env(
            "GPUDOCTOR_CHECK_ARGS",
            format!("--snapshot {}", snapshot_fixture(NODRIVER).display()),
        )
        .current_dir(home)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_fleet_scripts_say_how_to_install_a_missing_binary() {
    if Path::new("/usr/local/bin/gpudoctor").exists() || Path::new("/usr/bin/gpudoctor").exists() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (rc, out, err) = bare_script("scripts/k8s/gpudoctor-npd.sh", home.path(), &[]);
    assert_eq!(rc, 2);
    assert_eq!(out, "gpudoctor not found: put it on PATH or set GPUDOCTOR");
    assert!(err.contains("cargo install --locked --path ."), "{err}");
    let (rc, _, err) = bare_script("scripts/slurm-healthcheck.sh", home.path(), &[]);
    assert_eq!(rc, 2);
    assert!(err.contains("gpudoctor not found"), "{err}");
    assert!(err.contains("cargo install --locked --path ."), "{err}");
    assert!(!err.contains("exit 127"), "{err}");
    // provision-gate.sh finds target/release/gpudoctor of its checkout when there is one.
    if !root().join("target/release/gpudoctor").exists() {
        let (rc, _, err) =
            bare_script("scripts/provision-gate.sh", home.path(), &["--skip-stress"]);
        assert_eq!(rc, 2);
        assert!(err.contains("cargo install --locked --path ."), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn the_fleet_scripts_find_the_binary_in_cargo_bin() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gpudoctor"), bin.join("gpudoctor")).unwrap();
    // The no-driver snapshot: unfit, with gpudoctor's own reason.
    let (rc, out, err) = bare_script("scripts/k8s/gpudoctor-npd.sh", home.path(), &[]);
    assert_eq!(
        (rc, out.as_str()),
        (
            1,
            "gpudoctor: This container was started without GPU access; No NVIDIA driver found"
        ),
        "{err}"
    );
    let (rc, _, err) = bare_script("scripts/slurm-healthcheck.sh", home.path(), &[]);
    assert_eq!(rc, 0, "drained through SCONTROL=true: {err}");
    assert!(
        err.contains("drained node1: gpudoctor: This container was started without GPU access"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// cargo's LD_LIBRARY_PATH

#[test]
fn under_cargo_its_library_path_is_not_reported_as_a_gpu_variable() {
    let cargo_dirs = format!(
        "{0}/target/debug/deps:{0}/target/debug:/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib",
        env!("CARGO_MANIFEST_DIR")
    );
    let r = Run::new()
        .args(["snapshot"])
        .env("CARGO", "/root/.cargo/bin/cargo")
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .env("LD_LIBRARY_PATH", &cargo_dirs)
        .run();
    let v = r.json();
    assert!(v["env"].get("LD_LIBRARY_PATH").is_none(), "{:#}", v["env"]);
    // The user's own entries stay.
    let r = Run::new()
        .args(["snapshot"])
        .env("CARGO", "/root/.cargo/bin/cargo")
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .env("LD_LIBRARY_PATH", format!("{cargo_dirs}:/opt/cuda/lib64"))
        .run();
    assert_eq!(r.json()["env"]["LD_LIBRARY_PATH"], "/opt/cuda/lib64");
}
