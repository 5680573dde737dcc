//! Every renderer's output pinned by snapshot tests (insta), on the fixture snapshots and a
//! variation with findings in several areas. Review changes with `cargo insta review`.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::snapshot_fixture;
use gpudoctor::app::{evaluate, read_snapshot};
use gpudoctor::matrix::Matrix;
use gpudoctor::render::{human, json, markdown};
use gpudoctor::report::Report;
use gpudoctor::rules::{RuleOptions, Selection};
use gpudoctor::snapshot::Probed;

fn report(
    name: &str,
    tweak: impl FnOnce(&mut gpudoctor::snapshot::Snapshot),
    expect: Option<u32>,
) -> Report {
    let mut snap = read_snapshot(&snapshot_fixture(name)).unwrap();
    tweak(&mut snap);
    let m = Matrix::embedded().unwrap();
    evaluate(
        snap,
        &m,
        &RuleOptions {
            expect_gpus: expect,
            ..RuleOptions::default()
        },
        &Selection::default(),
    )
}

fn plain() -> human::HumanOptions {
    human::HumanOptions::default()
}

#[test]
fn human_no_driver() {
    let r = report("debian12-docker-nodriver.json", |_| {}, None);
    insta::assert_snapshot!(human::render(&r, &plain()));
}

#[test]
fn human_healthy_gpu_host_verbose() {
    let r = report("synthetic-2xh100.json", |_| {}, None);
    insta::assert_snapshot!(human::render(
        &r,
        &human::HumanOptions {
            all_facts: true,
            ..plain()
        }
    ));
}

fn troubled(s: &mut gpudoctor::snapshot::Snapshot) {
    s.env.insert("CUDA_VISIBLE_DEVICES".into(), "0,4".into());
    if let Some(envs) = s.python.get_mut() {
        envs[0].torch = Some(gpudoctor::snapshot::TorchBuild {
            version: "2.7.1+cpu".into(),
            ..Default::default()
        });
    }
    if let Some(n) = s.driver.nvml.get_mut() {
        n.driver_version = Some("580.82.07".into());
    }
    s.driver.nouveau_loaded = Probed::found(false);
}

#[test]
fn human_troubled_gpu_host_with_colour() {
    let r = report("synthetic-2xh100.json", troubled, Some(4));
    insta::assert_snapshot!(human::render(
        &r,
        &human::HumanOptions {
            color: true,
            ..plain()
        }
    ));
}

#[test]
fn markdown_troubled_gpu_host() {
    let r = report("synthetic-2xh100.json", troubled, Some(4));
    insta::assert_snapshot!(markdown::render(&r, &None));
}

#[test]
fn json_no_driver_report() {
    let r = report("debian12-docker-nodriver.json", |_| {}, None);
    let text = json::render(&r).unwrap();
    // The JSON contract of design.md: these keys, in this order.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        // "areas" was added by issue 17 (the marks, decided once in the report).
        ["schema", "tool", "matrix", "verdict", "summary", "findings", "areas", "snapshot"]
    );
    for f in v["findings"].as_array().unwrap() {
        let fk: Vec<&String> = f.as_object().unwrap().keys().collect();
        assert_eq!(
            fk,
            ["rule", "severity", "category", "title", "detail", "fix", "evidence", "links"]
        );
    }
    let mut v = v;
    v["tool"]["version"] = "[version]".into();
    insta::assert_json_snapshot!(v["findings"]);
}

#[test]
fn outside_text_cannot_inject_terminal_escapes() {
    let r = report(
        "synthetic-2xh100.json",
        |s| {
            if let Some(g) = s.gpus.get_mut() {
                g[1].processes = Probed::found(vec![gpudoctor::snapshot::GpuProcess {
                    pid: 7,
                    name: Some("evil\x1b]0;pwned\x07\u{202e}txt".into()),
                    used_bytes: Some(70_000_000_000),
                }]);
            }
        },
        None,
    );
    let out = human::render(&r, &plain());
    assert!(
        !out.contains('\x1b') && !out.contains('\x07') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(out.contains("evil]0;pwnedtxt"));
}
