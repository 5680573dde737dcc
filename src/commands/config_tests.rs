//! Unit tests of `config`: the command line resolved once per run.
use super::*;
use crate::cli::{Cli, Command};
use clap::Parser;

fn parse(args: &[&str]) -> Command {
    Cli::try_parse_from(std::iter::once("gpudoctor").chain(args.iter().copied()))
        .unwrap()
        .command
}

fn check(args: &[&str]) -> Result<CheckConfig, String> {
    let mut all = vec!["check", "--color", "never"];
    all.extend_from_slice(args);
    match parse(&all) {
        Command::Check(a) => CheckConfig::resolve(a),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_timeout_becomes_the_runs_one_deadline() {
    let cfg = check(&["--no-probe", "--timeout", "30"]).unwrap();
    assert_eq!(cfg.probe.timeout_secs, 30.0);
    let left = cfg.probe.deadline().remaining();
    // Started when the command line was resolved (generous bounds for a loaded machine).
    assert!(left <= Duration::from_secs(30), "{left:?}");
    assert!(left > Duration::from_secs(20), "{left:?}");
    // The probes get that very deadline, not a budget of their own.
    assert_eq!(cfg.probe.options.deadline, cfg.probe.deadline());
}

#[test]
fn a_bad_timeout_is_refused_before_anything_else() {
    // The --assume would be refused too; the timeout's error comes first, as it always has.
    let e = check(&["--timeout", "0", "--assume", "nonsense"])
        .err()
        .unwrap();
    assert!(
        e.contains("--timeout 0: expected a number of seconds more than 0"),
        "{e}"
    );
    let e = check(&["--log-window", "-1"]).err().unwrap();
    assert!(e.starts_with("--log-window -1"), "{e}");
}

#[test]
fn the_check_arguments_are_resolved_into_plain_values() {
    let cfg = check(&[
        "--no-probe",
        "--assume",
        "Driver = 550.54.14",
        "--assume",
        "cuda=12.4",
        "--gpu",
        "0,GPU-5c1b",
        "--json",
        "--fail-on",
        "warning",
        "--no-smoke",
        "--only",
        "driver",
    ])
    .unwrap();
    assert_eq!(cfg.source, Source::Assumed);
    assert_eq!(
        cfg.assume,
        vec![
            ("driver".to_string(), "550.54.14".to_string()),
            ("cuda".to_string(), "12.4".to_string())
        ]
    );
    assert_eq!(
        cfg.gpus,
        Some(vec![
            GpuSelector::Index(0),
            GpuSelector::Uuid("GPU-5c1b".into())
        ])
    );
    assert_eq!(cfg.format, Format::Json);
    assert_eq!(cfg.fail_on, Severity::Warning);
    assert!(!cfg.smoke && !cfg.color);
    assert_eq!(cfg.selection.only, vec!["driver".to_string()]);
    let cfg = check(&["--snapshot", "/nonexistent/snap.json"]).unwrap();
    assert_eq!(cfg.source, Source::File("/nonexistent/snap.json".into()));
    assert!(check(&["--assume", "nonsense=1"])
        .err()
        .unwrap()
        .contains("unknown key"));
    assert!(check(&["--gpu", "0,,1"])
        .err()
        .unwrap()
        .contains("empty item"));
}

#[test]
fn recommend_and_snapshot_resolve_the_same_probe_arguments() {
    let Command::Recommend(a) = parse(&[
        "recommend",
        "--no-probe",
        "--assume",
        "gpu=H100",
        "--framework",
        "jax",
        "--timeout",
        "7",
    ]) else {
        panic!()
    };
    let cfg = RecommendConfig::resolve(a).unwrap();
    assert!(!cfg.probing);
    assert_eq!(cfg.framework, Some("jax"));
    assert_eq!(cfg.assume, vec![("gpu".to_string(), "H100".to_string())]);
    assert_eq!(cfg.probe.timeout_secs, 7.0);
    let Command::Snapshot(a) = parse(&["snapshot", "--timeout", "3601"]) else {
        panic!()
    };
    let e = SnapshotConfig::resolve(a).err().unwrap();
    assert!(e.contains("at most 3600"), "{e}");
}

/// The files of `src/` that are not tests, with their text.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = p.to_string_lossy().replace('\\', "/");
            if p.is_dir() {
                walk(&p, out);
            } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") {
                let rel = name.split("/src/").last().unwrap_or(&name).to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut out,
    );
    assert!(out.len() > 50, "{}", out.len());
    out
}

/// The places that hold `needle`, outside this file's own tests.
fn holders(needle: &str) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(_, text)| text.contains(needle))
        .map(|(path, _)| path)
        .collect()
}

/// `--assume` is parsed, and `ProbeArgs` become probe options (and the deadline), in one place:
/// this module, called once at the start of each command. They used to be resolved twice per
/// `check`: once to validate, once to probe, each time from the clap types.
#[test]
fn the_command_line_is_resolved_in_one_place() {
    assert_eq!(holders("assume::parse("), ["commands/config.rs"]);
    assert_eq!(holders("ProbeConfig::resolve("), ["commands/config.rs"]);
    assert_eq!(
        holders("Duration::from_secs_f64(p.timeout)"),
        ["commands/config.rs"]
    );
    for (resolve, command) in [
        ("CheckConfig::resolve(", "commands/check.rs"),
        ("SnapshotConfig::resolve(", "commands/snapshot.rs"),
        ("RecommendConfig::resolve(", "commands/recommend.rs"),
    ] {
        assert_eq!(holders(resolve), [command], "{resolve}");
        let (_, text) = sources().into_iter().find(|(p, _)| p == command).unwrap();
        assert_eq!(text.matches(resolve).count(), 1, "{command}");
    }
}

/// Clap's types stop at the commands: no module below them names `crate::cli`.
#[test]
fn nothing_below_the_commands_sees_clap_types() {
    let mut above: Vec<String> = holders("cli::")
        .into_iter()
        .filter(|p| !p.starts_with("commands/"))
        .collect();
    above.sort();
    assert_eq!(above, ["app.rs", "main.rs"]);
}
