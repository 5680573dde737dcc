//! Runs a parsed command: turns clap values into plain options, wires probe → snapshot →
//! rules → report → render, and returns what to print and the exit status. Only `main` prints.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use crate::assume;
use crate::cli::{
    CheckArgs, Cli, ColorChoice, Command, ExplainArgs, FailOn, Format, FrameworkChoice,
    MatrixCommand, ProbeArgs, RecommendArgs, RulesArgs, SnapshotArgs, StressArgs, StressFormat,
};
use crate::matrix::Matrix;
use crate::probe::{self, libquery, ProbeOptions};
use crate::render::{self, human::HumanOptions, GpuFilter};
use crate::report::{ExitStatus, MatrixRef, Report, Severity};
use crate::rules::{self, Context, RuleOptions, Selection};
use crate::snapshot::{Snapshot, SNAPSHOT_SCHEMA};

/// What a command produced.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl Output {
    fn ok(stdout: String, status: ExitStatus) -> Output {
        Output {
            stdout,
            stderr: String::new(),
            status,
        }
    }
    /// gpudoctor itself failed (exit 2) with a message that says what to do. The message often quotes the user's files and
    /// arguments: every line is cleaned of terminal escapes and control characters.
    pub fn tool_error(msg: impl AsRef<str>) -> Output {
        let clean: Vec<String> = msg
            .as_ref()
            .lines()
            .map(|l| crate::sanitize::clean_line(l, 2000))
            .collect();
        Output {
            stdout: String::new(),
            stderr: format!("gpudoctor: error: {}\n", clean.join("\n")),
            status: ExitStatus::ToolFailed,
        }
    }
}

pub fn run(cli: Cli) -> Output {
    match cli.command {
        Command::Check(a) => check(a),
        Command::Snapshot(a) => snapshot(a),
        Command::Rules(a) => list_rules(a),
        Command::Explain(a) => explain(a),
        Command::Stress(a) => stress(a),
        Command::Completions { shell } => completions(shell),
        Command::Man => man_page(),
        Command::Recommend(a) => recommend(a),
        Command::Matrix(c) => matrix_command(c),
        Command::ProbeLib { kind, target } => probe_lib(&kind, &target),
        Command::ProbeNvml { deep } => probe_nvml(deep),
        Command::Smoke => smoke_child(),
    }
}

fn probe_options(p: &ProbeArgs) -> Result<ProbeOptions, String> {
    if !(p.timeout.is_finite() && p.timeout > 0.0 && p.timeout <= 3600.0) {
        return Err(format!(
            "--timeout {}: expected a number of seconds between 0 and 3600",
            p.timeout
        ));
    }
    if !(p.log_window.is_finite() && p.log_window > 0.0 && p.log_window <= 24.0 * 366.0) {
        return Err(format!(
            "--log-window {}: expected a number of hours between 0 and 8784",
            p.log_window
        ));
    }
    Ok(ProbeOptions {
        log_window_hours: p.log_window,
        timeout: Duration::from_secs_f64(p.timeout),
        deep: p.deep,
        pythons: p.pythons.clone(),
        ..ProbeOptions::default()
    })
}

/// Reads a snapshot file; errors name the file and the line.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, String> {
    let text =
        crate::userfile::read(path, "snapshot").map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a JSON snapshot: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    // A whole report (check --format json) holds the snapshot under "snapshot".
    let v = match v.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s.starts_with("gpudoctor.report/") => v.get("snapshot").cloned().unwrap_or(v),
        _ => v,
    };
    match v.get("schema").and_then(|s| s.as_str()) {
        Some(SNAPSHOT_SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "{}: the snapshot schema is {other:?}; this gpudoctor reads {SNAPSHOT_SCHEMA:?}",
                path.display()
            ))
        }
        None => {
            return Err(format!(
                "{}: no \"schema\" field: this is not a gpudoctor snapshot (make one with `gpudoctor snapshot -o FILE`)",
                path.display()
            ))
        }
    }
    serde_json::from_value(v).map_err(|e| {
        format!(
            "{}: the snapshot does not match {SNAPSHOT_SCHEMA}: {e}",
            path.display()
        )
    })
}

