//! Table-driven compatibility tests: real combinations of driver × GPU × framework build (and
//! CUDA / cuDNN) taken from the reference tables (../shared/reference/compat-facts.md), each
//! asserting the categories found and that the fix names the right driver or build; compatible
//! combinations assert that nothing is wrong. A dozen also run end to end through the binary.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::Run;
use gpudoctor::app::evaluate;
use gpudoctor::assume;
use gpudoctor::matrix::Matrix;
use gpudoctor::report::{Report, Severity};
use gpudoctor::rules::{RuleOptions, Selection};
use gpudoctor::snapshot::Snapshot;
use std::collections::BTreeSet;

struct Case {
    name: &'static str,
    assume: &'static [&'static str],
    /// Categories of the error and warning findings, exactly.
    cats: &'static [&'static str],
    /// Text the fixes (text and commands) must contain.
    fix: &'static str,
}

const fn c(
    name: &'static str,
    assume: &'static [&'static str],
    cats: &'static [&'static str],
    fix: &'static str,
) -> Case {
    Case {
        name,
        assume,
        cats,
        fix,
    }
}

const INCOMPATIBLE: &[Case] = &[
    c(
        "R470 vs torch cu121",
        &["driver=470.82.01", "torch=2.1.0+cu121", "gpu=RTX 3070"],
        &["driver_too_old"],
        "525.60.13",
    ),
    c(
        "R470 vs torch cu124",
        &["driver=470.82.01", "torch=2.4.0+cu124", "gpu=A100"],
        &["driver_too_old"],
        "525.60.13",
    ),
    c(
        "R470 keeps cu118 as the alternative",
        &["driver=470.82.01", "torch=2.4.0+cu124", "gpu=A100"],
        &["driver_too_old"],
        "whl/cu118",
    ),
    c(
        "R450 before the CUDA 11 MVC minimum",
        &["driver=450.51.05", "torch=2.0.1+cu118", "gpu=A100"],
        &["driver_too_old"],
        "450.80.02",
    ),
    c(
        "R535 vs torch cu130",
        &["driver=535.104.05", "torch=2.9.0+cu130", "gpu=H100"],
        &["driver_too_old"],
        "580",
    ),
    c(
        "R535 vs cu130 suggests cu126",
        &["driver=535.104.05", "torch=2.9.0+cu130", "gpu=H100"],
        &["driver_too_old"],
        "whl/cu126",
    ),
    c(
        "R535 vs torch cu132",
        &["driver=535.104.05", "torch=2.12.0+cu132", "gpu=H100"],
        &["driver_too_old"],
        "580",
    ),
    c(
        "RTX 5090 needs R570",
        &["driver=525.60.13", "torch=2.7.1+cu128", "gpu=RTX 5090"],
        &["driver_too_old"],
        "570.26",
    ),
    c(
        "RTX 5090 on R550",
        &["driver=550.54.14", "torch=2.7.1+cu128", "gpu=RTX 5090"],
        &["driver_too_old"],
        "570.26",
    ),
    c(
        "H100 on R515",
        &["driver=515.43.04", "gpu=H100"],
        &["driver_too_old"],
        "520.61.05",
    ),
    c(
        "RTX 3070 on early R450",
        &["driver=450.80.02", "gpu=RTX 3070"],
        &["driver_too_old"],
        "455.23",
    ),
    c(
        "K80 on R580",
        &["driver=580.95.05", "gpu=Tesla K80"],
        &["arch_unsupported"],
        "nvidia-driver-470",
    ),
    c(
        "GTX 1080 on R590",
        &["driver=590.44.01", "gpu=GTX 1080"],
        &["arch_unsupported"],
        "nvidia-driver-580",
    ),
    c(
        "V100 on R595",
        &["driver=595.45.04", "gpu=V100"],
        &["arch_unsupported"],
        "nvidia-driver-580",
    ),
    c(
        "cu128 wheel on Pascal",
        &["driver=580.95.05", "gpu=GTX 1080", "torch=2.7.1+cu128"],
        &["arch_unsupported"],
        "whl/cu126",
    ),
    c(
        "2.11 cu128 dropped Volta",
        &["driver=580.95.05", "gpu=V100", "torch=2.11.0+cu128"],
        &["arch_unsupported"],
        "whl/cu126",
    ),
    c(
        "cu130 wheel on Volta",
        &["driver=580.95.05", "gpu=V100", "torch=2.9.0+cu130"],
        &["arch_unsupported"],
        "whl/cu126",
    ),
    c(
        "cu124 wheel on Blackwell RTX",
        &["driver=580.95.05", "gpu=RTX 5090", "torch=2.5.1+cu124"],
        &["arch_unsupported"],
        "whl/cu132",
    ),
    c(
        "cu126 2.6 wheel on Blackwell RTX",
        &["driver=580.95.05", "gpu=RTX 5090", "torch=2.6.0+cu126"],
        &["arch_unsupported"],
        "whl/cu132",
    ),
    c(
        "cu124 wheel on B200",
        &["driver=580.95.05", "gpu=B200", "torch=2.6.0+cu124"],
        &["arch_unsupported"],
        "whl/cu13",
    ),
    c(
        "K80 with cu121 on R470",
        &["driver=470.82.01", "gpu=Tesla K80", "torch=2.1.0+cu121"],
        &["arch_unsupported", "driver_too_old"],
        "whl/cu118",
    ),
    c(
        "JAX CUDA 13 on Pascal",
        &[
            "driver=580.95.05",
            "gpu=GTX 1080",
            "jax=0.10.0",
            "jax.cuda=13",
        ],
        &["arch_unsupported"],
        "jax[cuda12]",
    ),
    c(
        "JAX CUDA 13 on R535",
        &["driver=535.104.05", "gpu=H100", "jax=0.10.0", "jax.cuda=13"],
        &["driver_too_old"],
        "580",
    ),
    c(
        "JAX CUDA 12 on R470",
        &["driver=470.82.01", "gpu=A100", "jax=0.6.0", "jax.cuda=12"],
        &["driver_too_old"],
        "525",
    ),
    c(
        "cu126 2.7 wheel on RTX 5090 with R535",
        &["driver=535.104.05", "gpu=RTX 5090", "torch=2.7.1+cu126"],
        &["arch_unsupported", "driver_too_old"],
        "whl/cu128",
    ),
    c(
        "found version 11040",
        &["driver.cuda=11040", "torch=2.1.0+cu121", "gpu=RTX 3070"],
        &["driver_too_old"],
        "525.60.13",
    ),
    c(
        "Windows R551 vs cu130",
        &[
            "os=windows",
            "driver=551.61",
            "torch=2.9.0+cu130",
            "gpu=RTX 4090",
        ],
        &["driver_too_old"],
        "whl/cu126",
    ),
    c(
        "TF 2.16 on native Windows",
        &["os=windows", "tensorflow=2.16.1", "gpu=RTX 3070"],
        &["cpu_only_build"],
        "WSL2",
    ),
    c(
        "CPU torch on a GPU",
        &["torch=2.3.0+cpu", "gpu=RTX 3070"],
        &["cpu_only_build"],
        "download.pytorch.org/whl/cu",
    ),
    c(
        "CUDA 12.4 on R470",
        &["cuda=12.4", "driver=470.82.01"],
        &["driver_too_old"],
        "525.60.13",
    ),
    c(
        "CUDA 10.2 on R418",
        &["cuda=10.2", "driver=418.39"],
        &["driver_too_old"],
        "440.33",
    ),
    c(
        "CUDA 13 cannot build for Pascal",
        &["cuda=13.0", "driver=580.95.05", "gpu=GTX 1080"],
        &["arch_unsupported"],
        "12.x",
    ),
    c(
        "CUDA 13 cannot build for Volta",
        &["cuda=13.0", "driver=580.95.05", "gpu=V100"],
        &["arch_unsupported"],
        "12.x",
    ),
    c(
        "torch newer than the matrix",
        &["driver=580.95.05", "gpu=H100", "torch=2.20.0+cu126"],
        &["matrix_stale"],
        "matrix update",
    ),
    c(
        "tensorflow newer than the matrix",
        &["driver=580.95.05", "tensorflow=2.30.0"],
        &["matrix_stale"],
        "matrix update",
    ),
    c(
        "jax newer than the matrix",
        &["driver=580.95.05", "jax=0.13.0", "jax.cuda=13"],
        &["matrix_stale"],
        "matrix update",
    ),
    c(
        "driver newer than the matrix",
        &["driver=700.10"],
        &["matrix_stale"],
        "matrix update",
    ),
    c(
        "R418 vs torch 1.13 cu117",
        &["driver=418.39", "gpu=T4", "torch=1.13.1+cu117"],
        &["driver_too_old"],
        "450.80.02",
    ),
    c(
        "R520 vs torch cu121",
        &["driver=520.61.05", "gpu=L4", "torch=2.1.0+cu121"],
        &["driver_too_old"],
        "525.60.13",
    ),
    c(
        "RTX 5090 on R545",
        &["driver=545.23.06", "gpu=RTX 5090", "torch=2.7.1+cu128"],
        &["driver_too_old"],
        "570.26",
    ),
    c(
        "GB10 on R560",
        &["driver=560.35.03", "gpu=GB10", "torch=2.8.0+cu129"],
        &["driver_too_old"],
        "575.51.03",
    ),
    c(
        "TF 2.16 with cuDNN 9",
        &["tensorflow=2.16.1", "cudnn=9.1.0"],
        &["cudnn_mismatch"],
        "tensorflow[and-cuda]==2.16.1",
    ),
    c(
        "TF 2.16 with an older cuDNN 8",
        &["tensorflow=2.16.1", "cudnn=8.6.0"],
        &["cudnn_mismatch"],
        "tensorflow[and-cuda]==2.16.1",
    ),
    c(
        "JAX 0.6 with cuDNN 9.1",
        &["jax=0.6.0", "jax.cuda=12", "cudnn=9.1.0"],
        &["cudnn_mismatch"],
        "jax[cuda12]==0.6.0",
    ),
    c(
        "torch cu126 with cuDNN 8",
        &["torch=2.7.1+cu126", "cudnn=8.9.7"],
        &["cudnn_mismatch"],
        "whl/cu126",
    ),
    c(
        "cuDNN 9.17 has no CUDA 11 build",
        &["cudnn=9.17.0", "cuda=11.8"],
        &["cudnn_mismatch"],
        "cuDNN built for this CUDA",
    ),
    c(
        "GB10 on R535 needs its first toolkit's driver",
        &["driver=535.104.05", "gpu=GB10", "torch=2.7.1+cu128"],
        &["driver_too_old"],
        "575.51.03",
    ),
];

