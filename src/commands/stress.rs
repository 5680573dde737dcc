//! `gpudoctor stress`.

use std::io::IsTerminal;
use std::time::Duration;

use super::Output;
use super::*;
use crate::cli::{StressArgs, StressFormat};
use crate::probe::{self, ProbeOptions};
use crate::render::{self, human::HumanOptions};
use crate::report::ExitStatus;
use crate::rules::Selection;
use crate::snapshot::Snapshot;

/// `gpudoctor stress`: probe (for the GPU list and the driver), stress every selected GPU with
/// a live view, then the report and exit status of `check` (130 / 143 when interrupted).
pub(crate) fn stress(a: StressArgs) -> Output {
    use crate::gpu::stress::{self as st, StressOptions};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // Arguments first, before touching the machine.
    let (seconds, tests) = match stress_arguments(&a) {
        Ok(x) => x,
        Err(e) => return Output::tool_error(e),
    };
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
    let nvml_gpus = nvml_gpus(sim.as_ref(), &snap);
    let selected = match &a.gpu {
        None => None,
        Some(list) if sim.is_some() => match simulated_selection(list, &nvml_gpus) {
            Ok(v) => Some(v),
            Err(e) => return Output::tool_error(e),
        },
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
        wddm: wddm_gpus(&snap),
        nvml_gpus,
        selected,
        stop,
        grace: Duration::from_millis(1500),
    };
    let format = if a.json { StressFormat::Json } else { a.format };
    let mut sink = live_sink(format);
    let (backend, monitor) = stress_backend(sim, &snap, &opts.stop);
    let mut result = st::run(backend, &opts, monitor, &mut |e| sink.event(e));
    sink.finish();
    let lost = sink.failed().map(|e| {
        format!(
            "could not write the events to standard output: {}",
            crate::safewrite::describe(e)
        )
    });
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
    let sel = stress_selection();
    let opts = match policy_options(policy.as_ref(), a.policy.node_class.as_deref(), &snap, None) {
        Ok(x) => x,
        Err(e) => return Output::tool_error(e),
    };
    let report = judge(
        snap,
        &matrix,
        &opts,
        &sel,
        &None,
        policy.as_ref(),
        "gpudoctor stress, which judges only the GPUs under load (gpudoctor check runs the rest)",
    );
    let fail_on = fail_severity(a.fail_on);
    let status = stress_status(signal, &report, fail_on);
    let text = match render_stress_report(&report, format, &a, &sel, fail_on) {
        Ok(t) => t,
        Err(e) => return Output::tool_error(e),
    };
    match lost {
        Some(e) => Output::tool_error(e),
        None => Output::ok(text, status),
    }
}

/// 143 after SIGTERM, 130 after SIGINT, else whether the report is fit.
fn stress_status(
    signal: Option<i32>,
    report: &crate::report::Report,
    fail_on: crate::report::Severity,
) -> ExitStatus {
    match signal {
        Some(15) => ExitStatus::Terminated,
        Some(_) => ExitStatus::Interrupted,
        None if report.unfit(fail_on) => ExitStatus::Unfit,
        None => ExitStatus::Healthy,
    }
}

/// The arguments checked before the machine is touched: the duration in seconds and the tests
/// (memory, compute); the error says what to use instead.
fn stress_arguments(a: &StressArgs) -> Result<(f64, (bool, bool)), String> {
    use crate::gpu::stress as st;
    let seconds = match (a.minutes, a.seconds) {
        (Some(m), _) => m * 60.0,
        (None, Some(s)) => s,
        (None, None) => 300.0,
    };
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 7.0 * 24.0 * 3600.0) {
        return Err(format!(
            "the duration must be more than 0 and at most 7 days (got {seconds} s): use --minutes N or --seconds N"
        ));
    }
    if !(a.memory_fraction.is_finite()
        && (0.1..=st::MAX_MEMORY_FRACTION).contains(&a.memory_fraction))
    {
        return Err(format!(
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
                return Err(format!(
                    "unknown test '{}' in --tests: use memory, compute or memory,compute",
                    crate::sanitize::clean_line(other, 40)
                ))
            }
        }
    }
    if !(tests.0 || tests.1) {
        return Err("--tests names no test: use memory, compute or memory,compute".to_string());
    }
    if let Some(Err(e)) = a.gpu.as_deref().map(parse_gpu_list) {
        return Err(e);
    }
    if a.inject_faults > st::MAX_LOG {
        return Err(format!(
            "--inject-faults takes at most {} flips",
            st::MAX_LOG
        ));
    }
    Ok((seconds, tests))
}

/// The GPUs to stress by NVML index, with their PCI bus ids: the simulated ones, or the
/// snapshot's.
fn nvml_gpus(
    sim: Option<&crate::gpu::sim::SimBackend>,
    snap: &Snapshot,
) -> Vec<(u32, Option<String>)> {
    match sim {
        Some(b) => (0..b.count)
            .map(|i| (i, Some(crate::gpu::sim::SimBackend::bus_id(i))))
            .collect(),
        None => snap
            .gpu_list()
            .iter()
            .map(|g| (g.index, g.pci_bus_id.get().cloned()))
            .collect(),
    }
}