/// The matrix `--matrix` / GPUDOCTOR_MATRIX names, else an updated copy in the cache, else the
/// embedded one.
pub fn load_matrix(path: Option<&Path>) -> Result<Matrix, String> {
    let join = |errs: Vec<crate::matrix::MatrixError>| {
        errs.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    match path {
        Some(p) => Matrix::from_path(p).map_err(|e| format!("cannot use the matrix:\n  {}", join(e))),
        None => match crate::matrix_update::cached_path().filter(|p| p.is_file()) {
            Some(p) => Matrix::from_path(&p).map_err(|e| {
                format!(
                    "the updated matrix in {} is unusable (remove it to use the built-in one):\n  {}",
                    p.display(),
                    join(e)
                )
            }),
            None => Matrix::embedded().map_err(|e| format!("the built-in matrix is broken:\n  {}", join(e))),
        },
    }
}

/// `--gpu 0,2` or UUIDs → indexes, against the GPUs of the snapshot.
fn gpu_filter(list: Option<&str>, snap: &Snapshot) -> Result<GpuFilter, String> {
    let Some(list) = list else { return Ok(None) };
    let gpus = snap.gpu_list();
    if gpus.is_empty() {
        // Nothing to select from (no driver, say): the findings say why.
        return Ok(None);
    }
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let found = if let Ok(i) = item.parse::<u32>() {
            gpus.iter().find(|g| g.index == i)
        } else {
            gpus.iter()
                .find(|g| g.uuid.get().is_some_and(|u| u.starts_with(item)))
        };
        match found {
            Some(g) => out.push(g.index),
            None => {
                return Err(format!(
                    "--gpu {item}: no such GPU here (indexes 0..{}, or a UUID prefix)",
                    gpus.len().saturating_sub(1)
                ))
            }
        }
    }
    Ok(Some(out))
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
                && (crate::outguard::is_terminal()
                    || std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0"))
        }
    }
}

/// Builds the evaluated snapshot: probed, read from a file, or empty; then the assumptions.
pub fn build_snapshot(a: &CheckArgs, matrix: &Matrix) -> Result<Snapshot, String> {
    let mut snap = if let Some(path) = &a.snapshot {
        read_snapshot(path)?
    } else if a.no_probe {
        Snapshot::empty()
    } else {
        probe::probe_all(&probe_options(&a.probe)?)
    };
    for raw in &a.assume {
        let (k, v) = assume::parse(raw).map_err(|e| e.0)?;
        assume::apply(&mut snap, matrix, &k, &v).map_err(|e| e.0)?;
    }
    Ok(snap)
}

/// Evaluates a snapshot into a report.
pub fn evaluate(snap: Snapshot, matrix: &Matrix, opts: &RuleOptions, sel: &Selection) -> Report {
    let findings = {
        let ctx = Context {
            snap: &snap,
            matrix,
            opts,
        };
        rules::evaluate(&ctx, sel)
    };
    Report::new(
        findings,
        snap,
        MatrixRef {
            version: matrix.data_version.clone(),
            source: matrix.source.clone(),
        },
    )
}

fn check(a: CheckArgs) -> Output {
    let started = std::time::Instant::now();
    // Pure argument checks first, before touching the machine.
    if let Err(e) = probe_options(&a.probe) {
        return Output::tool_error(e);
    }
    for raw in &a.assume {
        if let Err(e) = assume::parse(raw) {
            return Output::tool_error(e.0);
        }
    }
    let policy = match a.policy.policy.as_deref().map(crate::policy::Policy::load) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return Output::tool_error(e),
    };
    let matrix = match load_matrix(a.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    crate::probe::trace::line("matrix loaded");
    let snap = match build_snapshot(&a, &matrix) {
        Ok(s) => s,
        Err(e) => return Output::tool_error(e),
    };
    let filter = match gpu_filter(a.gpu.as_deref(), &snap) {
        Ok(f) => f,
        Err(e) => return Output::tool_error(e),
    };
    let mut snap = snap;
    if a.snapshot.is_none() && !a.no_probe {
        snap.smoke = if a.no_smoke {
            crate::snapshot::Probed::absent_code("skipped", "skipped (--no-smoke)")
        } else {
            crate::probe::trace::line("smoke start");
            // One deadline for the whole check: the smoke tests get what the probes left.
            let left = a.probe.timeout - started.elapsed().as_secs_f64();
            let r = if left < 0.25 {
                crate::snapshot::Probed::absent_code(
                    "no_time",
                    format!(
                        "not run: the probes used the whole --timeout of {} s",
                        a.probe.timeout
                    ),
                )
            } else {
                run_smoke(&snap, &filter, left)
            };
            crate::probe::trace::line("smoke done");
            r
        };
    }
    let opts = match policy_options(
        policy.as_ref(),
        a.policy.node_class.as_deref(),
        &snap,
        a.expect_gpus,
    ) {
        Ok(x) => x,
        Err(e) => return Output::tool_error(e),
    };
    let sel = Selection {
        only: a.only.clone(),
        skip: a.skip.clone(),
    };
    let report = judge(snap, &matrix, &opts, &sel, &filter, policy.as_ref());
    crate::probe::trace::line("rules judged");
    let fail_on = fail_severity(a.fail_on);
    let status = if report.unfit(fail_on) {
        ExitStatus::Unfit
    } else {
        ExitStatus::Healthy
    };
    let format = if a.json { Format::Json } else { a.format };
    let text = match format {
        Format::Human => render::human::render(
            &report,
            &HumanOptions {
                color: use_color(a.color),
                all_facts: a.verbose,
                gpus: filter,
                areas: None,
            },
        ),
        Format::Json => match render::json::render(&report) {
            Ok(s) => s,
            Err(e) => return Output::tool_error(format!("could not write the JSON report: {e}")),
        },
        Format::Markdown => render::markdown::render(&report, &filter),
        Format::Prometheus => render::prometheus::render(&report),
        Format::Junit => {
            render::junit::render(&report, &selected_rules(&sel), fail_on, "gpudoctor check")
        }
        Format::Line => render::line::render(&report),
    };
    Output::ok(text, status)
}

