//! `recommend` against `check` on the same facts (issue 16, item 4). For a combination of
//! `--assume` facts F:
//! - a build `recommend` names (its `assume` list K) adds no error to `check` on F: the errors of
//!   check(F + K) are among those of check(F);
//! - when it names none for a framework and nothing blocks the GPU, every build of that
//!   framework in the matrix adds an error: `check` would reject each one;
//! - when nothing can run until the driver changes, `check` on F has an error on a GPU, and with
//!   the driver it names (D) `check` has none and the build it names then adds none.
//!
//! Used by tests/it/compat_table.rs and tests/it/recommend.rs (`common::agree`); the combinations
//! come from their tables and from tests/fixtures/combinations.yaml when that file exists.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::app::evaluate;
use gpudoctor::assume;
use gpudoctor::matrix::Matrix;
use gpudoctor::recommend::{blockers, candidates, recommend};
use gpudoctor::report::{Finding, Severity};
use gpudoctor::rules::{RuleOptions, Selection};
use gpudoctor::snapshot::Snapshot;

type Key = (String, String, Option<u32>);

fn snapshot(m: &Matrix, facts: &[String]) -> Result<Snapshot, String> {
    let mut s = Snapshot::empty();
    for a in facts {
        let (k, v) = assume::parse(a).map_err(|e| e.0)?;
        assume::apply(&mut s, m, &k, &v).map_err(|e| e.0)?;
    }
    Ok(s)
}

fn errors(m: &Matrix, facts: &[String]) -> Result<Vec<Finding>, String> {
    let s = snapshot(m, facts)?;
    Ok(
        evaluate(s, m, &RuleOptions::default(), &Selection::default())
            .findings
            .into_iter()
            .filter(|f| f.severity >= Severity::Error)
            .collect(),
    )
}

fn keys(f: &[Finding]) -> Vec<Key> {
    f.iter()
        .map(|f| (f.rule.clone(), f.title.clone(), f.gpu))
        .collect()
}

/// Errors of check(F + extra) that check(F) does not have.
fn added(m: &Matrix, facts: &[String], extra: &[String]) -> Result<Vec<String>, String> {
    let base = keys(&errors(m, facts)?);
    let all: Vec<String> = facts.iter().chain(extra).cloned().collect();
    Ok(errors(m, &all)?
        .iter()
        .filter(|f| !base.contains(&(f.rule.clone(), f.title.clone(), f.gpu)))
        .map(|f| format!("{}: {}", f.rule, f.title))
        .collect())
}

/// How many judgements a run made, to show the test is not vacuous.
#[derive(Debug, Default)]
pub struct Tally {
    pub recommended: usize,
    pub rejected_all: usize,
    pub driver_needed: usize,
}

/// The disagreements of `recommend` and `check` on one combination (empty: they agree).
pub fn disagreements(name: &str, facts: &[&str], tally: &mut Tally) -> Vec<String> {
    let m = Matrix::embedded().unwrap();
    let facts: Vec<String> = facts.iter().map(|s| s.to_string()).collect();
    let snap = match snapshot(&m, &facts) {
        Ok(s) => s,
        Err(e) => return vec![format!("{name}: the facts do not apply: {e}")],
    };
    let windows = snap.host.get().is_some_and(|h| h.os == "windows");
    let r = recommend(&snap, &m, None);
    let mut out = Vec::new();
    // Blocking errors are those of the machine, not of a framework build: judged without them.
    let machine: Vec<String> = facts
        .iter()
        .filter(|f| {
            !["torch=", "tensorflow=", "jax=", "jaxlib=", "jax.cuda="]
                .iter()
                .any(|k| f.starts_with(k))
        })
        .cloned()
        .collect();
    let gpu_blocked = !blockers(&errors(&m, &machine).unwrap()).is_empty();
    if gpu_blocked == r.blockers.is_empty() {
        out.push(format!(
            "{name}: check blocks the GPU: {gpu_blocked}; recommend's blockers: {:?}",
            r.blockers
        ));
    }
    for rec in &r.recommendations {
        let fw = rec.framework.as_str();
        if rec.works {
            tally.recommended += 1;
            match added(&m, &facts, &rec.assume) {
                Ok(a) if a.is_empty() => {}
                Ok(a) => out.push(format!(
                    "{name}: recommend names {:?} for {fw}, but check --assume {} adds {a:?}",
                    rec.build,
                    rec.assume.join(" ")
                )),
                Err(e) => out.push(format!("{name}: {fw}: {e}")),
            }
            if !r.blockers.is_empty() {
                out.push(format!(
                    "{name}: {fw} works although nothing can run: {:?}",
                    r.blockers
                ));
            }
        } else if r.blockers.is_empty() {
            // Nothing recommended: check must reject every build of the matrix.
            tally.rejected_all += 1;
            for c in candidates(&m, fw, windows) {
                let k: Vec<String> = c.assume.iter().map(|(k, v)| format!("{k}={v}")).collect();
                if let Ok(a) = added(&m, &facts, &k) {
                    if a.is_empty() {
                        out.push(format!(
                            "{name}: recommend finds no {fw} build, but check passes {}",
                            c.label
                        ));
                    }
                }
            }
        }
        if let Some(n) = &rec.driver_needed {
            tally.driver_needed += 1;
            let mut with_d: Vec<String> = facts
                .iter()
                .filter(|f| !f.starts_with("driver=") && !f.starts_with("driver.cuda="))
                .cloned()
                .collect();
            with_d.push(format!("driver={}", n.driver));
            let mut machine_d: Vec<String> = machine
                .iter()
                .filter(|f| !f.starts_with("driver=") && !f.starts_with("driver.cuda="))
                .cloned()
                .collect();
            machine_d.push(format!("driver={}", n.driver));
            match errors(&m, &machine_d) {
                Ok(e) if !blockers(&e).is_empty() => out.push(format!(
                    "{name}: with driver {} check still blocks: {:?}",
                    n.driver,
                    keys(&e)
                )),
                Ok(_) => {}
                Err(e) => out.push(format!("{name}: driver {}: {e}", n.driver)),
            }
            match added(&m, &with_d, &n.assume) {
                Ok(a) if a.is_empty() => {}
                Ok(a) => out.push(format!(
                    "{name}: with driver {} recommend names {} for {fw}, but check adds {a:?}",
                    n.driver, n.build
                )),
                Err(e) => out.push(format!("{name}: {fw}: {e}")),
            }
        }
    }
    out
}

/// The combinations of tests/fixtures/combinations.yaml, when it exists: a list of entries (or
/// a map with `combinations:`), each with a `name` and its facts under `assume` (or `facts`) as
/// KEY=VALUE strings; other fields are ignored.
pub fn combinations_file() -> Vec<(String, Vec<String>)> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/combinations.yaml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let v: serde_json::Value = serde_saphyr::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
    let list = v
        .get("combinations")
        .cloned()
        .unwrap_or(v)
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{}: expected a list of combinations", path.display()));
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let name = c
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| format!("combinations.yaml entry {}", i + 1));
            let facts = c
                .get("assume")
                .or_else(|| c.get("facts"))
                .and_then(|a| a.as_array())
                .unwrap_or_else(|| panic!("{}: {name} has no assume list", path.display()))
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect();
            (name, facts)
        })
        .collect()
}