const COMPATIBLE: &[Case] = &[
    c(
        "R535 + cu121 + RTX 3070",
        &["driver=535.104.05", "torch=2.1.0+cu121", "gpu=RTX 3070"],
        &[],
        "",
    ),
    c(
        "R580 + cu128 + RTX 5090",
        &["driver=580.95.05", "torch=2.7.1+cu128", "gpu=RTX 5090"],
        &[],
        "",
    ),
    c(
        "R580 + cu130 + H100",
        &["driver=580.95.05", "torch=2.9.0+cu130", "gpu=H100"],
        &[],
        "",
    ),
    c(
        "R550 + cu124 + L4 (sm_86 cubin on 8.9)",
        &["driver=550.54.14", "torch=2.4.1+cu124", "gpu=L4"],
        &[],
        "",
    ),
    c(
        "R470 + cu118 + K80",
        &["driver=470.82.01", "torch=2.0.1+cu118", "gpu=Tesla K80"],
        &[],
        "",
    ),
    c(
        "R460 + cu118 + A100 (MVC)",
        &["driver=460.27.03", "torch=2.0.1+cu118", "gpu=A100"],
        &[],
        "",
    ),
    c(
        "R525 + cu121 + A100",
        &["driver=525.60.13", "torch=2.1.0+cu121", "gpu=A100"],
        &[],
        "",
    ),
    c(
        "R595 + cu132 + B200",
        &["driver=595.45.04", "torch=2.14.0+cu132", "gpu=B200"],
        &[],
        "",
    ),
    c(
        "R580 + JAX CUDA 13 + H100",
        &["driver=580.95.05", "jax=0.10.0", "jax.cuda=13", "gpu=H100"],
        &[],
        "",
    ),
    c(
        "R535 + JAX CUDA 12 + A100",
        &["driver=535.104.05", "jax=0.10.0", "jax.cuda=12", "gpu=A100"],
        &[],
        "",
    ),
    c(
        "R535 + TF 2.16 + A10",
        &["driver=535.104.05", "tensorflow=2.16.1", "gpu=A10"],
        &[],
        "",
    ),
    c(
        "driver CUDA 12.2 + cu128 + H100 (MVC)",
        &["driver.cuda=12.2", "torch=2.7.1+cu128", "gpu=H100"],
        &[],
        "",
    ),
    c(
        "R580 + cu129 + GB10 (sm_120 cubin on 12.1)",
        &["driver=580.95.05", "torch=2.8.0+cu129", "gpu=GB10"],
        &[],
        "",
    ),
    c(
        "R570 + cu128 + RTX 5070",
        &["driver=570.124.06", "torch=2.7.1+cu128", "gpu=RTX 5070"],
        &[],
        "",
    ),
    c(
        "R535 + 2.14 cu126 + GTX 1080",
        &["driver=535.104.05", "torch=2.14.0+cu126", "gpu=GTX 1080"],
        &[],
        "",
    ),
    c(
        "R470 + 1.13 cu117 + T4",
        &[
            "driver=470.82.01",
            "torch=1.13.1+cu117.with.pypi.cudnn",
            "gpu=T4",
        ],
        &[],
        "",
    ),
    c(
        "Windows R551 + cu124 + RTX 3070",
        &[
            "os=windows",
            "driver=551.61",
            "torch=2.5.1+cu124",
            "gpu=RTX 3070",
        ],
        &[],
        "",
    ),
    c(
        "Windows TF 2.10 + RTX 3070",
        &[
            "os=windows",
            "driver=516.01",
            "tensorflow=2.10.0",
            "gpu=RTX 3070",
        ],
        &[],
        "",
    ),
    c(
        "cuDNN 8.9.7 with CUDA 12.2",
        &["cudnn=8.9.7", "cuda=12.2", "driver=535.104.05"],
        &[],
        "",
    ),
    c(
        "cuDNN 9.10.2 with CUDA 12.8",
        &["cudnn=9.10.2", "cuda=12.8", "driver=570.26"],
        &[],
        "",
    ),
    c(
        "CUDA 13 on R580 with an H100",
        &["cuda=13.0", "driver=580.95.05", "gpu=H100"],
        &[],
        "",
    ),
    c(
        "torch cu126 with its cuDNN 9.5",
        &["torch=2.7.1+cu126", "cudnn=9.5.1"],
        &[],
        "",
    ),
];

