//! `gpudoctor check`.

use std::time::Duration;

use super::children::run_smoke;
use super::config::{CheckConfig, Source};
use super::Output;
use super::*;
use crate::cli::Format;
use crate::render::{self, human::HumanOptions, progress::Activity};
use crate::report::ExitStatus;
use crate::snapshot::{Probed, SmokeRun};

/// Less than this left of the deadline after the probes, and the smoke tests are not started.
const SMOKE_AT_LEAST: Duration = Duration::from_millis(250);

pub(crate) fn check(a: crate::cli::CheckArgs) -> Output {
    // The command line, resolved once: this starts the run's one deadline.
    let cfg = match CheckConfig::resolve(a) {
        Ok(c) => c,
        Err(e) => return Output::tool_error(e),
    };
    run(&cfg).unwrap_or_else(Output::tool_error)
}

fn run(cfg: &CheckConfig) -> Result<Output, String> {
    // On a terminal, say what is taking time (a --deep import can take many seconds).
    let activity = (cfg.source == Source::Probe).then(|| Activity::start(&progress_message(cfg)));
    // The matrix is parsed while the machine is probed (it took 5-9 ms before the probes started).
    let (matrix, snap) = std::thread::scope(|s| {
        let loading = s.spawn(|| {
            let m = load_matrix(cfg.matrix.as_deref());
            crate::probe::trace::line("matrix loaded");
            m
        });
        let snap = machine(cfg);
        let matrix = loading
            .join()
            .unwrap_or_else(|_| Err("internal: loading the matrix failed".to_string()));
        (matrix, snap)
    });
    let matrix = matrix?;
    let (snap, filter) = completed_machine(cfg, snap?, &matrix, activity.as_ref())?;
    drop(activity);
    let opts = policy_options(
        cfg.policy.as_ref(),
        cfg.node_class.as_deref(),
        &snap,
        cfg.expect_gpus,
    )?;
    let report = judge(
        snap,
        &matrix,
        &opts,
        &cfg.selection,
        &filter,
        cfg.policy.as_ref(),
        crate::report::LEFT_OUT_BY_FLAGS,
    );
    crate::probe::trace::line("rules judged");
    let status = if report.unfit(cfg.fail_on) {
        ExitStatus::Unfit
    } else {
        ExitStatus::Healthy
    };
    Ok(Output::ok(render(cfg, &report, filter)?, status))
}

/// The snapshot to judge: probed, read from a file, or only assumed.
fn machine(cfg: &CheckConfig) -> Result<Snapshot, String> {
    Ok(match &cfg.source {
        Source::File(path) => read_snapshot(path)?,
        Source::Assumed => Snapshot::empty(),
        Source::Probe => probe::probe_all(&cfg.probe.options),
    })
}

/// The snapshot with `--assume` applied and the smoke tests run, and the GPUs `--gpu` selects.
fn completed_machine(
    cfg: &CheckConfig,
    mut snap: Snapshot,
    matrix: &Matrix,
    activity: Option<&Activity>,
) -> Result<(Snapshot, GpuFilter), String> {
    apply_assumptions(&mut snap, matrix, &cfg.assume)?;
    let filter = gpu_selection(cfg.gpus.as_deref(), &snap)?;
    if cfg.source == Source::Probe {
        snap.smoke = smoke(cfg, &snap, &filter, activity);
    }
    Ok((snap, filter))
}

fn progress_message(cfg: &CheckConfig) -> String {
    let secs = cfg.probe.timeout_secs;
    if cfg.probe.options.deep {
        format!("Probing this machine and importing each framework (--deep; at most {secs} s)")
    } else {
        format!("Probing this machine (at most {secs} s)")
    }
}

/// The smoke tests, within what the probes left of the run's one deadline.
fn smoke(
    cfg: &CheckConfig,
    snap: &Snapshot,
    filter: &GpuFilter,
    activity: Option<&Activity>,
) -> Probed<SmokeRun> {
    if !cfg.smoke {
        return Probed::absent_code("skipped", "skipped (--no-smoke)");
    }
    crate::probe::trace::line("smoke start");
    if let Some(act) = activity {
        act.say("Running the GPU smoke tests");
    }
    let deadline = cfg.probe.deadline();
    let r = if deadline.remaining() < SMOKE_AT_LEAST {
        Probed::absent_code(
            "no_time",
            format!(
                "not run: the probes used the whole --timeout of {} s",
                cfg.probe.timeout_secs
            ),
        )
    } else {
        run_smoke(snap, filter, deadline)
    };
    crate::probe::trace::line("smoke done");
    r
}

/// The report in the format asked for.
fn render(cfg: &CheckConfig, report: &Report, filter: GpuFilter) -> Result<String, String> {
    Ok(match cfg.format {
        Format::Human => render::human::render(
            report,
            &HumanOptions {
                color: cfg.color,
                all_facts: cfg.verbose,
                gpus: filter,
                areas: None,
            },
        ),
        Format::Json => render::json::render(report)
            .map_err(|e| format!("could not write the JSON report: {e}"))?,
        // Written to be pasted into a bug report: redacted as `snapshot --redact` is.
        Format::Markdown => {
            let mut shared = report.clone();
            crate::redact::redact_report(&mut shared, crate::redact::home_dir().as_deref());
            render::markdown::render(&shared, &filter)
        }
        Format::Prometheus => render::prometheus::render(report),
        Format::Junit => render::junit::render(
            report,
            &selected_rules(&cfg.selection),
            cfg.fail_on,
            "gpudoctor check",
        ),
        Format::Line => render::line::render(report),
    })
}