/// A completion script generated from the clap definition.
fn completions(shell: clap_complete::Shell) -> Output {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut cmd, "gpudoctor", &mut buf);
    Output::ok(
        String::from_utf8_lossy(&buf).into_owned(),
        ExitStatus::Healthy,
    )
}

/// The man page, generated from the clap definition.
fn man_page() -> Output {
    use clap::CommandFactory;
    let mut buf: Vec<u8> = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut buf) {
        return Output::tool_error(format!("could not write the man page: {e}"));
    }
    Output::ok(
        String::from_utf8_lossy(&buf).into_owned(),
        ExitStatus::Healthy,
    )
}

/// The report of a run: the rules, the findings of the selected GPUs (`--gpu`), and the policy's
/// severities and waivers.
fn judge(
    snap: Snapshot,
    matrix: &Matrix,
    opts: &RuleOptions,
    sel: &Selection,
    gpus: &GpuFilter,
    policy: Option<&crate::policy::Policy>,
) -> Report {
    let mut report = evaluate(snap, matrix, opts, sel);
    if let Some(keep) = gpus {
        report
            .findings
            .retain(|f| f.gpu.is_none_or(|g| keep.contains(&g)));
    }
    if let Some(p) = policy {
        p.apply(&mut report.findings, today());
    }
    Report::new(report.findings, report.snapshot, report.matrix)
}

/// The lowest severity that fails the run.
fn fail_severity(f: FailOn) -> Severity {
    match f {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    }
}

/// Days since 1970-01-01, UTC (for policy expiry dates).
fn today() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0)
}

/// The rule options of a run: `--expect-gpus`, then the policy's thresholds for this node's
/// class (named, or matched by hostname and GPU model).
fn policy_options(
    policy: Option<&crate::policy::Policy>,
    node_class: Option<&str>,
    snap: &Snapshot,
    expect_gpus: Option<u32>,
) -> Result<RuleOptions, String> {
    let Some(policy) = policy else {
        return Ok(RuleOptions {
            expect_gpus,
            ..RuleOptions::default()
        });
    };
    let host = probe::host::hostname();
    let class = policy.class(node_class, host.as_deref(), snap)?;
    let t = policy.thresholds(class);
    Ok(RuleOptions {
        expect_gpus: expect_gpus.or(t.expect_gpus),
        min_driver: t.min_driver,
        max_temperature_c: t.max_temperature_c,
        max_ecc_uncorrected: t.max_ecc_uncorrected,
    })
}

/// The documentation of the rules a selection runs (JUnit lists each as a testcase).
fn selected_rules(sel: &Selection) -> Vec<rules::RuleDoc> {
    rules::all()
        .into_iter()
        .map(|r| r.doc)
        .filter(|d| sel.selects(d))
        .collect()
}

/// What `gpudoctor __smoke` is asked to do (JSON on its stdin).
#[derive(serde::Serialize, serde::Deserialize)]
struct SmokeRequest {
    snapshot: Snapshot,
    selected: GpuFilter,
    timeout_ms: u64,
}

/// Runs the GPU smoke tests on this machine's GPUs (the `--gpu` selection) within `timeout_s`
/// (what is left of `--timeout` after the probes), in a sacrificial `gpudoctor __smoke`: a
/// driver that crashes or exits during them becomes a failed smoke run naming the call.
fn run_smoke(
    snap: &Snapshot,
    filter: &GpuFilter,
    timeout_s: f64,
) -> crate::snapshot::Probed<crate::snapshot::SmokeRun> {
    use crate::snapshot::{GpuCallError, Probed, SmokeRun};
    // Without libcuda there is nothing to run; say why in the probe's own words.
    if let Some(why) = snap.driver.libcuda.reason() {
        if !snap.driver.libcuda.is_found() {
            return Probed::absent_code("no_driver", format!("not run: {why}"));
        }
    }
    let limit = Duration::from_secs_f64(timeout_s);
    let Ok(exe) = std::env::current_exe() else {
        return smoke_here(snap, filter, limit);
    };
    // The child keeps a little of the time to start and to print its answer.
    let inner = limit
        .saturating_sub(Duration::from_millis(300))
        .max(Duration::from_millis(100));
    let req = SmokeRequest {
        snapshot: snap.clone(),
        selected: filter.clone(),
        timeout_ms: inner.as_millis() as u64,
    };
    let input = match serde_json::to_vec(&req) {
        Ok(v) => v,
        Err(e) => return Probed::failed(format!("internal: the smoke request: {e}")),
    };
    let started = std::time::Instant::now();
    match probe::sacrificial::run::<Probed<SmokeRun>>(&exe, &["__smoke"], Some(input), limit) {
        Ok(r) => r,
        Err(f) => {
            let call = f.at.clone().unwrap_or_else(|| "cuInit".to_string());
            Probed::found(SmokeRun {
                error: Some(GpuCallError {
                    call,
                    code: None,
                    name: if f.timed_out {
                        String::new()
                    } else {
                        "HELPER_CRASHED".into()
                    },
                    message: f.describe("the smoke-test process (libcuda)"),
                }),
                millis: started.elapsed().as_millis() as u64,
                ..Default::default()
            })
        }
    }
}

