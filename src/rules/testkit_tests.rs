//! The rules' case tables: a base snapshot from the recorded fixtures
//! (`tests/fixtures/snapshots/`, tests/fixtures/README.md says which is which), one-field
//! variations of it (a JSON pointer and a value, or `--assume` strings), ONE rule's `check` on
//! it, and each finding rendered as the user would read it, for insta.
//!
//! Each `src/rules/<rule>_tests.rs` holds a [`Table`] of [`Case`]s and one `#[test]` that runs
//! it with [`run_table`]; [`TABLES`] lists every table so that `every_rule_has_a_table` fails
//! when a rule id of [`super::all`] has none, or a table lacks a firing or a quiet case.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;

use super::{Context, Rule, RuleOptions};
use crate::matrix::Matrix;
use crate::report::{Category, Finding, Severity};
use crate::snapshot::Snapshot;

/// The snapshot a case starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `debian12-docker-nodriver.json`: recorded, Debian 12 in Docker, no GPU, no driver.
    NoDriver,
    /// `h100-580.159.04-real.json`: recorded on a real H100 (driver 580.159.04, open module).
    H100,
    /// `synthetic-2xh100.json`: written by hand, 2 × H100 on 580.95.05, GPU 1 mostly held.
    Synthetic,
    /// The recorded H100's `check --format json` with its smoke tests, all passed
    /// (docs/validation/h100-2026-11-23-run3/check.json).
    H100Smoke,
    /// The same kind of machine, run 1: the smoke `d2d` step failed with a wrong result (a
    /// gpudoctor bug of the time, fixed in run 2; real data all the same)
    /// (docs/validation/h100-2026-11-23-run1/check.json).
    H100SmokeD2d,
    /// The recorded H100's `stress --minutes 3`, passed (docs/validation/h100-2026-11-23-run3/stress.json).
    H100Stress,
    /// The recorded H100's `stress --seconds 20` with an Xid 31 from another process at 8 s
    /// (the report line of docs/validation/h100-2026-11-23-run5/stress-xid.jsonl).
    H100StressXid,
    /// `Snapshot::empty()`: nothing probed (`--no-probe`), for `--assume`-only cases.
    Empty,
}

impl Base {
    /// The file, from the repository's root.
    fn file(self) -> Option<&'static str> {
        match self {
            Base::NoDriver => Some("tests/fixtures/snapshots/debian12-docker-nodriver.json"),
            Base::H100 => Some("tests/fixtures/snapshots/h100-580.159.04-real.json"),
            Base::Synthetic => Some("tests/fixtures/snapshots/synthetic-2xh100.json"),
            Base::H100Smoke => Some("docs/validation/h100-2026-11-23-run3/check.json"),
            Base::H100SmokeD2d => Some("docs/validation/h100-2026-11-23-run1/check.json"),
            Base::H100Stress => Some("docs/validation/h100-2026-11-23-run3/stress.json"),
            Base::H100StressXid => Some("docs/validation/h100-2026-11-23-run5/stress-xid.jsonl"),
            Base::Empty => None,
        }
    }
}

/// What a case expects of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// At least one finding of this severity and category, and none more severe (a case
    /// whose findings differ shows them all in its snapshot).
    Fires(Severity, Category),
    /// No finding.
    Quiet,
}
pub use Expect::{Fires, Quiet};

/// `RuleOptions` in a form a `const` can hold.
#[derive(Debug, Clone, Copy)]
pub struct Opts {
    pub expect_gpus: Option<u32>,
    pub min_driver: Option<&'static str>,
    pub max_temperature_c: Option<u32>,
    pub max_ecc_uncorrected: Option<u64>,
}

pub const NO_OPTS: Opts = Opts {
    expect_gpus: None,
    min_driver: None,
    max_temperature_c: None,
    max_ecc_uncorrected: None,
};

