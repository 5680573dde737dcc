//! See main.rs. Input refused with a message a person can act on, summaries that do not
//! contradict themselves, the Markdown for bug reports redacted, and the native-Windows matrix
//! facts that found nothing (issue 28, items 4-6).

use crate::common::{finding, snapshot_fixture, Ran, Run};
use std::path::{Path, PathBuf};

const NODRIVER: &str = "debian12-docker-nodriver.json";
const H100: &str = "synthetic-2xh100.json";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn check_with_policy(snapshot: &str, policy: &Path, extra: &[&str]) -> Ran {
    Run::new()
        .args(["check", "--color", "never", "--snapshot"])
        .arg_path(&snapshot_fixture(snapshot))
        .args(["--policy"])
        .arg_path(policy)
        .args(extra.iter().copied())
        .run()
}

/// The lines of one area of the human output: its `[x] Title:` line and those under it.
fn area_block<'a>(out: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = out.lines().skip_while(|l| {
        !(l.starts_with('[') && l.split("] ").nth(1).is_some_and(|r| r.starts_with(title)))
    });
    let mut block: Vec<&str> = lines.next().into_iter().collect();
    block.extend(lines.take_while(|l| l.starts_with(' ')));
    block
}

// ---------------------------------------------------------------------------------------------
// Input accepted that should not be

#[test]
fn a_gpu_selector_that_is_neither_an_index_nor_a_uuid_exits_2_with_the_grammar() {
    for (cmd, given) in [
        (vec!["check", "--no-probe"], "abc"),
        (vec!["check", "--no-probe"], ""),
        (vec!["check", "--no-probe"], "0,,1"),
        (
            vec!["stress", "--seconds", "0.2", "--tests", "memory"],
            "abc",
        ),
        (vec!["stress", "--seconds", "0.2", "--tests", "memory"], ""),
    ] {
        let r = Run::new()
            .args(cmd.iter().copied())
            .args(["--gpu", given])
            .run();
        assert_eq!(
            r.code, 2,
            "{cmd:?} --gpu {given:?}: {}{}",
            r.stdout, r.stderr
        );
        assert!(r.stdout.is_empty(), "{cmd:?} --gpu {given:?}: {}", r.stdout);
        for want in [
            format!("--gpu {given:?}"),
            "GPU indexes".to_string(),
            "GPU UUIDs".to_string(),
            "--gpu 0,2".to_string(),
        ] {
            assert!(
                r.stderr.contains(&want),
                "{cmd:?} --gpu {given:?}: no {want:?} in {}",
                r.stderr
            );
        }
    }
    // What the grammar allows still runs: indexes and UUID prefixes.
    for given in ["0", "0, 1", "GPU-5c1b0e2a"] {
        let r = Run::new()
            .args(["check", "--no-probe", "--gpu", given])
            .run();
        assert_eq!(r.code, 0, "--gpu {given:?}: {}", r.stderr);
    }
    let r = Run::new()
        .args(["check", "--color", "never", "--snapshot"])
        .arg_path(&snapshot_fixture(H100))
        .args(["--gpu", "GPU-REDACTED-1", "--json"])
        .run();
    assert!(matches!(r.code, 0 | 1), "{}", r.stderr);
}

#[test]
fn a_waiver_or_severity_naming_no_rule_exits_2_listing_the_rule_ids() {
    let d = tempfile::tempdir().unwrap();
    for (text, line_col, given) in [
        (
            "schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.mising\n    reason: typo\n    expires: 2099-12-31\n",
            ":3:11",
            "driver.mising",
        ),
        (
            "schema: gpudoctor.policy/1\nseverity:\n  - rule: smoke.pcie\n    to: error\n",
            ":3:11",
            "smoke.pcie",
        ),
    ] {
        let p = write(d.path(), "policy.yaml", text);
        let r = check_with_policy(NODRIVER, &p, &[]);
        assert_eq!(r.code, 2, "{text}: {}{}", r.stdout, r.stderr);
        for want in [
            format!("policy.yaml{line_col}"),
            format!("{given:?}"),
            "rule".to_string(),
            "expected a rule id or a prefix".to_string(),
            "driver.missing".to_string(),
            "smoke.pcie-bandwidth".to_string(),
            "policy.waiver-expired".to_string(),
        ] {
            assert!(r.stderr.contains(&want), "no {want:?} in {}", r.stderr);
        }
    }
    // A prefix that covers rules is fine.
    let p = write(
        d.path(),
        "policy.yaml",
        "schema: gpudoctor.policy/1\nwaive:\n  - rule: driver\n    reason: booked\n    expires: 2099-12-31\n",
    );
    assert_eq!(check_with_policy(NODRIVER, &p, &[]).code, 1);
}

