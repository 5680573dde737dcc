//! The command line resolved once per run (ripgrep's low-level → high-level arguments): clap's
//! types stop here. A probing command's arguments are first checked without touching the
//! machine, in the order their errors have always come, then resolved against the environment
//! once: `--timeout` becomes the run's one [`Deadline`], the `--assume` facts are parsed, the
//! policy file is read, the colour is settled. The command reads the plain value that comes out;
//! nothing it calls sees a clap type.

use std::path::PathBuf;
use std::time::Duration;

use super::{fail_severity, parse_gpu_list, use_color, GpuSelector};
use crate::cli::{CheckArgs, Format, FrameworkChoice, ProbeArgs, RecommendArgs, SnapshotArgs};
use crate::policy::Policy;
use crate::probe::deadline::Deadline;
use crate::probe::{self, ProbeOptions};
use crate::report::Severity;
use crate::rules::Selection;

/// What the probes of one run get.
#[derive(Debug, Clone)]
pub(crate) struct ProbeConfig {
    /// `options.deadline` is the run's one deadline, started from `--timeout` when the command
    /// line was resolved: the probes, their helper processes and the smoke child all end by it.
    pub options: ProbeOptions,
    /// `--timeout` as given, in seconds (for messages).
    pub timeout_secs: f64,
}

impl ProbeConfig {
    /// Checks `--timeout`, `--log-window` and each `--python`, then starts the deadline. The only
    /// place `ProbeArgs` become [`ProbeOptions`].
    pub fn resolve(p: &ProbeArgs) -> Result<ProbeConfig, String> {
        check_probe_args(p)?;
        Ok(ProbeConfig {
            options: ProbeOptions {
                log_window_hours: p.log_window,
                deadline: Deadline::after(Duration::from_secs_f64(p.timeout)),
                deep: p.deep,
                pythons: p.pythons.clone(),
                ..ProbeOptions::default()
            },
            timeout_secs: p.timeout,
        })
    }

    /// The run's one deadline.
    pub fn deadline(&self) -> Deadline {
        self.options.deadline
    }
}

/// What the probe options may be: pure checks, but for a look at each `--python` path.
fn check_probe_args(p: &ProbeArgs) -> Result<(), String> {
    if !(p.timeout.is_finite() && p.timeout > 0.0 && p.timeout <= 3600.0) {
        return Err(format!(
            "--timeout {}: expected a number of seconds more than 0 and at most 3600 (the default is 10)",
            p.timeout
        ));
    }
    if !(p.log_window.is_finite() && p.log_window > 0.0 && p.log_window <= 24.0 * 366.0) {
        return Err(format!(
            "--log-window {}: expected a number of hours more than 0 and at most 8784 (the default is 24)",
            p.log_window
        ));
    }
    p.pythons.iter().try_for_each(|py| check_python(py))
}

/// A `--python PATH`: an interpreter, or an environment's directory.
fn check_python(py: &std::path::Path) -> Result<(), String> {
    let shown = crate::sanitize::clean_line(&py.to_string_lossy(), 300);
    let give = "give a Python interpreter (e.g. /usr/bin/python3) or an environment's directory (a venv or conda prefix, or a site-packages)";
    match std::fs::metadata(py) {
        Err(e) => Err(format!(
            "--python {shown}: {}; {give}",
            match e.kind() {
                std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
                _ => e.to_string(),
            }
        )),
        Ok(m) if m.is_dir() && !probe::python::is_environment_dir(py) => Err(format!(
            "--python {shown}: a directory with no Python environment in it (no lib/python3.*/site-packages, Lib\\site-packages or packages); {give}"
        )),
        Ok(m) if !m.is_dir() && !probe::python::looks_like_interpreter(py) => Err(format!(
            "--python {shown}: not a Python interpreter (its name does not start with \"python\" and no pyvenv.cfg is beside its folder); {give}"
        )),
        Ok(_) => Ok(()),
    }
}