/// The smoke tests in this process.
fn smoke_here(
    snap: &Snapshot,
    filter: &GpuFilter,
    timeout: Duration,
) -> crate::snapshot::Probed<crate::snapshot::SmokeRun> {
    use crate::gpu::smoke::{self, SmokeOptions};
    let cudnn = snap
        .cudnn_list()
        .iter()
        .find(|c| c.version.is_found())
        .and_then(|c| {
            Some((
                std::env::current_exe().ok()?,
                std::path::PathBuf::from(&c.path),
            ))
        });
    let opts = SmokeOptions {
        timeout,
        nvml_gpus: snap
            .gpu_list()
            .iter()
            .map(|g| (g.index, g.pci_bus_id.get().cloned()))
            .collect(),
        selected: filter.clone(),
        cudnn,
    };
    smoke::run(
        std::sync::Arc::new(crate::gpu::cuda::CudaBackend::for_snapshot(snap)),
        &opts,
    )
}

/// `gpudoctor __smoke`: the child side of [`run_smoke`].
fn smoke_child() -> Output {
    crate::probe::breadcrumb::enable();
    let mut text = String::new();
    if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
        return Output::tool_error(format!("__smoke: could not read the request: {e}"));
    }
    let req: SmokeRequest = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(e) => return Output::tool_error(format!("__smoke: a bad request: {e}")),
    };
    let r = smoke_here(
        &req.snapshot,
        &req.selected,
        Duration::from_millis(req.timeout_ms),
    );
    match serde_json::to_string(&r) {
        Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
        Err(e) => Output::tool_error(e.to_string()),
    }
}

/// `gpudoctor __probe-nvml`: the NVML probe in a sacrificial child of `check`.
fn probe_nvml(deep: bool) -> Output {
    crate::probe::breadcrumb::enable();
    let r = crate::probe::nvml::probe(std::sync::Arc::default(), deep);
    match serde_json::to_string(&r) {
        Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
        Err(e) => Output::tool_error(e.to_string()),
    }
}