/// One situation: a base, its variations, what the rule should make of it.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Names the snapshot file too: lower case, `-` between words.
    pub name: &'static str,
    pub base: Base,
    /// `(JSON pointer, JSON value)`, applied in order; a missing last key is added to its
    /// parent object (as tests/it/rules.rs `set` does); `""` as the value removes the key.
    pub set: &'static [(&'static str, &'static str)],
    /// `--assume KEY=VALUE` strings, applied after `set` through `crate::assume`.
    pub assume: &'static [&'static str],
    /// Kernel log lines (dmesg form): when any, the snapshot's kernel log is what the probe's
    /// own collector (`probe::kernel_log::Collector`) makes of them, as `dmesg` over 24 h.
    pub log: &'static [&'static str],
    /// Windows System event log records: files of tests/fixtures/windows/eventlog, read by the
    /// probe's own parser (`probe::windows::eventlog`) into the kernel log.
    pub eventlog: &'static [&'static str],
    pub opts: Opts,
    /// A `--policy` file's text: when set, every rule runs, the policy's severities and
    /// waivers apply (on [`TODAY`]), and this rule's findings are kept, as `check --policy`
    /// does (`commands::judge`): expired waivers are findings of `policy.waiver-expired`.
    pub policy: Option<&'static str>,
    pub expect: Expect,
}

/// A case with no variation; fill in with `Case { name, expect, ..CASE }`.
pub const CASE: Case = Case {
    name: "",
    base: Base::Synthetic,
    set: &[],
    assume: &[],
    log: &[],
    eventlog: &[],
    opts: NO_OPTS,
    policy: None,
    expect: Quiet,
};

/// The day policy cases are judged on (waivers expire against it, not the clock).
pub const TODAY: &str = "2026-11-25";

/// One rule and its cases.
pub struct Table {
    pub rule: Rule,
    pub cases: &'static [Case],
}

/// A recorded snapshot: a snapshot file, a report's (`check`/`stress --format json`), or the
/// report event of a JSON Lines stream's last line.
fn fixture(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let text = if name.ends_with(".jsonl") {
        text.lines().last().unwrap_or_default().to_string()
    } else {
        text
    };
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v = v.get("report").cloned().unwrap_or(v);
    match v.get("snapshot") {
        Some(s) => s.clone(),
        None => v,
    }
}

/// Sets (or adds, or with `""` removes) the value at a JSON pointer.
pub fn set(v: &mut Value, pointer: &str, json: &str) {
    let (parent, key) = pointer
        .rsplit_once('/')
        .unwrap_or_else(|| panic!("not a JSON pointer: {pointer}"));
    if json.is_empty() {
        let obj = v
            .pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("no object at {parent}"));
        assert!(obj.remove(key).is_some(), "nothing to remove at {pointer}");
        return;
    }
    let new: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{pointer}: bad JSON {json}: {e}"));
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = new;
        return;
    }
    if let Some(arr) = v.pointer_mut(parent).and_then(Value::as_array_mut) {
        if key == "-" {
            arr.push(new);
            return;
        }
    }
    let obj = v
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent} (setting {pointer})"));
    obj.insert(key.to_string(), new);
}

pub fn matrix() -> Matrix {
    match Matrix::embedded() {
        Ok(m) => m,
        Err(e) => panic!("the embedded matrix: {e:?}"),
    }
}

/// The case's snapshot: base, variations, assumptions.
pub fn snapshot(case: &Case, matrix: &Matrix) -> Snapshot {
    let mut snap = match case.base.file() {
        Some(f) => {
            let mut v = fixture(f);
            for (p, j) in case.set {
                set(&mut v, p, j);
            }
            serde_json::from_value(v).unwrap_or_else(|e| panic!("{}: {e}", case.name))
        }
        None => {
            assert!(case.set.is_empty(), "{}: set on an empty base", case.name);
            Snapshot::empty()
        }
    };
    if !case.log.is_empty() {
        let mut c = crate::probe::kernel_log::Collector::default();
        for line in case.log {
            c.feed(line);
        }
        snap.kernel_log = crate::snapshot::Probed::found(c.finish("dmesg", 24.0, Vec::new()));
    }
    if !case.eventlog.is_empty() {
        use crate::probe::windows::eventlog;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/windows/eventlog");
        let mut xml = String::new();
        for f in case.eventlog {
            let p = dir.join(f);
            xml.push_str(
                &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            );
        }
        let log = eventlog::collect(&eventlog::parse_records(&xml), None, 24.0);
        snap.kernel_log = crate::snapshot::Probed::found(log);
    }
    for raw in case.assume {
        let (k, v) = crate::assume::parse(raw).unwrap_or_else(|e| panic!("{raw}: {}", e.0));
        crate::assume::apply(&mut snap, matrix, &k, &v)
            .unwrap_or_else(|e| panic!("{raw}: {}", e.0));
    }
    snap
}

