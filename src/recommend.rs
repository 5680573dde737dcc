//! `gpudoctor recommend`: for the probed or assumed driver and GPUs, the newest build of each
//! framework that works, with the exact install command, and the driver to install when nothing
//! can run until the driver changes.
//!
//! "Works" is `check`'s judgement, not a second one: each candidate build of the matrix (newest
//! first) is applied to the snapshot as `--assume` facts would be, in a fresh environment that
//! holds only that build (as after a clean install), and the real rules run on it. A candidate is
//! recommended only when it adds no error to what the rules already find without any framework,
//! so `recommend` and `check` cannot disagree on the same facts. Errors that stop every GPU
//! program whatever is installed (a GPU newer than the driver, an architecture the driver branch
//! dropped, no driver) are said first, and the same search is run again on the drivers the matrix
//! knows to name the driver to install.

use serde::Serialize;

use crate::assume;
use crate::compat::{gpu_ccs, torch_install, DriverFacts};
use crate::matrix::{Matrix, Os};
use crate::rules::{Context, RuleOptions, Selection};
use crate::snapshot::{Probed, Snapshot};
use crate::version::{CudaVersion, DriverVersion};
use crate::vocab::{Category, Finding, Fix, Severity};

pub const RECOMMEND_SCHEMA: &str = "gpudoctor.recommend/1";

#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    pub framework: String,
    /// Whether a build of this framework runs on these facts as they are.
    pub works: bool,
    /// The build that works here, or None.
    pub build: Option<String>,
    pub command: Option<String>,
    /// The `--assume` facts that stand for this build: `check --assume …` judges it the same.
    pub assume: Vec<String>,
    /// Why, or why nothing works.
    pub note: String,
    /// When nothing works until the driver changes: the driver to install and what then works.
    pub driver_needed: Option<DriverNeeded>,
    /// The minimum driver of the newest build of this framework, and that build.
    pub newest: Option<String>,
    pub newest_min_driver: Option<String>,
}

/// The driver that makes a build of a framework run, and that build.
#[derive(Debug, Clone, Serialize)]
pub struct DriverNeeded {
    /// The driver version (one the matrix knows: a toolkit's packaged driver or a minimum).
    pub driver: String,
    pub branch: u32,
    /// "upgrade" (this driver or newer), "downgrade" (this branch: the GPU was dropped by later
    /// ones) or "install" (no driver now).
    pub change: &'static str,
    pub build: String,
    pub command: String,
    pub assume: Vec<String>,
}

/// An error `check` finds on these facts that stops every GPU program, whatever is installed.
#[derive(Debug, Clone, Serialize)]
pub struct Blocker {
    pub rule: String,
    pub category: Category,
    pub title: String,
    pub fix: Fix,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recommendations {
    pub schema: &'static str,
    pub driver: Option<String>,
    pub driver_cuda: Option<String>,
    pub gpus: Vec<String>,
    /// What must be fixed before any build can run (said first).
    pub blockers: Vec<Blocker>,
    pub recommendations: Vec<Recommendation>,
}

/// A build of a framework that the matrix describes, as `recommend` would name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub framework: &'static str,
    pub label: String,
    pub command: String,
    /// `--assume` key/value pairs that stand for it.
    pub assume: Vec<(String, String)>,
}