/// `--gpu` among the simulated GPUs: indexes only.
fn simulated_selection(
    list: &str,
    nvml_gpus: &[(u32, Option<String>)],
) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for sel in parse_gpu_list(list).unwrap_or_default() {
        match sel {
            GpuSelector::Index(i) if nvml_gpus.iter().any(|(n, _)| *n == i) => v.push(i),
            GpuSelector::Index(i) => {
                return Err(format!(
                    "--gpu {i}: no such GPU here (indexes 0..{})",
                    nvml_gpus.len().saturating_sub(1)
                ))
            }
            GpuSelector::Uuid(u) => {
                return Err(format!(
                    "--gpu: '{}' is not a GPU index (the simulated GPUs are selected by index)",
                    crate::sanitize::clean_line(&u, 40)
                ))
            }
        }
    }
    Ok(v)
}

/// Where the live view goes: JSON lines on stdout, bars on a terminal, else plain lines on
/// stderr every 10 s.
fn live_sink(format: StressFormat) -> Box<dyn crate::render::stress_live::Sink> {
    use crate::render::stress_live::{Bars, JsonLines, PlainLines};
    match format {
        StressFormat::Jsonl => Box::new(JsonLines::new(crate::outguard::writer())),
        StressFormat::Human if std::io::stderr().is_terminal() => Box::new(Bars::new()),
        _ => Box::new(PlainLines::new(std::io::stderr(), Duration::from_secs(10))),
    }
}

/// The GPUs to run on and the NVML watch: the simulated ones (GPUDOCTOR_SIM), or CUDA's.
fn stress_backend(
    sim: Option<crate::gpu::sim::SimBackend>,
    snap: &Snapshot,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (
    std::sync::Arc<dyn crate::gpu::Backend>,
    Option<Box<dyn crate::gpu::stress::Monitor>>,
) {
    use std::sync::Arc;
    match sim {
        // GPUDOCTOR_SIM_NVML=1: the simulated GPUs with the real NVML watch (the stand-in
        // libnvidia-ml in tests), so NVML's failures meet a running stress loop.
        Some(b) if std::env::var("GPUDOCTOR_SIM_NVML").as_deref() == Ok("1") => (
            Arc::new(b),
            crate::gpu::watch::open_nvml(Duration::from_secs(5), stop),
        ),
        Some(b) => {
            let m = crate::gpu::sim::SimMonitor::new(&b.faults);
            (Arc::new(b), Some(Box::new(m)))
        }
        None => (
            Arc::new(crate::gpu::cuda::CudaBackend::for_snapshot(snap)),
            crate::gpu::watch::open_nvml(Duration::from_secs(5), stop),
        ),
    }
}

/// Stress judges its own run (and the policy's expired waivers), nothing else: the other
/// areas are `gpudoctor check`'s.
fn stress_selection() -> Selection {
    Selection {
        only: vec![
            "stress.".into(),
            crate::rules::policy_waiver_expired::RULE.doc.id.into(),
        ],
        skip: Vec::new(),
    }
}

/// The report in the chosen format.
fn render_stress_report(
    report: &crate::report::Report,
    format: StressFormat,
    a: &StressArgs,
    sel: &Selection,
    fail_on: crate::report::Severity,
) -> Result<String, String> {
    Ok(match format {
        StressFormat::Human => render::human::render(
            report,
            &HumanOptions {
                color: use_color(a.color),
                all_facts: true,
                gpus: None,
                // Its own area, and any other a finding is in (an expired waiver's): the
                // summary line counts what is shown.
                areas: Some(
                    std::iter::once(crate::report::Area::Stress)
                        .chain(report.findings.iter().map(|f| f.area))
                        .collect(),
                ),
            },
        ),
        StressFormat::Json => match render::json::render(report) {
            Ok(s) => s,
            Err(e) => return Err(format!("could not write the JSON report: {e}")),
        },
        StressFormat::Jsonl => {
            let v = serde_json::json!({"event": "report", "report": report});
            format!("{v}\n")
        }
        StressFormat::Prometheus => render::prometheus::render(report),
        StressFormat::Junit => {
            render::junit::render(report, &selected_rules(sel), fail_on, "gpudoctor stress")
        }
        StressFormat::Line => render::line::render(report),
    })
}

/// The GPUs (NVML indexes) whose memory test is capped for Windows' WDDM: on Windows, each GPU
/// whose driver model is not known to be TCC or MCDM (GeForce GPUs are always WDDM, and a
/// model NVML could not read is taken to be the usual one). None elsewhere.
fn wddm_gpus(snap: &Snapshot) -> Vec<u32> {
    if !cfg!(windows) {
        return Vec::new();
    }
    snap.gpu_list()
        .iter()
        .filter(|g| !matches!(g.driver_model.as_deref(), Some("TCC") | Some("MCDM")))
        .map(|g| g.index)
        .collect()
}