/// `gpudoctor stress`: probe (for the GPU list and the driver), stress every selected GPU with
/// a live view, then the report and exit status of `check` (130 / 143 when interrupted).
fn stress(a: StressArgs) -> Output {
    use crate::gpu::stress::{self as st, StressOptions};
    use crate::render::stress_live::{Bars, JsonLines, PlainLines, Sink};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // Arguments first, before touching the machine.
    let seconds = match (a.minutes, a.seconds) {
        (Some(m), _) => m * 60.0,
        (None, Some(s)) => s,
        (None, None) => 300.0,
    };
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 7.0 * 24.0 * 3600.0) {
        return Output::tool_error(format!(
            "the duration must be more than 0 and at most 7 days (got {seconds} s): use --minutes N or --seconds N"
        ));
    }
    if !(a.memory_fraction.is_finite()
        && (0.1..=st::MAX_MEMORY_FRACTION).contains(&a.memory_fraction))
    {
        return Output::tool_error(format!(
            "--memory-fraction must be between 0.1 and {max} (got {}): the last {}% of the free memory is left for the driver and cuBLAS (kernels loaded at first use under CUDA's lazy loading, cuBLAS's workspace), which would otherwise fail with out-of-memory mid-run; {max} is the default",
            a.memory_fraction,
            ((1.0 - st::MAX_MEMORY_FRACTION) * 100.0).round(),
            max = st::MAX_MEMORY_FRACTION,
        ));
    }
    let mut tests = (false, false);
    for t in a.tests.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match t {
            "memory" => tests.0 = true,
            "compute" => tests.1 = true,
            other => {
                return Output::tool_error(format!(
                    "unknown test '{}' in --tests: use memory, compute or memory,compute",
                    crate::sanitize::clean_line(other, 40)
                ))
            }
        }
    }
    if !(tests.0 || tests.1) {
        return Output::tool_error("--tests names no test: use memory, compute or memory,compute");
    }
    if a.inject_faults > st::MAX_LOG {
        return Output::tool_error(format!(
            "--inject-faults takes at most {} flips",
            st::MAX_LOG
        ));
    }
    let policy = match a.policy.policy.as_deref().map(crate::policy::Policy::load) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return Output::tool_error(e),
    };
    let matrix = match load_matrix(None) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    let sim = crate::gpu::sim::SimBackend::from_env();
    let mut snap = if sim.is_some() {
        Snapshot::empty()
    } else {
        probe::probe_all(&ProbeOptions::default())
    };
    let nvml_gpus: Vec<(u32, Option<String>)> = match &sim {
        Some(b) => (0..b.count)
            .map(|i| (i, Some(crate::gpu::sim::SimBackend::bus_id(i))))
            .collect(),
        None => snap
            .gpu_list()
            .iter()
            .map(|g| (g.index, g.pci_bus_id.get().cloned()))
            .collect(),
    };
    let selected = match &a.gpu {
        None => None,
        Some(list) if sim.is_some() => {
            let mut v = Vec::new();
            for part in list.split(',') {
                match part.trim().parse::<u32>() {
                    Ok(i) => v.push(i),
                    Err(_) => {
                        return Output::tool_error(format!(
                            "--gpu: '{}' is not a GPU index",
                            crate::sanitize::clean_line(part, 40)
                        ))
                    }
                }
            }
            Some(v)
        }
        Some(list) => match gpu_filter(Some(list), &snap) {
            Ok(f) => f,
            Err(e) => return Output::tool_error(e),
        },
    };
    let done = Arc::new(AtomicBool::new(false));
    let stop = crate::interrupt::watch(done.clone());
    let opts = StressOptions {
        duration: Duration::from_secs_f64(seconds),
        memory: tests.0,
        compute: tests.1,
        memory_fraction: a.memory_fraction,
        inject_faults: a.inject_faults,
        nvml_gpus,
        selected,
        stop,
        grace: Duration::from_millis(1500),
    };
    let format = if a.json { StressFormat::Json } else { a.format };
    let mut sink: Box<dyn Sink> = match format {
        StressFormat::Jsonl => Box::new(JsonLines(crate::outguard::writer())),
        StressFormat::Human if std::io::stderr().is_terminal() => Box::new(Bars::new()),
        _ => Box::new(PlainLines::new(std::io::stderr(), Duration::from_secs(10))),
    };
    let (backend, monitor): (
        Arc<dyn crate::gpu::Backend>,
        Option<Box<dyn crate::gpu::stress::Monitor>>,
    ) = match sim {
        // GPUDOCTOR_SIM_NVML=1: the simulated GPUs with the real NVML watch (the stand-in
        // libnvidia-ml in tests), so NVML's failures meet a running stress loop.
        Some(b) if std::env::var("GPUDOCTOR_SIM_NVML").as_deref() == Ok("1") => {
            (Arc::new(b), open_watch(Duration::from_secs(5), &opts.stop))
        }
        Some(b) => {
            let m = crate::gpu::sim::SimMonitor::new(&b.faults);
            (Arc::new(b), Some(Box::new(m)))
        }
        None => (
            Arc::new(crate::gpu::cuda::CudaBackend::for_snapshot(&snap)),
            open_watch(Duration::from_secs(5), &opts.stop),
        ),
    };
    let mut result = st::run(backend, &opts, monitor, &mut |e| sink.event(e));
    sink.finish();
    done.store(true, Ordering::SeqCst);
    let signal = crate::interrupt::received();
    result.interrupted_by = signal.map(|s| {
        if s == 15 {
            "SIGTERM".to_string()
        } else {
            "SIGINT".to_string()
        }
    });
    snap.stress = Some(result);
    let sel = Selection {
        only: vec!["stress.".into()],
        skip: Vec::new(),
    };
    let opts = match policy_options(policy.as_ref(), a.policy.node_class.as_deref(), &snap, None) {
        Ok(x) => x,
        Err(e) => return Output::tool_error(e),
    };
    let report = judge(snap, &matrix, &opts, &sel, &None, policy.as_ref());
    let fail_on = fail_severity(a.fail_on);
    let status = match signal {
        Some(15) => ExitStatus::Terminated,
        Some(_) => ExitStatus::Interrupted,
        None if report.unfit(fail_on) => ExitStatus::Unfit,
        None => ExitStatus::Healthy,
    };
    let text = match format {
        StressFormat::Human => render::human::render(
            &report,
            &HumanOptions {
                color: use_color(a.color),
                all_facts: true,
                gpus: None,
                areas: Some(vec![crate::report::Area::Stress]),
            },
        ),
        StressFormat::Json => match render::json::render(&report) {
            Ok(s) => s,
            Err(e) => return Output::tool_error(format!("could not write the JSON report: {e}")),
        },
        StressFormat::Jsonl => {
            let v = serde_json::json!({"event": "report", "report": report});
            format!("{v}\n")
        }
        StressFormat::Prometheus => render::prometheus::render(&report),
        StressFormat::Junit => {
            render::junit::render(&report, &selected_rules(&sel), fail_on, "gpudoctor stress")
        }
        StressFormat::Line => render::line::render(&report),
    };
    Output::ok(text, status)
}