impl Candidate {
    fn assume_strings(&self) -> Vec<String> {
        self.assume
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// The install command of one requirement, from the same data as `check`'s fixes
/// (`crate::fixes`): `recommend` names no environment, so pip of `python`.
fn pip(req: &str, flags: &[&str]) -> String {
    let mut i = crate::fixes::PyInstall::new(&[req]);
    for f in flags {
        i = i.flag(f);
    }
    crate::fixes::python_install_command(None, false, &i)
}

/// The frameworks `recommend` knows, in output order.
pub const FRAMEWORKS: &[&str] = &["torch", "tensorflow", "jax"];

/// Every build of a framework the matrix describes that exists for this OS, best first (newest
/// release, then newest CUDA).
pub fn candidates(m: &Matrix, framework: &str, windows: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    match framework {
        "torch" => {
            for row in m.pytorch.iter().rev() {
                let mut variants: Vec<_> = row.variants.iter().collect();
                variants.sort_by_key(|v| std::cmp::Reverse(CudaVersion::parse(&v.cuda)));
                for v in variants {
                    out.push(Candidate {
                        framework: "torch",
                        label: format!("torch {} +{} (CUDA {})", row.torch, v.tag, v.cuda),
                        command: torch_install(row, v, None, false),
                        assume: vec![("torch".into(), format!("{}.0+{}", row.torch, v.tag))],
                    });
                }
            }
        }
        "tensorflow" => {
            for r in m.tensorflow.iter().rev() {
                // Before 2.1 the GPU build is its own package (tensorflow-gpu), and `tensorflow`
                // is CPU-only: the candidate is the GPU package, as `check` judges it.
                let gpu_package = r.gpu_package.as_deref().filter(|p| *p != "tensorflow");
                let command = if let Some(p) = gpu_package {
                    format!(
                        "{}   # with CUDA {} and cuDNN {} installed",
                        pip(&format!("{p}=={}.*", r.tf), &[]),
                        r.cuda,
                        r.cudnn
                    )
                } else if r.pip_cuda && !windows {
                    pip(&format!("tensorflow[and-cuda]=={}.*", r.tf), &[])
                } else {
                    format!(
                        "{}   # with CUDA {} and cuDNN {} installed",
                        pip(&format!("tensorflow=={}.*", r.tf), &[]),
                        r.cuda,
                        r.cudnn
                    )
                };
                out.push(Candidate {
                    framework: "tensorflow",
                    label: format!("tensorflow {} (CUDA {}, cuDNN {})", r.tf, r.cuda, r.cudnn),
                    command,
                    assume: vec![(
                        "tensorflow".into(),
                        match gpu_package {
                            Some(p) => format!("{p}=={}.0", r.tf),
                            None => format!("{}.0", r.tf),
                        },
                    )],
                });
            }
        }
        "jax" => {
            let newest = m.jax_known_below().map(str::to_string);
            // The matrix's windows_gpu: no JAX CUDA build runs on native Windows (WSL2 only).
            let mut rows: Vec<_> = m.jax.iter().filter(|r| !windows || r.windows_gpu).collect();
            rows.sort_by(|a, b| {
                let key = |s: &str| crate::version::dotted(s).unwrap_or_default();
                crate::version::cmp_dotted(&key(&b.below), &key(&a.below))
                    .then(b.cuda_major.cmp(&a.cuda_major))
            });
            for r in rows {
                let extra = format!("jax[cuda{}]", r.cuda_major);
                let command = if Some(&r.below) == newest.as_ref() {
                    pip(&extra, &["-U"])
                } else {
                    pip(&format!("{extra}>={},<{}", r.from, r.below), &[])
                };
                out.push(Candidate {
                    framework: "jax",
                    label: format!("{extra} (JAX {} to below {})", r.from, r.below),
                    command,
                    assume: vec![
                        ("jax".into(), r.from.clone()),
                        ("jax.cuda".into(), r.cuda_major.to_string()),
                    ],
                });
            }
        }
        _ => {}
    }
    out
}

/// A finding's identity across two evaluations of nearly the same snapshot.
type Key = (String, String, Option<u32>);

fn key(f: &Finding) -> Key {
    (f.rule.clone(), f.title.clone(), f.gpu)
}

/// Runs every rule, as `check` does with no policy and no selection.
fn findings(snap: &Snapshot, m: &Matrix) -> Vec<Finding> {
    let opts = RuleOptions::default();
    let ctx = Context {
        snap,
        matrix: m,
        opts: &opts,
    };
    crate::rules::evaluate(&ctx, &Selection::default())
}

fn errors(snap: &Snapshot, m: &Matrix) -> Vec<Finding> {
    findings(snap, m)
        .into_iter()
        .filter(|f| f.severity >= Severity::Error)
        .collect()
}

/// The facts without any framework build: every Python environment is taken away.
pub fn without_frameworks(snap: &Snapshot) -> Snapshot {
    let mut s = snap.clone();
    s.python = Probed::found(Vec::new());
    s
}

/// The facts with this build installed in a fresh environment.
fn with_candidate(base: &Snapshot, m: &Matrix, c: &Candidate) -> Option<Snapshot> {
    let mut s = base.clone();
    for (k, v) in &c.assume {
        assume::apply(&mut s, m, k, v).ok()?;
    }
    Some(s)
}

/// The facts with another driver: the driver version replaced, and the CUDA version it supports
/// taken from its branch (an assumed `driver.cuda` belonged to the old driver).
pub fn with_driver(snap: &Snapshot, m: &Matrix, driver: &DriverVersion) -> Option<Snapshot> {
    let mut s = snap.clone();
    s.assumed
        .retain(|a| a.key != "driver.cuda" && a.key != "driver");
    assume::apply(&mut s, m, "driver", &driver.to_string()).ok()?;
    Some(s)
}

/// The errors a build adds to the frameworkless facts (empty: `check` passes it).
pub fn added_errors(
    base: &Snapshot,
    base_errors: &[Finding],
    m: &Matrix,
    c: &Candidate,
) -> Vec<Finding> {
    let Some(s) = with_candidate(base, m, c) else {
        return Vec::new();
    };
    let known: Vec<Key> = base_errors.iter().map(key).collect();
    errors(&s, m)
        .into_iter()
        .filter(|f| !known.contains(&key(f)))
        .collect()
}

/// Errors that stop every GPU program whatever is installed: no driver, a driver that does not
/// match its kernel module, no GPU in the container, and a GPU the driver cannot drive.
pub fn blockers(errors: &[Finding]) -> Vec<&Finding> {
    errors
        .iter()
        .filter(|f| match f.category {
            Category::DriverMissing
            | Category::DriverLibraryMismatch
            | Category::ContainerNoGpu => true,
            Category::DriverTooOld | Category::ArchUnsupported => f.gpu.is_some(),
            _ => false,
        })
        .collect()
}

/// True when changing the driver's version can lift these blockers.
fn driver_can_fix(b: &[&Finding], d: &DriverFacts) -> bool {
    b.iter().all(|f| match f.category {
        Category::DriverTooOld | Category::ArchUnsupported => true,
        Category::DriverMissing => !d.known(),
        _ => false,
    })
}

/// The driver versions the matrix names for this OS (toolkit drivers, minor-version minimums),
/// oldest first.
pub fn known_drivers(m: &Matrix, os: Os) -> Vec<DriverVersion> {
    let mut v: Vec<DriverVersion> = m
        .toolkits
        .iter()
        .filter_map(|t| match os {
            Os::Linux => t.linux.as_deref(),
            Os::Windows => t.windows.as_deref(),
        })
        .chain(m.mvc.iter().filter_map(|r| match os {
            Os::Linux => Some(r.linux.as_str()),
            Os::Windows => r.windows.as_deref(),
        }))
        .filter_map(DriverVersion::parse)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The first candidate `check` passes on these facts, or the errors of the best one.
fn first_passing<'c>(
    base: &Snapshot,
    m: &Matrix,
    cands: &'c [Candidate],
) -> Result<&'c Candidate, Vec<Finding>> {
    let base_errors = errors(base, m);
    let mut first_errors = None;
    for c in cands {
        let added = added_errors(base, &base_errors, m, c);
        if added.is_empty() {
            return Ok(c);
        }
        first_errors.get_or_insert(added);
    }
    Err(first_errors.unwrap_or_default())
}

/// The driver that lets a build run: newer drivers first (the smallest upgrade), then older
/// ones (the newest that still drives the GPU); with no driver, the newest that works.
fn search_driver<'c>(
    base: &Snapshot,
    m: &Matrix,
    d: &DriverFacts,
    cands: &'c [Candidate],
) -> Option<(DriverVersion, &'c Candidate, &'static str)> {
    let all = known_drivers(m, d.os);
    let order: Vec<(DriverVersion, &'static str)> = match d.version {
        Some(cur) => all
            .iter()
            .filter(|v| **v > cur)
            .map(|v| (*v, "upgrade"))
            .chain(
                all.iter()
                    .rev()
                    .filter(|v| **v < cur)
                    .map(|v| (*v, "downgrade")),
            )
            .collect(),
        None => all.iter().rev().map(|v| (*v, "install")).collect(),
    };
    for (v, change) in order {
        let Some(s) = with_driver(base, m, &v) else {
            continue;
        };
        if !blockers(&errors(&s, m)).is_empty() {
            continue;
        }
        if let Ok(c) = first_passing(&s, m, cands) {
            return Some((v, c, change));
        }
    }
    None
}