/// The `--assume KEY=VALUE` facts, parsed (the one place they are).
fn parse_assumptions(raw: &[String]) -> Result<Vec<(String, String)>, String> {
    raw.iter()
        .map(|r| crate::assume::parse(r).map_err(|e| e.0))
        .collect()
}

/// Where the facts of a run come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// Probe this machine (and run the smoke tests).
    Probe,
    /// A snapshot file (`--snapshot`).
    File(PathBuf),
    /// Nothing but the `--assume` facts (`--no-probe`).
    Assumed,
}

/// `gpudoctor check`, resolved.
pub(crate) struct CheckConfig {
    pub probe: ProbeConfig,
    pub source: Source,
    /// `--assume`, parsed, in the order given.
    pub assume: Vec<(String, String)>,
    pub selection: Selection,
    /// `--gpu`, parsed (matched with the GPUs once the snapshot exists).
    pub gpus: Option<Vec<GpuSelector>>,
    /// Run the smoke tests (when probing): not `--no-smoke`.
    pub smoke: bool,
    pub matrix: Option<PathBuf>,
    pub policy: Option<Policy>,
    pub node_class: Option<String>,
    pub expect_gpus: Option<u32>,
    /// The lowest severity that fails the run.
    pub fail_on: Severity,
    pub format: Format,
    pub color: bool,
    pub verbose: bool,
}

impl CheckConfig {
    /// Pure argument checks first, before touching the machine; then the deadline starts and
    /// the policy file is read.
    pub fn resolve(a: CheckArgs) -> Result<CheckConfig, String> {
        let probe = ProbeConfig::resolve(&a.probe)?;
        let selection = Selection {
            only: a.only,
            skip: a.skip,
        };
        selection.validate()?;
        let gpus = a.gpu.as_deref().map(parse_gpu_list).transpose()?;
        let assume = parse_assumptions(&a.assume)?;
        let policy = a.policy.policy.as_deref().map(Policy::load).transpose()?;
        let source = match (a.snapshot, a.no_probe) {
            (Some(path), _) => Source::File(path),
            (None, true) => Source::Assumed,
            (None, false) => Source::Probe,
        };
        Ok(CheckConfig {
            probe,
            source,
            assume,
            selection,
            gpus,
            smoke: !a.no_smoke,
            matrix: a.matrix,
            policy,
            node_class: a.policy.node_class,
            expect_gpus: a.expect_gpus,
            fail_on: fail_severity(a.fail_on),
            format: if a.json { Format::Json } else { a.format },
            color: use_color(a.color),
            verbose: a.verbose,
        })
    }
}

/// `gpudoctor snapshot`, resolved.
pub(crate) struct SnapshotConfig {
    pub probe: ProbeConfig,
    pub redact: bool,
    pub output: Option<PathBuf>,
    pub force: bool,
}

impl SnapshotConfig {
    pub fn resolve(a: SnapshotArgs) -> Result<SnapshotConfig, String> {
        Ok(SnapshotConfig {
            probe: ProbeConfig::resolve(&a.probe)?,
            redact: a.redact,
            output: a.output,
            force: a.force,
        })
    }
}

/// `gpudoctor recommend`, resolved.
pub(crate) struct RecommendConfig {
    pub probe: ProbeConfig,
    pub assume: Vec<(String, String)>,
    /// Probe this machine (not `--no-probe`).
    pub probing: bool,
    pub matrix: Option<PathBuf>,
    /// Only this framework.
    pub framework: Option<&'static str>,
    pub json: bool,
}

impl RecommendConfig {
    pub fn resolve(a: RecommendArgs) -> Result<RecommendConfig, String> {
        Ok(RecommendConfig {
            probe: ProbeConfig::resolve(&a.probe)?,
            assume: parse_assumptions(&a.assume)?,
            probing: !a.no_probe,
            matrix: a.matrix,
            framework: a.framework.map(|f| match f {
                FrameworkChoice::Torch => "torch",
                FrameworkChoice::Tensorflow => "tensorflow",
                FrameworkChoice::Jax => "jax",
            }),
            json: a.json,
        })
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