/// NVML for the stress watch, opened on a thread under `limit` and then run on a thread of its
/// own ([`crate::gpu::watch`]): a hung driver costs the watch, never the run.
/// Opens the NVML watch within `limit`, or sooner when `stop` is set (SIGINT / SIGTERM while
/// NVML hangs in its init or event registration must still be answered at once).
fn open_watch(
    limit: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<Box<dyn crate::gpu::stress::Monitor>> {
    use crate::gpu::watch::{DeadMonitor, ThreadedMonitor};
    use crate::probe::deadline::{self, Outcome};
    let p = deadline::spawn("nvml-watch", crate::probe::nvml_watch::NvmlMonitor::open);
    let r = p.wait_unless(std::time::Instant::now() + limit, stop);
    if stop.load(std::sync::atomic::Ordering::SeqCst) && matches!(r.0, Outcome::TimedOut) {
        return Some(Box::new(DeadMonitor(
            "interrupted while NVML was opening (it had not answered): nothing was watched".into(),
        )));
    }
    match r {
        (Outcome::Done(Some(m)), _) => Some(Box::new(ThreadedMonitor::start(Box::new(m)))),
        (Outcome::Done(None), _) => None,
        (Outcome::TimedOut, took) => Some(Box::new(DeadMonitor(format!(
            "NVML did not answer within {} s (nvmlInit or event registration hung): temperatures, clocks, ECC and Xid events were not watched",
            took.as_secs()
        )))),
        (Outcome::Panicked(e), _) => Some(Box::new(DeadMonitor(format!(
            "NVML failed while opening the watch ({e}): nothing was watched"
        )))),
    }
}

fn snapshot(a: SnapshotArgs) -> Output {
    let opts = match probe_options(&a.probe) {
        Ok(o) => o,
        Err(e) => return Output::tool_error(e),
    };
    if let Some(out) = &a.output {
        if out.exists() && !a.force {
            return Output::tool_error(format!(
                "{} already exists; choose another file or add --force to overwrite it",
                out.display()
            ));
        }
    }
    let mut snap = probe::probe_all(&opts);
    if a.redact {
        crate::redact::redact(&mut snap, std::env::var("HOME").ok().as_deref());
    }
    let json = match serde_json::to_string_pretty(&snap) {
        Ok(j) => j + "\n",
        Err(e) => return Output::tool_error(format!("could not write the snapshot: {e}")),
    };
    match &a.output {
        Some(path) => match write_new(path, &json, a.force) {
            Ok(()) => Output {
                stdout: String::new(),
                stderr: format!("gpudoctor: snapshot written to {}\n", path.display()),
                status: ExitStatus::Healthy,
            },
            Err(e) => Output::tool_error(format!("cannot write {}: {e}", path.display())),
        },
        None => Output::ok(json, ExitStatus::Healthy),
    }
}

/// Writes through a temporary file in the same directory, so a failed write leaves nothing
/// half-written, and never replaces an existing file unless `force`.
fn write_new(path: &Path, text: &str, force: bool) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.gpudoctor-{}", std::process::id()));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    let r = if force {
        std::fs::rename(&tmp, path)
    } else {
        // hard_link fails if the target exists: no race with a file created meanwhile.
        std::fs::hard_link(&tmp, path)
    };
    let _ = std::fs::remove_file(&tmp).or_else(|e| if force { Ok(()) } else { Err(e) });
    r
}