pub fn recommend(snap: &Snapshot, m: &Matrix, only: Option<&str>) -> Recommendations {
    let d = DriverFacts::of(snap, m);
    let ccs: Vec<String> = gpu_ccs(snap, m).into_iter().map(|(_, cc)| cc).collect();
    let windows = snap.host.get().is_some_and(|h| h.os == "windows");
    let base = without_frameworks(snap);
    let base_errors = errors(&base, m);
    let blocking = blockers(&base_errors);
    let blocked = !blocking.is_empty();

    let mut recs = Vec::new();
    for fw in FRAMEWORKS
        .iter()
        .copied()
        .filter(|f| only.is_none_or(|o| o == *f))
    {
        let cands = candidates(m, fw, windows);
        let name = match fw {
            "torch" => "PyTorch",
            "tensorflow" => "TensorFlow",
            _ => "JAX",
        };
        let found = if blocked {
            Err(Vec::new())
        } else {
            first_passing(&base, m, &cands)
        };
        let (works, build, command, assume, note) = match &found {
            Ok(c) => (
                true,
                Some(c.label.clone()),
                Some(c.command.clone()),
                c.assume_strings(),
                works_note(name, &d, &ccs),
            ),
            Err(why) => (
                false,
                None,
                None,
                Vec::new(),
                if fw == "jax" && windows {
                    "JAX has no Windows GPU wheels; use WSL2".to_string()
                } else if blocked && driver_can_fix(&blocking, &d) {
                    format!("no {name} build can run until the driver changes (see the blockers)")
                } else if blocked {
                    format!("no {name} build can run until the blockers are fixed")
                } else if cands.is_empty() {
                    format!("the matrix has no {name} builds")
                } else {
                    format!(
                        "no {name} build in the matrix passes check on {} with {}{}",
                        d.describe(),
                        gpus_phrase(&ccs),
                        why.first()
                            .map(|f| format!(" (the newest: {})", f.title))
                            .unwrap_or_default()
                    )
                },
            ),
        };
        let driver_needed =
            if works || cands.is_empty() || (blocked && !driver_can_fix(&blocking, &d)) {
                None
            } else {
                needed_driver(&base, m, &d, &cands)
            };
        let (newest, newest_min_driver) = newest_build(m, &d, fw);
        recs.push(Recommendation {
            framework: fw.to_string(),
            works,
            build,
            command,
            assume,
            note,
            driver_needed,
            newest,
            newest_min_driver,
        });
    }
    Recommendations {
        schema: RECOMMEND_SCHEMA,
        driver: d.version.map(|v| v.to_string()),
        driver_cuda: d.cuda.map(|c| c.to_string()),
        gpus: ccs,
        blockers: blocking
            .iter()
            .map(|f| Blocker {
                rule: f.rule.clone(),
                category: f.category,
                title: f.title.clone(),
                fix: f.fix.clone(),
                gpu: f.gpu,
            })
            .collect(),
        recommendations: recs,
    }
}