/// The distribution the cases' fixes are written for.
const UBUNTU: &[&str] = &["os.id=ubuntu", "os.version=24.04"];

fn evaluate_case(case: &Case) -> Report {
    let m = Matrix::embedded().unwrap();
    let mut s = Snapshot::empty();
    // Fixes are written for the machine's distribution (issue 31): these cases are on Ubuntu.
    for a in UBUNTU.iter().chain(case.assume) {
        let (k, v) = assume::parse(a).unwrap();
        assume::apply(&mut s, &m, &k, &v).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
    evaluate(s, &m, &RuleOptions::default(), &Selection::default())
}

fn categories(r: &Report) -> BTreeSet<String> {
    r.findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| f.category.as_str().to_string())
        .collect()
}

fn fixes(r: &Report) -> String {
    r.findings
        .iter()
        .map(|f| format!("{} {}", f.fix.text, f.fix.commands.join(" ")))
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn incompatible_combinations_are_diagnosed_with_the_right_fix() {
    assert!(INCOMPATIBLE.len() >= 40);
    let mut failures = Vec::new();
    for case in INCOMPATIBLE {
        let r = evaluate_case(case);
        let got = categories(&r);
        let want: BTreeSet<String> = case.cats.iter().map(|s| s.to_string()).collect();
        if got != want {
            failures.push(format!(
                "{}: categories {got:?}, expected {want:?}",
                case.name
            ));
        } else if !fixes(&r).contains(case.fix) {
            failures.push(format!(
                "{}: no fix mentions {:?}: {}",
                case.name,
                case.fix,
                fixes(&r)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn compatible_combinations_have_no_finding() {
    assert!(COMPATIBLE.len() >= 20);
    let mut failures = Vec::new();
    for case in COMPATIBLE {
        let r = evaluate_case(case);
        if !categories(&r).is_empty() {
            failures.push(format!(
                "{}: {:?}",
                case.name,
                r.findings
                    .iter()
                    .map(|f| format!("{}: {}", f.rule, f.title))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_dozen_end_to_end_through_check_no_probe() {
    for case in INCOMPATIBLE
        .iter()
        .step_by(4)
        .take(10)
        .chain(COMPATIBLE.iter().take(2))
    {
        let mut run = Run::new().args(["check", "--no-probe", "--format", "json"]);
        for a in UBUNTU.iter().chain(case.assume) {
            run = run.args(["--assume", a]);
        }
        let r = run.run();
        let v = r.json();
        let got: BTreeSet<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] != "info")
            .map(|f| f["category"].as_str().unwrap().to_string())
            .collect();
        let want: BTreeSet<String> = case.cats.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "{}", case.name);
        let errors = v["summary"]["errors"].as_u64().unwrap();
        assert_eq!(r.code, if errors > 0 { 1 } else { 0 }, "{}", case.name);
        assert!(r.stdout.contains(case.fix), "{}: {}", case.name, case.fix);
    }
}

/// One real combination of tests/fixtures/combinations.yaml.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Combination {
    name: String,
    assume: Vec<String>,
    expect: Vec<String>,
    fix: String,
    source: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Combinations {
    schema: String,
    combinations: Vec<Combination>,
}

fn combinations() -> Vec<Combination> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/combinations.yaml"),
    )
    .unwrap();
    let c: Combinations = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(c.schema, "gpudoctor.combinations/1");
    c.combinations
}

#[test]
fn real_combinations_with_their_sources_are_judged_as_reported() {
    let all = combinations();
    assert!(all.len() >= 40, "{}", all.len());
    let mut failures = Vec::new();
    for c in &all {
        assert!(c.source.starts_with("https://"), "{}: {}", c.name, c.source);
        let m = Matrix::embedded().unwrap();
        let mut s = Snapshot::empty();
        for a in UBUNTU
            .iter()
            .map(|a| a.to_string())
            .chain(c.assume.iter().cloned())
        {
            let (k, v) = assume::parse(&a).unwrap();
            assume::apply(&mut s, &m, &k, &v).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
        let r = evaluate(s, &m, &RuleOptions::default(), &Selection::default());
        let got = categories(&r);
        let want: BTreeSet<String> = c.expect.iter().cloned().collect();
        if got != want {
            failures.push(format!(
                "{}: categories {got:?}, expected {want:?}: {:?}",
                c.name,
                r.findings
                    .iter()
                    .map(|f| format!("{}: {}", f.rule, f.title))
                    .collect::<Vec<_>>()
            ));
        } else if !fixes(&r).contains(&c.fix) {
            failures.push(format!(
                "{}: no fix mentions {:?}: {}",
                c.name,
                c.fix,
                fixes(&r)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn both_kinds_of_outcome_are_in_the_real_combinations() {
    let all = combinations();
    let ok = all.iter().filter(|c| c.expect.is_empty()).count();
    assert!(ok >= 10 && all.len() - ok >= 20, "{ok} of {}", all.len());
}

use common::agree;

/// Issue 16: `recommend` never names a build that `check` rejects on the same facts, and names
/// one whenever `check` would pass one (tests/it/common/agree.rs says exactly what is compared).
#[test]
fn recommend_agrees_with_check_on_every_case() {
    let mut tally = agree::Tally::default();
    let mut failures = Vec::new();
    for case in INCOMPATIBLE.iter().chain(COMPATIBLE) {
        failures.extend(agree::disagreements(case.name, case.assume, &mut tally));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every kind of judgement was made, so the comparison is not vacuous.
    assert!(tally.recommended > 100, "{tally:?}");
    assert!(tally.rejected_all > 0, "{tally:?}");
    assert!(tally.driver_needed > 0, "{tally:?}");
}