#[test]
fn an_expired_waiver_shows_beside_what_it_covered_not_under_environment() {
    let d = tempfile::tempdir().unwrap();
    let p = write(
        d.path(),
        "policy.yaml",
        "schema: gpudoctor.policy/1\nwaive:\n  - rule: driver.missing\n    reason: driver install booked, OPS-1\n    expires: 2020-01-31\n",
    );
    let r = check_with_policy(NODRIVER, &p, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let driver = area_block(&r.stdout, "NVIDIA driver").join("\n");
    assert!(
        driver.contains("A policy waiver expired: driver.missing"),
        "not under the driver's area:\n{}",
        r.stdout
    );
    let env = area_block(&r.stdout, "Environment").join("\n");
    assert!(!env.contains("waiver"), "{}", r.stdout);
    assert!(!env.starts_with("[!]"), "{}", r.stdout);
    // `--skip` leaves it out like any rule.
    let r = check_with_policy(NODRIVER, &p, &["--json", "--skip", "policy.waiver-expired"]);
    assert!(!r.rules().contains(&"policy.waiver-expired".to_string()));
    // In `stress`, an expired waiver of a stress finding is shown in the stress report.
    let p = write(
        d.path(),
        "stress-policy.yaml",
        "schema: gpudoctor.policy/1\nwaive:\n  - rule: stress.memory\n    reason: DIMM swap booked\n    expires: 2020-01-31\n",
    );
    let r = Run::new()
        .args([
            "stress",
            "--seconds",
            "0.3",
            "--tests",
            "memory",
            "--policy",
        ])
        .arg_path(&p)
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .env("GPUDOCTOR_SIM_FAULTS", "stuck-bit")
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("A policy waiver expired: stress.memory"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_yaml_limit_is_said_in_words_not_rust_debug_text() {
    let d = tempfile::tempdir().unwrap();
    // 1 MiB of text, repeated by 70 aliases: 70 MiB once read, past serde-saphyr's 64 MiB.
    let mut text = format!(
        "schema: gpudoctor.policy/1\nclasses:\n  - name: &big \"{}\"\n",
        "x".repeat(1 << 20)
    );
    for _ in 0..70 {
        text.push_str("  - name: *big\n");
    }
    let p = write(d.path(), "policy.yaml", &text);
    let r = check_with_policy(NODRIVER, &p, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("policy.yaml:"), "{}", r.stderr);
    assert!(r.stderr.contains("MiB"), "{}", r.stderr);
    assert!(r.stderr.contains("aliases"), "{}", r.stderr);
    for bad in ["ScalarBytes", "budget breached", "{", "total_scalar_bytes"] {
        assert!(!r.stderr.contains(bad), "{bad:?} in {}", r.stderr);
    }
    // The same reader for a matrix.
    let m = write(
        d.path(),
        "matrix.yaml",
        &format!(
            "schema: gpudoctor.matrix/1\ndata_version: &big \"{}\"\ntensorflow:\n  - {{ sass: [{}] }}\n",
            "x".repeat(1 << 20),
            vec!["*big"; 70].join(", ")
        ),
    );
    let r = Run::new().args(["matrix", "validate"]).arg_path(&m).run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!r.stderr.contains("ScalarBytes"), "{}", r.stderr);
    assert!(r.stderr.contains("MiB"), "{}", r.stderr);
}

#[test]
fn a_value_of_the_wrong_type_names_the_key_the_value_and_what_was_expected() {
    let d = tempfile::tempdir().unwrap();
    for (text, at, key, given) in [
        (
            "schema: gpudoctor.policy/1\nthresholds:\n  expect_gpus: eight\n",
            "policy.yaml:3:16",
            "expect_gpus",
            "\"eight\"",
        ),
        (
            "schema: gpudoctor.policy/1\nthresholds: {expect_gpus: 8, max_temperature_c: -5}\n",
            "policy.yaml:2:49",
            "max_temperature_c",
            "\"-5\"",
        ),
        (
            "schema: gpudoctor.policy/1\nwaive:\n  - rule: health.pcie\n    reason: riser\n    expires: 2099-01-31\n    gpus:\n      - 0\n      - three\n",
            "policy.yaml:8:9",
            "gpus",
            "\"three\"",
        ),
    ] {
        let p = write(d.path(), "policy.yaml", text);
        let r = check_with_policy(NODRIVER, &p, &[]);
        assert_eq!(r.code, 2, "{text}: {}", r.stderr);
        for want in [at, key, given, "a whole number from 0 to 4294967295"] {
            assert!(r.stderr.contains(want), "{text}: no {want:?} in {}", r.stderr);
        }
        assert!(!r.stderr.contains("invalid u32"), "{}", r.stderr);
    }
    // A bad date and severity name their key and the value too.
    for (text, want) in [
        (
            "schema: gpudoctor.policy/1\nwaive:\n  - rule: health.pcie\n    reason: riser\n    expires: 31/01/2099\n",
            "policy.yaml:5:14: waive: expires is \"31/01/2099\": expected a date as YYYY-MM-DD",
        ),
        (
            "schema: gpudoctor.policy/1\nseverity:\n  - rule: health.pcie\n    to: fatal\n",
            "policy.yaml:4:9: severity: to is \"fatal\": expected error, warning or info",
        ),
    ] {
        let p = write(d.path(), "policy.yaml", text);
        let r = check_with_policy(NODRIVER, &p, &[]);
        assert_eq!(r.code, 2, "{text}: {}", r.stderr);
        assert!(r.stderr.contains(want), "no {want:?} in {}", r.stderr);
    }
}

/// Every rule id in the source: the `id:` of each `RuleDoc` literal, wherever it is.
fn rule_ids_in_source() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (i, _) in text.match_indices("RuleDoc {") {
                    let rest = &text[i..];
                    let Some(at) = rest.find("id: \"") else {
                        continue;
                    };
                    // The id of this literal (not of one further down the file).
                    if rest[..at].contains('}') {
                        continue;
                    }
                    let id = rest[at + 5..].split('"').next().unwrap();
                    out.push(id.to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out.dedup();
    out
}

#[test]
fn rules_lists_every_rule_id_a_report_can_hold() {
    let ids = rule_ids_in_source();
    assert!(ids.len() > 40, "{ids:?}");
    assert!(ids.contains(&"policy.waiver-expired".to_string()));
    let r = Run::new().args(["rules", "--json"]).run();
    assert_eq!(r.code, 0);
    let listed: Vec<String> = serde_json::from_str::<serde_json::Value>(&r.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    let human = Run::new().args(["rules"]).run().stdout;
    for id in &ids {
        assert!(listed.contains(id), "{id} is not in `rules --json`");
        assert!(
            human
                .lines()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "{id} is not in `rules`"
        );
        let r = Run::new().args(["explain", "--rule", id]).run();
        assert_eq!(r.code, 0, "explain --rule {id}: {}", r.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// Summaries that contradict themselves

/// (K, N) of "... in K of N categories." on the last line, when it has that form.
fn k_of_n(out: &str) -> Option<(usize, usize)> {
    let last = out.lines().rfind(|l| !l.trim().is_empty())?;
    let (_, rest) = last.split_once(" in ")?;
    let mut w = rest.split_whitespace();
    let k = w.next()?.parse().ok()?;
    (w.next()? == "of").then_some(())?;
    let n = w.next()?.parse().ok()?;
    Some((k, n))
}

#[test]
fn the_summary_counts_the_categories_shown_that_hold_the_findings() {
    // A warning that the matrix is stale leaves its area at [?]; it is still in a category.
    let r = Run::new()
        .args(["check", "--no-probe", "--assume", "torch=9.9.0+cu130"])
        .run();
    let shown = r.stdout.lines().filter(|l| l.starts_with('[')).count();
    assert!(r.stdout.contains("1 warning in"), "{}", r.stdout);
    assert_eq!(k_of_n(&r.stdout), Some((1, shown)), "{}", r.stdout);
    // Errors and warnings in two areas.
    let r = Run::new()
        .args(["check", "--color", "never", "--snapshot"])
        .arg_path(&snapshot_fixture(NODRIVER))
        .args(["--assume", "torch=9.9.0+cu130"])
        .run();
    let shown = r.stdout.lines().filter(|l| l.starts_with('[')).count();
    let (k, n) = k_of_n(&r.stdout).unwrap_or_else(|| panic!("{}", r.stdout));
    assert_eq!(n, shown, "{}", r.stdout);
    let marked = r
        .stdout
        .lines()
        .filter(|l| l.starts_with('[') && area_has_problem(&r.stdout, l))
        .count();
    assert_eq!(k, marked, "{}", r.stdout);
    assert!(k >= 2, "{}", r.stdout);
}

/// True when the area whose line is `head` lists an error or a warning.
fn area_has_problem(out: &str, head: &str) -> bool {
    let title = head.split("] ").nth(1).unwrap().split(':').next().unwrap();
    area_block(out, title)
        .iter()
        .skip(1)
        .any(|l| l.starts_with("    ✗ ") || l.starts_with("    ! "))
}

#[test]
fn the_stress_summary_does_not_count_one_category_out_of_one() {
    let r = Run::new()
        .args(["stress", "--seconds", "0.3", "--tests", "memory"])
        .env("GPUDOCTOR_SIM_GPUS", "1")
        .env("GPUDOCTOR_SIM_MEM_MIB", "4")
        .env("GPUDOCTOR_SIM_FAULTS", "stuck-bit")
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let last = r.stdout.lines().rfind(|l| !l.is_empty()).unwrap();
    assert!(last.starts_with("1 error"), "{}", r.stdout);
    assert!(!last.contains("of 1 categories"), "{}", r.stdout);
}

#[test]
fn stress_does_not_say_only_or_skip_left_rules_out_when_neither_was_given() {
    let r = Run::new()
        .args([
            "stress",
            "--seconds",
            "0.2",
            "--tests",
            "memory",
            "--format",
            "json",
        ])
        .run();
    assert!(matches!(r.code, 0 | 1), "{}", r.stderr);
    let v = r.json();
    let areas = v["areas"].as_array().unwrap();
    for a in areas {
        let why = a["why"].as_str().unwrap_or("");
        assert!(!why.contains("--only"), "{a}");
        assert!(!why.contains("--skip"), "{a}");
    }
    // On a machine with no driver here, the areas stress leaves to check say so.
    if !crate::common::has_driver() {
        assert!(
            areas.iter().any(|a| a["why"]
                .as_str()
                .is_some_and(|w| w.contains("left out by gpudoctor stress"))),
            "{areas:?}"
        );
    }
    // `check` with --only still says it.
    let r = Run::new()
        .args([
            "check",
            "--color",
            "never",
            "--json",
            "--only",
            "driver.",
            "--snapshot",
        ])
        .arg_path(&snapshot_fixture(NODRIVER))
        .run();
    assert!(
        r.json()["areas"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["why"]
                .as_str()
                .is_some_and(|w| w.contains("left out by --only/--skip"))),
        "{}",
        r.stdout
    );
}

#[test]
fn an_explain_heading_is_the_name_not_an_id_glued_to_it() {
    let r = Run::new().args(["explain", "Killed"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = r.stdout.lines().next().unwrap();
    assert!(first.starts_with("1. Killed ("), "{first}");
    assert!(!r.stdout.contains("host-killed-line"), "{}", r.stdout);
    // The id stays in the JSON; a code still leads its name.
    let r = Run::new().args(["explain", "Killed", "--json"]).run();
    assert_eq!(r.json()["matches"][0]["code"], "host-killed-line");
    let r = Run::new().args(["explain", "0xC0000409"]).run();
    assert!(
        r.stdout
            .starts_with("1. 0xC0000409 STATUS_STACK_BUFFER_OVERRUN ("),
        "{}",
        r.stdout
    );
}

#[test]
fn the_markdown_for_bug_reports_is_redacted_like_snapshot_redact() {
    let d = tempfile::tempdir().unwrap();
    let uuid = "GPU-5c1b0e2a-1111-2222-3333-444455556666";
    let text = std::fs::read_to_string(snapshot_fixture(H100))
        .unwrap()
        .replace("GPU-REDACTED-0", uuid)
        .replace("\"redacted\": true", "\"redacted\": false")
        .replace("/opt/venv", "/home/alice/venv");
    let s = write(d.path(), "user.json", &text);
    // The same report as JSON keeps them (it is the machine's own record).
    let r = Run::new()
        .args(["check", "--json", "--snapshot"])
        .arg_path(&s)
        .env("HOME", "/home/alice")
        .run();
    assert!(r.stdout.contains(uuid) && r.stdout.contains("/home/alice/venv"));
    let r = Run::new()
        .args(["check", "--format", "markdown", "--snapshot"])
        .arg_path(&s)
        .env("HOME", "/home/alice")
        .run();
    assert!(matches!(r.code, 0 | 1), "{}", r.stderr);
    assert!(!r.stdout.contains("5c1b0e2a"), "a GPU UUID:\n{}", r.stdout);
    assert!(!r.stdout.contains("/home/alice"), "the home:\n{}", r.stdout);
    assert!(r.stdout.contains("GPU-REDACTED-0"), "{}", r.stdout);
    assert!(r.stdout.contains("~/venv"), "{}", r.stdout);
    assert!(r.stdout.contains("\"redacted\": true"), "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// Matrix data: native Windows

fn assumed(facts: &[&str]) -> Ran {
    let mut r = Run::new().args(["check", "--no-probe", "--json"]);
    for f in facts {
        r = r.args(["--assume", f]);
    }
    r.run()
}

#[test]
fn tensorflow_2_11_is_the_first_without_gpu_support_on_native_windows() {
    for v in ["2.11.0", "2.12.0", "2.16.1"] {
        let r = assumed(&["os=windows", &format!("tensorflow={v}")]);
        assert_eq!(r.code, 1, "{v}: {}", r.stdout);
        let f = finding(&r.json(), "framework.cpu-only-build")["title"].clone();
        assert_eq!(
            f,
            format!("TensorFlow {v} has no GPU support on native Windows"),
            "{v}"
        );
    }
    // 2.10 was the last with it, and Linux has it.
    assert!(assumed(&["os=windows", "tensorflow=2.10.0"])
        .rules()
        .is_empty());
    assert!(assumed(&["os=linux", "tensorflow=2.11.0"])
        .rules()
        .is_empty());
    // A CPU-only torch without a known GPU stays what the user wants.
    assert!(assumed(&["os=windows", "torch=2.3.0+cpu"])
        .rules()
        .is_empty());
}

#[test]
fn jax_with_a_cuda_plugin_on_native_windows_has_no_gpu_support() {
    for facts in [
        vec!["os=windows", "jax=0.4.30", "jax.cuda=12"],
        vec!["os=windows", "jax=0.10.0", "jax.cuda=13"],
        vec![
            "os=windows",
            "jax=0.4.30",
            "jax.cuda=12",
            "gpu=RTX 3070",
            "driver=560.94",
        ],
    ] {
        let r = assumed(&facts);
        assert_eq!(r.code, 1, "{facts:?}: {}", r.stdout);
        let v = r.json();
        let f = finding(&v, "framework.cpu-only-build");
        assert!(
            f["title"]
                .as_str()
                .unwrap()
                .ends_with("has no GPU support on native Windows"),
            "{f}"
        );
        assert!(f["detail"].as_str().unwrap().contains("WSL2"), "{f}");
        assert_eq!(r.rules(), vec!["framework.cpu-only-build"], "{facts:?}");
    }
    // Linux (and WSL2) has it.
    assert!(assumed(&["os=linux", "jax=0.4.30", "jax.cuda=12"])
        .rules()
        .is_empty());
    assert!(assumed(&["os=wsl", "jax=0.4.30", "jax.cuda=12"])
        .rules()
        .is_empty());
}
