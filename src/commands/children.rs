//! The hidden subcommands gpudoctor runs as sacrificial children of `check` (`__probe-lib`,
//! `__probe-nvml`, `__smoke`), and the parent side of the smoke run.

use std::time::Duration;

use super::Output;
use crate::probe::{self, libquery};
use crate::render::GpuFilter;
use crate::report::ExitStatus;
use crate::snapshot::Snapshot;

/// What `gpudoctor __smoke` is asked to do (JSON on its stdin).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct SmokeRequest {
    snapshot: Snapshot,
    selected: GpuFilter,
    timeout_ms: u64,
}

/// Runs the GPU smoke tests on this machine's GPUs (the `--gpu` selection) within `timeout_s`
/// (what is left of `--timeout` after the probes), in a sacrificial `gpudoctor __smoke`: a
/// driver that crashes or exits during them becomes a failed smoke run naming the call.
pub(crate) fn run_smoke(
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
pub(crate) fn smoke_here(
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
pub(crate) fn smoke_child() -> Output {
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
pub(crate) fn probe_nvml(deep: bool) -> Output {
    crate::probe::breadcrumb::enable();
    let r = crate::probe::nvml::probe(std::sync::Arc::default(), deep);
    match serde_json::to_string(&r) {
        Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
        Err(e) => Output::tool_error(e.to_string()),
    }
}

pub(crate) fn probe_lib(kind: &str, target: &str) -> Output {
    let Some(k) = libquery::LibKind::parse(kind) else {
        return Output::tool_error(format!("__probe-lib: unknown kind {kind:?}"));
    };
    let ans = libquery::helper_answer(k, target);
    match serde_json::to_string(&ans) {
        Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
        Err(e) => Output::tool_error(e.to_string()),
    }
}
