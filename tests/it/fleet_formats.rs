//! `--format prometheus` and `--format junit` for `check` and `stress`: pinned by snapshot
//! tests, and checked by their real consumers: `promtool check metrics` (Debian's prometheus
//! package) and `xmllint --schema` against a JUnit XSD (tests/fixtures/junit/junit.xsd). .ci/run
//! installs both; with CI set a missing tool fails the test, elsewhere it is skipped with a note.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{fixtures, snapshot_fixture, Run};

/// The consumer tool, or None (outside CI) when it is not installed.
fn consumer(tool: &str) -> Option<&str> {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if found {
        return Some(tool);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{tool} is missing: .ci/run installs it (prometheus, libxml2-utils)"
    );
    eprintln!("skipping the {tool} check: {tool} is not installed");
    None
}

/// Runs `tool args` with `input` on stdin; (success, output).
fn feed(tool: &str, args: &[&str], input: &str) -> (bool, String) {
    let mut c = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn promtool_accepts(text: &str) {
    if let Some(t) = consumer("promtool") {
        let (ok, out) = feed(t, &["check", "metrics"], text);
        assert!(ok && out.trim().is_empty(), "promtool: {out}\n{text}");
    }
}

fn xsd() -> String {
    fixtures()
        .join("junit/junit.xsd")
        .to_string_lossy()
        .into_owned()
}

fn xmllint_accepts(text: &str) {
    if let Some(t) = consumer("xmllint") {
        let (ok, out) = feed(t, &["--noout", "--schema", &xsd(), "-"], text);
        assert!(ok, "xmllint: {out}\n{text}");
    }
}

fn gpu_host(format: &str) -> common::Ran {
    Run::new()
        .args(["check", "--format", format, "--snapshot"])
        .arg_path(&snapshot_fixture("synthetic-2xh100.json"))
        .run()
}

#[test]
fn prometheus_of_a_gpu_host() {
    let r = gpu_host("prometheus");
    assert_eq!(r.code, 0, "{}", r.stderr);
    promtool_accepts(&r.stdout);
    let verdicts: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("gpudoctor_verdict{"))
        .collect();
    assert_eq!(
        verdicts,
        [
            "gpudoctor_verdict{verdict=\"pass\"} 0",
            "gpudoctor_verdict{verdict=\"warn\"} 1",
            "gpudoctor_verdict{verdict=\"fail\"} 0"
        ]
    );
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.starts_with("gpudoctor_findings{"))
            .count(),
        24 * 3
    );
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn prometheus_without_a_driver() {
    let r = Run::new().args(["check", "--format", "prometheus"]).run();
    assert_eq!(r.code, 1);
    promtool_accepts(&r.stdout);
    if !common::has_driver() {
        assert!(
            r.stdout
                .contains("gpudoctor_findings{category=\"driver_missing\",severity=\"error\"} 1"),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("gpudoctor_verdict{verdict=\"fail\"} 1"));
        assert!(
            !r.stdout.contains("gpudoctor_gpu_"),
            "no GPU values when nothing was read"
        );
    }
}

#[test]
fn junit_of_a_gpu_host() {
    let r = gpu_host("junit");
    assert_eq!(r.code, 0);
    xmllint_accepts(&r.stdout);
    let cases = r.stdout.matches("<testcase ").count();
    assert!(
        r.stdout.contains(&format!(
            "<testsuite name=\"gpudoctor check\" tests=\"{cases}\" failures=\"0\""
        )),
        "{}",
        r.stdout
    );
    // A GPU rule has a testcase per GPU.
    assert!(
        r.stdout.contains("name=\"health.memory (GPU 0)\"")
            && r.stdout.contains("name=\"health.memory (GPU 1)\"")
    );
    insta::assert_snapshot!(r.stdout);
    // --fail-on warning turns the warnings into failures.
    let r = Run::new()
        .args([
            "check",
            "--format",
            "junit",
            "--fail-on",
            "warning",
            "--snapshot",
        ])
        .arg_path(&snapshot_fixture("synthetic-2xh100.json"))
        .run();
    xmllint_accepts(&r.stdout);
    let failures = r.stdout.matches("<failure ").count();
    assert!(failures > 0);
    assert!(r.stdout.contains(&format!("failures=\"{failures}\"")));
}

#[test]
fn junit_without_a_driver_fails_the_driver_rule() {
    let r = Run::new().args(["check", "--format", "junit"]).run();
    assert_eq!(r.code, 1);
    xmllint_accepts(&r.stdout);
    if !common::has_driver() {
        assert!(
            r.stdout
                .contains("<failure message=\"No NVIDIA driver found\" type=\"driver_missing\">"),
            "{}",
            r.stdout
        );
    }
}

#[test]
fn the_schema_check_is_real() {
    // A failure without its type is not valid JUnit for the readers the XSD stands for.
    let bad = "<testsuites><testsuite name=\"x\" tests=\"1\" failures=\"1\" errors=\"0\"><testcase classname=\"a\" name=\"b\"><failure message=\"m\">t</failure></testcase></testsuite></testsuites>";
    if let Some(t) = consumer("xmllint") {
        let (ok, out) = feed(t, &["--noout", "--schema", &xsd(), "-"], bad);
        assert!(!ok, "{out}");
        assert!(out.contains("'type' is required"), "{out}");
    }
    // promtool rejects a malformed metric line.
    if let Some(t) = consumer("promtool") {
        let (ok, _) = feed(
            t,
            &["check", "metrics"],
            "gpudoctor_verdict{verdict=pass} 1\n",
        );
        assert!(!ok);
    }
}

#[test]
fn stress_reports_in_both_formats() {
    for (format, check) in [
        ("prometheus", promtool_accepts as fn(&str)),
        ("junit", xmllint_accepts),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
            .env("GPUDOCTOR_SIM_GPUS", "2")
            .env("GPUDOCTOR_SIM_MEM_MIB", "4")
            .env("GPUDOCTOR_SIM_FAULTS", "stuck-bit")
            .args(["stress", "--seconds", "1", "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        check(&text);
        if format == "prometheus" {
            assert!(
                text.lines().any(
                    |l| l.starts_with("gpudoctor_stress_memory_errors{gpu=\"0\"}")
                        && !l.ends_with(" 0")
                ),
                "{text}"
            );
        } else {
            assert!(text.contains("name=\"stress.memory (GPU 0)\""), "{text}");
            assert!(text.contains("type=\"stress_failure\""), "{text}");
        }
    }
}