/// ONE rule's `check` on the case, as `rules::evaluate` runs it (on a Windows snapshot, the
/// Windows forms of its fixes, and nothing from a rule that does not apply there).
pub fn run(rule: &Rule, case: &Case) -> Vec<Finding> {
    let matrix = matrix();
    let snap = snapshot(case, &matrix);
    let opts = RuleOptions {
        expect_gpus: case.opts.expect_gpus,
        min_driver: case.opts.min_driver.map(str::to_string),
        max_temperature_c: case.opts.max_temperature_c,
        max_ecc_uncorrected: case.opts.max_ecc_uncorrected,
    };
    let ctx = Context {
        snap: &snap,
        matrix: &matrix,
        opts: &opts,
    };
    if let Some(text) = case.policy {
        let policy = crate::policy::Policy::parse("policy.yaml", text)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let mut all = super::evaluate(&ctx, &super::Selection::default());
        let today = crate::policy::days(TODAY).unwrap_or_else(|| panic!("{TODAY}"));
        policy.apply(&mut all, today);
        all.retain(|f| f.rule == rule.doc.id);
        return all;
    }
    if !super::windows_fixes::applies(&snap, rule.doc.id) {
        return Vec::new();
    }
    let windows = super::windows_fixes::on_windows(&snap);
    (rule.check)(&ctx, &rule.doc)
        .into_iter()
        .map(|f| {
            if windows {
                super::windows_fixes::for_windows(f)
            } else {
                f
            }
        })
        .collect()
}

/// A finding as the human report shows it (title, detail, fix, commands, links, rule and
/// category), with its severity and GPU spelled out and its JSON evidence below.
pub fn render(f: &Finding) -> String {
    let clean = |s: &str| crate::sanitize::clean_line(s, 2000);
    let mut out = format!("{} {}\n", f.severity.as_str(), clean(&f.title));
    if let Some(g) = f.gpu {
        out.push_str(&format!("  gpu: {g}\n"));
    }
    if let Some(w) = &f.waived {
        out.push_str(&format!(
            "  Waived until {} by {}: {}\n",
            clean(&w.expires),
            clean(&w.policy),
            clean(&w.reason)
        ));
    }
    if !f.detail.is_empty() {
        out.push_str(&format!("  {}\n", clean(&f.detail)));
    }
    if !f.fix.text.is_empty() {
        out.push_str(&format!("  Fix: {}\n", clean(&f.fix.text)));
    }
    for c in &f.fix.commands {
        out.push_str(&format!("    $ {}\n", clean(c)));
    }
    if !f.fix.commands.is_empty() {
        out.push_str(&format!(
            "    ({}{})\n",
            f.fix.shell,
            if f.fix.needs_root { ", as root" } else { "" }
        ));
    }
    for l in &f.links {
        out.push_str(&format!("  See: {}\n", clean(l)));
    }
    out.push_str(&format!("  rule {} · {}\n", f.rule, f.category.as_str()));
    let evidence = serde_json::to_string_pretty(&f.evidence).unwrap_or_default();
    out.push_str(&format!("  evidence: {evidence}\n"));
    out
}