fn list_rules(a: RulesArgs) -> Output {
    let docs: Vec<rules::RuleDoc> = rules::all().into_iter().map(|r| r.doc).collect();
    if a.json {
        let v: Vec<serde_json::Value> = docs
            .iter()
            .map(|d| {
                serde_json::json!({"id": d.id, "category": d.category.as_str(), "summary": d.summary,
                                   "what": d.what, "why": d.why, "fix": d.fix})
            })
            .collect();
        return match serde_json::to_string_pretty(&v) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    let w = docs.iter().map(|d| d.id.len()).max().unwrap_or(0);
    let c = docs
        .iter()
        .map(|d| d.category.as_str().len())
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for d in &docs {
        s.push_str(&format!(
            "{:w$}  {:c$}  {}\n",
            d.id,
            d.category.as_str(),
            d.summary
        ));
    }
    Output::ok(s, ExitStatus::Healthy)
}

fn probe_lib(kind: &str, target: &str) -> Output {
    let Some(k) = libquery::LibKind::parse(kind) else {
        return Output::tool_error(format!("__probe-lib: unknown kind {kind:?}"));
    };
    let ans = libquery::helper_answer(k, target);
    match serde_json::to_string(&ans) {
        Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
        Err(e) => Output::tool_error(e.to_string()),
    }
}

fn recommend(a: RecommendArgs) -> Output {
    let opts = match probe_options(&a.probe) {
        Ok(o) => o,
        Err(e) => return Output::tool_error(e),
    };
    let mut parsed = Vec::new();
    for raw in &a.assume {
        match assume::parse(raw) {
            Ok(kv) => parsed.push(kv),
            Err(e) => return Output::tool_error(e.0),
        }
    }
    let matrix = match load_matrix(a.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    let mut snap = if a.no_probe {
        Snapshot::empty()
    } else {
        probe::probe_all(&opts)
    };
    for (k, v) in parsed {
        if let Err(e) = assume::apply(&mut snap, &matrix, &k, &v) {
            return Output::tool_error(e.0);
        }
    }
    let only = a.framework.map(|f| match f {
        FrameworkChoice::Torch => "torch",
        FrameworkChoice::Tensorflow => "tensorflow",
        FrameworkChoice::Jax => "jax",
    });
    let r = crate::recommend::recommend(&snap, &matrix, only);
    if a.json {
        return match serde_json::to_string_pretty(&r) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    Output::ok(crate::recommend::render(&r), ExitStatus::Healthy)
}

fn matrix_command(c: MatrixCommand) -> Output {
    match c {
        MatrixCommand::Show { matrix, json } => {
            let m = match load_matrix(matrix.as_deref()) {
                Ok(m) => m,
                Err(e) => return Output::tool_error(e),
            };
            let counts = m.counts();
            if json {
                let v = serde_json::json!({
                    "schema": crate::matrix::MATRIX_SCHEMA,
                    "data_version": m.data_version,
                    "source": m.source,
                    "rows": counts.iter().map(|(k, n)| (k.to_string(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
                });
                return match serde_json::to_string_pretty(&v) {
                    Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
                    Err(e) => Output::tool_error(e.to_string()),
                };
            }
            let mut s = format!(
                "gpudoctor compatibility matrix ({})\ndata version: {}\nfrom: {}\n\n",
                crate::matrix::MATRIX_SCHEMA,
                m.data_version,
                m.source
            );
            for (k, n) in counts {
                s.push_str(&format!("  {k:<22} {n:>4} rows\n"));
            }
            Output::ok(s, ExitStatus::Healthy)
        }
        MatrixCommand::Validate { file } => match Matrix::from_path(&file) {
            Ok(m) => {
                let total: usize = m
                    .counts()
                    .iter()
                    .filter(|(k, _)| *k != "pytorch variants")
                    .map(|(_, n)| n)
                    .sum();
                Output::ok(
                    format!(
                        "{}: valid ({total} rows, data version {})\n",
                        file.display(),
                        m.data_version
                    ),
                    ExitStatus::Healthy,
                )
            }
            Err(errs) => Output {
                stdout: String::new(),
                stderr: errs.iter().map(|e| format!("{e}\n")).collect(),
                status: ExitStatus::ToolFailed,
            },
        },
        MatrixCommand::Path { matrix } => {
            let line = match matrix {
                Some(p) => format!("{} (--matrix or GPUDOCTOR_MATRIX)", p.display()),
                None => match crate::matrix_update::cached_path() {
                    Some(p) if p.is_file() => {
                        format!("{} (installed by matrix update)", p.display())
                    }
                    Some(p) => format!(
                        "embedded (built into gpudoctor; matrix update would install {})",
                        p.display()
                    ),
                    None => "embedded (built into gpudoctor)".to_string(),
                },
            };
            Output::ok(line + "\n", ExitStatus::Healthy)
        }
        MatrixCommand::Update { from, sha256 } => {
            let Some(dir) = crate::matrix_update::cache_dir() else {
                return Output::tool_error(
                    "no cache directory: set HOME, XDG_CACHE_HOME or GPUDOCTOR_CACHE_DIR",
                );
            };
            match crate::matrix_update::update(&from, sha256.as_deref(), &dir) {
                Ok(u) => Output {
                    stdout: format!(
                        "installed matrix {} (sha256 {}) as {}{}\n",
                        u.matrix.data_version,
                        u.sha256,
                        u.path.display(),
                        u.previous
                            .map(|p| format!("; the previous one is kept as {}", p.display()))
                            .unwrap_or_default()
                    ),
                    stderr: String::new(),
                    status: ExitStatus::Healthy,
                },
                Err(e) => Output::tool_error(e),
            }
        }
    }
}

fn explain(a: ExplainArgs) -> Output {
    use crate::explain::catalog::Catalog;
    use crate::explain::{explain_with, logscan, render, EXPLAIN_SCHEMA};
    let matrix = match load_matrix(a.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    let loaded;
    let catalog: &Catalog =
        match &a.catalog {
            Some(p) => match Catalog::load(p) {
                Ok(c) => {
                    loaded = c;
                    &loaded
                }
                Err(e) => {
                    return Output::tool_error(format!(
                        "the explain catalog {} is not valid:\n{}",
                        p.display(),
                        e.join("\n")
                    ))
                }
            },
            None => match crate::explain::embedded_catalog() {
                Some(c) => c,
                None => return Output::tool_error(
                    "internal error: the built-in explain catalog does not load; please report it",
                ),
            },
        };
    if a.list {
        let mut s = format!(
            "{} signatures (catalog {}, {}):\n",
            catalog.signatures.len(),
            catalog.version,
            catalog.source
        );
        for g in &catalog.signatures {
            s.push_str(&format!(
                "  {:<28} {:<26} {}\n",
                g.id,
                g.category.as_str(),
                g.name
            ));
        }
        return Output::ok(s, ExitStatus::Healthy);
    }
    if let Some(id) = &a.rule {
        let Some(d) = rules::doc(id) else {
            let ids: Vec<&str> = rules::all().iter().map(|r| r.doc.id).collect();
            return Output::tool_error(format!(
                "no rule {id:?}; the rules are: {}",
                ids.join(", ")
            ));
        };
        if a.json {
            let v = serde_json::json!({"schema": EXPLAIN_SCHEMA, "input": id, "matches": [{
                "kind": "rule", "code": d.id, "name": d.summary, "category": d.category.as_str(),
                "meaning": d.what, "likely_causes": [d.why], "fix": {"text": d.fix, "commands": []}, "confidence": "high"}]});
            return match serde_json::to_string_pretty(&v) {
                Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
                Err(e) => Output::tool_error(e.to_string()),
            };
        }
        return Output::ok(
            format!(
                "{} ({})\n{}\n\nWhat it does: {}\nWhy: {}\nFix: {}\n",
                d.id,
                d.category.as_str(),
                d.summary,
                d.what,
                d.why,
                d.fix
            ),
            ExitStatus::Healthy,
        );
    }
    let (mut matches, label, input_json, lines) = if let Some(path) = &a.log {
        let result = if path.as_os_str() == "-" {
            logscan::scan_with(std::io::stdin().lock(), &matrix, catalog)
        } else {
            match std::fs::File::open(path) {
                Ok(f) => logscan::scan_with(f, &matrix, catalog),
                Err(e) => {
                    return Output::tool_error(format!(
                        "cannot read the log {}: {e}",
                        path.display()
                    ))
                }
            }
        };
        match result {
            Ok(r) => (
                r.matches,
                path.display().to_string(),
                serde_json::json!({"log": path.display().to_string(), "lines": r.lines, "bytes": r.bytes}),
                Some(r.lines),
            ),
            Err(e) => return Output::tool_error(format!("reading {} failed: {e}", path.display())),
        }
    } else {
        let mut text = a.input.join(" ");
        if a.input.is_empty() {
            // A traceback does not fit in one quoted argument: read the paste from stdin.
            if std::io::stdin().is_terminal() {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "Paste the error (a whole traceback or log is fine), then press Ctrl-D (Ctrl-Z Enter on Windows):"
                );
            }
            let mut buf = Vec::new();
            use std::io::Read;
            if let Err(e) = std::io::stdin().lock().take(64 << 20).read_to_end(&mut buf) {
                return Output::tool_error(format!("could not read standard input: {e}"));
            }
            text = String::from_utf8_lossy(&buf).into_owned();
        }
        if text.trim().is_empty() {
            return Output::tool_error("give a code or a message to explain (or paste it on standard input), --log FILE, or --rule RULE_ID (e.g. gpudoctor explain -1073740791)");
        }
        (
            explain_with(&text, &matrix, catalog),
            format!("{:?}", crate::sanitize::clean_line(&text, 80)),
            serde_json::json!(text),
            None,
        )
    };
    if a.with_check {
        let snap = match &a.snapshot {
            Some(p) => match read_snapshot(p) {
                Ok(s) => s,
                Err(e) => return Output::tool_error(e),
            },
            None => probe::probe_all(&ProbeOptions::default()),
        };
        let report = evaluate(
            snap,
            &matrix,
            &RuleOptions::default(),
            &Selection::default(),
        );
        join_with_machine(&mut matches, &report);
    }
    if a.json {
        let v =
            serde_json::json!({"schema": EXPLAIN_SCHEMA, "input": input_json, "matches": matches});
        return match serde_json::to_string_pretty(&v) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    Output::ok(render(&label, &matches, lines), ExitStatus::Healthy)
}

/// Categories that the same underlying problem shows under in `check`.
fn related(c: crate::report::Category) -> Vec<crate::report::Category> {
    use crate::report::Category as C;
    match c {
        C::DriverTooOld | C::ArchUnsupported => vec![C::DriverTooOld, C::ArchUnsupported],
        C::CudnnMismatch | C::CudaRuntimeMismatch | C::LibraryPathConflict => vec![
            C::CudnnMismatch,
            C::CudaRuntimeMismatch,
            C::LibraryPathConflict,
        ],
        C::DriverMissing | C::ContainerNoGpu => vec![C::DriverMissing, C::ContainerNoGpu],
        C::WindowsCrashCode => vec![
            C::CudnnMismatch,
            C::CudaRuntimeMismatch,
            C::DriverTooOld,
            C::GpuMemoryExhausted,
            C::CpuOnlyBuild,
        ],
        other => vec![other],
    }
}

/// `--with-check`: what this machine shows about each explained problem.
fn join_with_machine(matches: &mut [crate::explain::Match], report: &Report) {
    for m in matches.iter_mut() {
        let cats = related(m.category);
        for f in report
            .findings
            .iter()
            .filter(|f| cats.contains(&f.category))
        {
            let mut line = format!("{} {}", f.title, f.detail);
            if !f.fix.text.is_empty() {
                line.push_str(&format!(" Fix: {}", f.fix.text));
                if let Some(c) = f.fix.commands.first() {
                    line.push_str(&format!(" `{c}`"));
                }
            }
            m.machine.push(line);
        }
        if m.machine.is_empty() && m.category != crate::report::Category::ApplicationError {
            // Without a driver, "no problem found" would be false comfort.
            let no_driver = report
                .findings
                .iter()
                .any(|f| f.category == crate::report::Category::DriverMissing);
            m.machine.push(if no_driver {
                "this machine has no working NVIDIA driver, so it cannot show this problem now; run the explanation where the error happened.".to_string()
            } else {
                format!(
                    "gpudoctor check finds no {} problem on this machine now.",
                    m.category.as_str()
                )
            });
        }
    }
}
