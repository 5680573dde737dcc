//! The hidden subcommands gpudoctor runs as sacrificial children of `check` (`__probe-lib`,
//! `__probe-nvml`, `__smoke`), and the parent side of the smoke run.

use std::time::Duration;

use super::Output;
use crate::probe::deadline::Deadline;
use crate::probe::{self, libquery};
use crate::render::GpuFilter;
use crate::report::ExitStatus;
use crate::snapshot::Snapshot;

/// What `gpudoctor __smoke` is asked to do (JSON on its stdin).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct SmokeRequest {
    snapshot: Snapshot,
    selected: GpuFilter,
    /// The milliseconds left of the parent's deadline when the request was made (less what the
    /// child keeps to start and to answer): the child's deadline, on the parent's one clock.
    remaining_ms: u64,
}

/// What the child keeps back of the parent's deadline, to start and to print its answer.
const CHILD_MARGIN: Duration = Duration::from_millis(300);
/// The least the child is given, however little is left.
const CHILD_AT_LEAST: Duration = Duration::from_millis(100);

impl SmokeRequest {
    /// A request made now, to end by `deadline` (the run's one deadline).
    fn new(snap: &Snapshot, filter: &GpuFilter, deadline: Deadline) -> SmokeRequest {
        let mut child = deadline.less(CHILD_MARGIN);
        if child.remaining() < CHILD_AT_LEAST {
            child = Deadline::after(CHILD_AT_LEAST);
        }
        SmokeRequest {
            snapshot: snap.clone(),
            selected: filter.clone(),
            remaining_ms: child.remaining_millis(),
        }
    }

    /// In the child: the deadline the parent sent, on this process's clock.
    fn deadline(&self) -> Deadline {
        Deadline::from_remaining_millis(self.remaining_ms)
    }
}

/// Runs the GPU smoke tests on this machine's GPUs (the `--gpu` selection) by `deadline` (the
/// run's one deadline: what the probes left of `--timeout`), in a sacrificial `gpudoctor
/// __smoke`: a driver that crashes or exits during them becomes a failed smoke run naming the
/// call.
pub(crate) fn run_smoke(
    snap: &Snapshot,
    filter: &GpuFilter,
    deadline: Deadline,
) -> crate::snapshot::Probed<crate::snapshot::SmokeRun> {
    use crate::snapshot::{GpuCallError, Probed, SmokeRun};
    // Without libcuda there is nothing to run; say why in the probe's own words.
    if let Some(why) = snap.driver.libcuda.reason() {
        if !snap.driver.libcuda.is_found() {
            return Probed::absent_code("no_driver", format!("not run: {why}"));
        }
    }
    let Ok(exe) = std::env::current_exe() else {
        return smoke_here(snap, filter, deadline);
    };
    let input = match serde_json::to_vec(&SmokeRequest::new(snap, filter, deadline)) {
        Ok(v) => v,
        Err(e) => return Probed::failed(format!("internal: the smoke request: {e}")),
    };
    let started = std::time::Instant::now();
    let limit = deadline.remaining();
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
    deadline: Deadline,
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
        deadline,
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
    let r = smoke_here(&req.snapshot, &req.selected, req.deadline());
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

/// `gpudoctor __probe-lib KIND TARGET`: one library loaded in a sacrificial child. Like
/// `__probe-nvml` it is given no time budget of its own: its parent kills it at the deadline.
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

#[cfg(test)]
#[path = "children_tests.rs"]
mod tests;