/// Runs every case of a table, asserts what it expects, and snapshots each firing case's
/// findings (`src/rules/snapshots/<rule id>@<case>.snap`).
pub fn run_table(table: &Table) {
    let id = table.rule.doc.id;
    let mut failures = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for case in table.cases {
        assert!(
            names.insert(case.name),
            "{id}: two cases named {}",
            case.name
        );
        let findings = run(&table.rule, case);
        let wrong = match case.expect {
            Quiet if !findings.is_empty() => Some(format!(
                "expected quiet, got:\n{}",
                findings.iter().map(render).collect::<String>()
            )),
            Fires(..) if findings.is_empty() => Some("expected a finding, got none".to_string()),
            Fires(sev, cat)
                if findings.iter().any(|f| f.rule != id || f.severity > sev)
                    || !findings
                        .iter()
                        .any(|f| f.severity == sev && f.category == cat) =>
            {
                Some(format!(
                    "expected {} {} (and nothing more severe), got:\n{}",
                    sev.as_str(),
                    cat.as_str(),
                    findings.iter().map(render).collect::<String>()
                ))
            }
            Fires(..) => None,
            Quiet => None,
        };
        if let Some(w) = wrong {
            failures.push(format!("{id} / {}: {w}", case.name));
            continue;
        }
        if let Fires(..) = case.expect {
            let text = findings.iter().map(render).collect::<Vec<_>>().join("\n");
            let mut settings = insta::Settings::clone_current();
            settings.set_prepend_module_to_snapshot(false);
            settings.set_snapshot_path("snapshots");
            settings.set_omit_expression(true);
            settings.set_description(format!("{id}: {}", case.name));
            settings.bind(|| {
                insta::assert_snapshot!(format!("{id}@{}", case.name), text);
            });
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every rule's table (each `<rule>_tests.rs` has one, `TABLE`).
fn tables() -> Vec<&'static Table> {
    vec![
        &super::compat_arch::tests::TABLE,
        &super::compat_cudnn::tests::TABLE,
        &super::compat_driver::tests::TABLE,
        &super::compat_forward::tests::TABLE,
        &super::compat_runtime::tests::TABLE,
        &super::container_no_gpu::tests::TABLE,
        &super::cpu_only_build::tests::TABLE,
        &super::cuda_visible_devices::tests::TABLE,
        &super::debug_injection::tests::TABLE,
        &super::device_permissions::tests::TABLE,
        &super::driver_library_mismatch::tests::TABLE,
        &super::driver_missing::tests::TABLE,
        &super::driver_module_flavor::tests::TABLE,
        &super::expected_gpus::tests::TABLE,
        &super::fabric_manager::tests::TABLE,
        &super::faults_kernel_log::tests::TABLE,
        &super::faults_xid::tests::TABLE,
        &super::gpu_memory_held::tests::TABLE,
        &super::health_config::tests::TABLE,
        &super::health_lost::tests::TABLE,
        &super::health_memory::tests::TABLE,
        &super::health_nvlink::tests::TABLE,
        &super::health_pcie::tests::TABLE,
        &super::health_throttle::tests::TABLE,
        &super::host_tegra::tests::TABLE,
        &super::kernel_log_unreadable::tests::TABLE,
        &super::library_path_conflict::tests::TABLE,
        &super::matrix_stale::tests::TABLE,
        &super::nvml_failed::tests::TABLE,
        &super::policy_thresholds::tests::TABLE,
        &super::policy_waiver_expired::tests::TABLE,
        &super::probe_crashed::tests::TABLE,
        &super::probe_timeout::tests::TABLE,
        &super::smoke_failed::tests::TABLE,
        &super::smoke_pcie::tests::TABLE,
        &super::stress_compute::tests::TABLE,
        &super::stress_memory::tests::TABLE,
        &super::stress_run::tests::TABLE,
        &super::stress_watch::tests::TABLE,
        &super::stub_libcuda::tests::TABLE,
        &super::unloadable_library::tests::TABLE,
        &super::windows_adapter::tests::TABLE,
        &super::windows_tdr::tests::TABLE,
    ]
}

#[test]
fn every_rule_has_a_table_with_a_firing_and_a_quiet_case() {
    let tables = tables();
    let mut missing = Vec::new();
    for rule in super::all() {
        let id = rule.doc.id;
        let mine: Vec<&&Table> = tables.iter().filter(|t| t.rule.doc.id == id).collect();
        let cases = || mine.iter().flat_map(|t| t.cases.iter());
        if mine.is_empty() {
            missing.push(format!("{id}: no table"));
            continue;
        }
        if !cases().any(|c| matches!(c.expect, Fires(..))) {
            missing.push(format!("{id}: no case where it fires"));
        }
        if !cases().any(|c| c.expect == Quiet) {
            missing.push(format!("{id}: no case where it stays quiet"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