/// The note of a framework that has a build: which, on what driver and GPUs.
fn works_note(name: &str, d: &DriverFacts, ccs: &[String]) -> String {
    format!(
        "the newest {name} build that check passes on {} with {}{}",
        d.describe(),
        gpus_phrase(ccs),
        if d.known() {
            String::new()
        } else {
            " (no driver is known: give one with --assume driver=VERSION to judge it too)"
                .to_string()
        }
    )
}

/// The nearest driver on which a build of `cands` passes check, and that build.
fn needed_driver(
    base: &Snapshot,
    m: &Matrix,
    d: &DriverFacts,
    cands: &[Candidate],
) -> Option<DriverNeeded> {
    search_driver(base, m, d, cands).map(|(v, c, change)| DriverNeeded {
        driver: v.to_string(),
        branch: v.major,
        change,
        build: c.label.clone(),
        command: c.command.clone(),
        assume: c.assume_strings(),
    })
}

/// The newest build of `fw` in the matrix, and the driver its CUDA needs.
fn newest_build(m: &Matrix, d: &DriverFacts, fw: &str) -> (Option<String>, Option<String>) {
    let min_of = |cuda: CudaVersion| {
        m.min_driver(cuda, d.os, false)
            .map(|r| r.driver.to_string())
    };
    match fw {
        "torch" => {
            let nv = m.newest_torch().and_then(|r| {
                let v = r
                    .variants
                    .iter()
                    .max_by_key(|v| CudaVersion::parse(&v.cuda))?;
                Some((r, v))
            });
            (
                nv.map(|(r, v)| format!("torch {} +{}", r.torch, v.tag)),
                nv.and_then(|(_, v)| CudaVersion::parse(&v.cuda))
                    .and_then(min_of),
            )
        }
        "tensorflow" => {
            let r = m.newest_tensorflow();
            (
                r.map(|r| format!("tensorflow {}", r.tf)),
                r.and_then(|r| CudaVersion::parse(&r.cuda)).and_then(min_of),
            )
        }
        _ => {
            let newest_below = m.jax_known_below();
            let r = m
                .jax
                .iter()
                .filter(|r| Some(r.below.as_str()) == newest_below)
                .max_by_key(|r| r.cuda_major);
            (
                r.map(|r| format!("jax[cuda{}]", r.cuda_major)),
                r.map(|r| r.min_driver.clone()),
            )
        }
    }
}

fn driver_phrase(n: &DriverNeeded) -> String {
    match n.change {
        "downgrade" => format!(
            "the R{} driver ({} or a later {}.x)",
            n.branch, n.driver, n.branch
        ),
        _ => format!("driver {} or newer (R{} or later)", n.driver, n.branch),
    }
}

fn gpus_phrase(ccs: &[String]) -> String {
    if ccs.is_empty() {
        "any GPU (none known)".to_string()
    } else {
        format!("compute {}", ccs.join(", "))
    }
}

/// Human output: what blocks every build first, then one block per framework.
pub fn render(r: &Recommendations) -> String {
    let mut s = format!(
        "For {} and {}:\n\n",
        match (&r.driver, &r.driver_cuda) {
            (Some(v), Some(c)) => format!("driver {v} (CUDA {c})"),
            (Some(v), None) => format!("driver {v}"),
            (None, Some(c)) => format!("a driver with CUDA {c}"),
            (None, None) => "an unknown driver".to_string(),
        },
        gpus_phrase(&r.gpus)
    );
    if !r.blockers.is_empty() {
        s.push_str("Nothing can run on the GPU until this is fixed:\n");
        for b in &r.blockers {
            s.push_str(&format!("[✗] {}\n    {}\n", b.title, b.fix.text));
            for c in &b.fix.commands {
                s.push_str(&format!("    $ {c}\n"));
            }
        }
        s.push('\n');
    }
    for x in &r.recommendations {
        match (&x.build, &x.command) {
            (Some(b), Some(c)) => s.push_str(&format!(
                "[✓] {}: {b}\n    {}\n    $ {c}\n",
                x.framework, x.note
            )),
            _ => {
                s.push_str(&format!("[✗] {}: {}\n", x.framework, x.note));
                if let Some(n) = &x.driver_needed {
                    s.push_str(&format!(
                        "    With {}: {}\n    $ {}\n",
                        driver_phrase(n),
                        n.build,
                        n.command
                    ));
                }
            }
        }
        if let (Some(n), Some(d)) = (&x.newest, &x.newest_min_driver) {
            s.push_str(&format!("    The newest, {n}, needs driver >= {d}.\n"));
        }
    }
    s
}

#[cfg(test)]
#[path = "recommend_tests.rs"]
mod tests;
