//! Renderers: the only code that decides how a report looks (and whether it has colour). Each
//! format is its own file; they all read the same [`Report`] and the per-area view built here.

pub mod human;
pub mod json;
pub mod junit;
pub mod line;
pub mod markdown;
pub mod progress;
pub mod prometheus;
pub mod stress_live;

use crate::report::{Area, Finding, Report};
use crate::snapshot::{unprobed, Probed, Snapshot};
use crate::version::cuda_api_to_string;
use crate::vocab::gib;

/// The doctor mark of an area: decided in the report ([`crate::report::Mark`]).
pub use crate::report::Mark;

/// One doctor line: an area, its mark, a headline, fact lines and its findings.
pub struct AreaView<'a> {
    pub area: Area,
    pub mark: Mark,
    /// Why the mark is `?`, `~` or `-` (from the report).
    pub why: Option<String>,
    pub headline: String,
    pub facts: Vec<String>,
    pub findings: Vec<&'a Finding>,
}

/// Which GPUs to show (`--gpu`); None shows all.
pub type GpuFilter = Option<Vec<u32>>;

/// Builds the per-area view of a report.
pub fn areas<'a>(report: &'a Report, gpus: &GpuFilter) -> Vec<AreaView<'a>> {
    let s = &report.snapshot;
    let statuses = if report.areas.is_empty() {
        // An older report without marks: decide them now, the same way.
        Report::new(
            report.findings.clone(),
            report.snapshot.clone(),
            report.matrix.clone(),
        )
        .areas
    } else {
        report.areas.clone()
    };
    statuses
        .into_iter()
        .map(|status| {
            let area = status.area;
            let findings: Vec<&Finding> =
                report.findings.iter().filter(|f| f.area == area).collect();
            let (headline, facts) = describe(area, s, gpus);
            AreaView {
                area,
                mark: status.status,
                why: status.why,
                headline,
                facts,
                findings,
            }
        })
        .collect()
}

/// "N errors, M warnings in K of N categories." or "No issues found.", then what was waived and
/// what was not checked: a summary never claims more than was checked. K counts the categories
/// shown that hold an error or warning that counts (not waived), whatever their mark (a warning
/// that the matrix is stale leaves the mark at `?`); with one category shown (`stress`) there is
/// nothing to count out of.
pub fn summary_line(report: &Report, views: &[AreaView]) -> String {
    let e = report.summary.errors;
    let w = report.summary.warnings;
    let mut line = if e == 0 && w == 0 {
        "No issues found.".to_string()
    } else {
        let k = views
            .iter()
            .filter(|v| {
                v.findings.iter().any(|f| {
                    f.waived.is_none()
                        && matches!(
                            f.severity,
                            crate::report::Severity::Error | crate::report::Severity::Warning
                        )
                })
            })
            .count();
        let mut parts = Vec::new();
        if e > 0 {
            parts.push(format!("{e} error{}", if e == 1 { "" } else { "s" }));
        }
        if w > 0 {
            parts.push(format!("{w} warning{}", if w == 1 { "" } else { "s" }));
        }
        if views.len() > 1 {
            format!("{} in {k} of {} categories.", parts.join(", "), views.len())
        } else {
            format!("{}.", parts.join(", "))
        }
    };
    if report.summary.waived > 0 {
        line.push_str(&format!(" {} waived.", report.summary.waived));
    }
    let not_checked: Vec<&str> = views
        .iter()
        .filter(|v| v.mark == Mark::NotChecked)
        .map(|v| v.area.title())
        .collect();
    if !not_checked.is_empty() {
        line.push_str(&format!(" Not checked: {}.", not_checked.join(", ")));
    }
    line
}

fn reason<T>(p: &Probed<T>) -> String {
    p.reason().unwrap_or("unknown").to_string()
}

/// (headline, facts); the mark is the report's.
fn describe(area: Area, s: &Snapshot, gpus: &GpuFilter) -> (String, Vec<String>) {
    match area {
        Area::Host => describe_host(s),
        Area::Driver => describe_driver(s),
        Area::Gpus => describe_gpus(s, gpus),
        Area::Cuda => describe_cuda(s),
        Area::Cudnn => describe_cudnn(s),
        Area::Frameworks => describe_frameworks(s),
        Area::Smoke => describe_smoke(s, gpus),
        Area::Stress => describe_stress(s),
        Area::Environment => describe_environment(s),
    }
}

/// The host area: distribution, kernel, architecture, WSL2, container.
fn describe_host(s: &Snapshot) -> (String, Vec<String>) {
    match s.host.get() {
        Some(h) => {
            let mut head = h.distribution.clone().unwrap_or_else(|| h.os.clone());
            if let Some(k) = &h.kernel {
                head.push_str(&format!(", kernel {k}"));
            }
            head.push_str(&format!(", {}", h.arch));
            if h.wsl {
                head.push_str(", WSL2");
            }
            if let Some(c) = &h.container {
                head.push_str(&format!(", inside a {c} container"));
            }
            (head, terms_facts(s))
        }
        None => (format!("unknown ({})", reason(&s.host)), terms_facts(s)),
    }
}

/// The driver area: version and CUDA support, with what NVML, libcuda, the installer and the daemons say.
fn describe_driver(s: &Snapshot) -> (String, Vec<String>) {
    let d = &s.driver;
    let version = d
        .kernel_version()
        .map(str::to_string)
        .or_else(|| d.nvml.get().and_then(|n| n.driver_version.clone()));
    let cuda = d
        .nvml
        .get()
        .and_then(|n| n.cuda_driver_version)
        .or_else(|| d.libcuda.get().and_then(|l| l.cuda_driver_version));
    let mut facts = Vec::new();
    if let Some(k) = d.kernel_module.get() {
        let how = if k.line == "assumed" {
            "assumed"
        } else {
            k.flavor.as_str()
        };
        facts.push(format!("kernel module {} ({how})", k.version));
    }
    match d.nvml.get() {
        Some(n) => facts.push(format!(
            "NVML: driver {}, CUDA {}",
            n.driver_version.as_deref().unwrap_or("?"),
            n.cuda_driver_version
                .map(cuda_api_to_string)
                .unwrap_or_else(|| "?".into())
        )),
        None if !unprobed(&d.nvml) => facts.push(format!("NVML: {}", reason(&d.nvml))),
        None => {}
    }
    match d.libcuda.get() {
        Some(l) => facts.push(format!(
            "libcuda: {}{}",
            l.path.as_deref().unwrap_or("(path unknown)"),
            l.cuda_driver_version
                .map(|v| format!(", supports CUDA {}", cuda_api_to_string(v)))
                .unwrap_or_default()
        )),
        None if !unprobed(&d.libcuda) => facts.push(format!("libcuda: {}", reason(&d.libcuda))),
        None => {}
    }
    match d.install.get() {
        Some(i) => facts.push(install_fact(i)),
        None if !unprobed(&d.install) && d.install.code() != Some("no_driver") => {
            facts.push(format!("installed by: unknown ({})", reason(&d.install)))
        }
        None => {}
    }
    if let Some(ds) = d.daemons.get() {
        let running: Vec<&str> = ds
            .iter()
            .filter(|x| x.running)
            .map(|x| x.name.as_str())
            .collect();
        if !running.is_empty() {
            facts.push(format!("running: {}", running.join(", ")));
        }
    }
    let head = match version {
        Some(v) => {
            let flavor = d
                .kernel_module
                .get()
                .filter(|k| k.flavor != "unknown")
                .map(|k| format!(" ({} kernel module)", k.flavor))
                .unwrap_or_default();
            match cuda {
                Some(c) => format!("{v}{flavor}, supports CUDA {}", cuda_api_to_string(c)),
                None => format!("{v}{flavor}"),
            }
        }
        None if unprobed(&d.kernel_module) && unprobed(&d.nvml) => match cuda {
            Some(c) => format!("supports CUDA {}", cuda_api_to_string(c)),
            None => "not probed".to_string(),
        },
        None => "not found".to_string(),
    };
    (head, facts)
}

/// The GPUs area: the selected GPUs' models, one fact line per GPU.
fn describe_gpus(s: &Snapshot, gpus: &GpuFilter) -> (String, Vec<String>) {
    match s.gpus.get() {
        Some(list) => {
            let shown: Vec<_> = list
                .iter()
                .filter(|g| gpus.as_ref().is_none_or(|sel| sel.contains(&g.index)))
                .collect();
            let facts = shown
                .iter()
                .map(|g| {
                    let mut f = g.label();
                    if let Some(cc) = g.compute_capability.get() {
                        f.push_str(&format!(", compute {cc}"));
                    }
                    if let Some(m) = g.memory.get() {
                        f.push_str(&format!(
                            ", {} ({} free)",
                            gib(m.total_bytes),
                            gib(m.free_bytes)
                        ));
                    }
                    if let Some(t) = g.temperature_c.get() {
                        f.push_str(&format!(", {t} °C"));
                    }
                    if let Some(p) = g.power_w.get() {
                        f.push_str(&format!(", {p:.0} W"));
                    }
                    if let Some(l) = g.pcie.get() {
                        if let (Some(gen), Some(w)) = (l.gen, l.width) {
                            f.push_str(&format!(", PCIe gen{gen} x{w}"));
                        }
                    }
                    if let Some(pb) = g.pci_bus_id.get() {
                        f.push_str(&format!(", {pb}"));
                    }
                    f
                })
                .collect();
            let head = if list.is_empty() {
                "none listed by the driver".to_string()
            } else {
                let mut names: Vec<String> = Vec::new();
                for g in &shown {
                    let n = g
                        .name
                        .get()
                        .cloned()
                        .unwrap_or_else(|| "unknown model".into());
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                if shown.len() == list.len() {
                    format!("{}: {}", list.len(), names.join(", "))
                } else {
                    format!(
                        "{} of {} selected: {}",
                        shown.len(),
                        list.len(),
                        names.join(", ")
                    )
                }
            };
            (head, facts)
        }
        None if unprobed(&s.gpus) => ("not probed".to_string(), Vec::new()),
        None => (format!("unknown: {}", reason(&s.gpus)), Vec::new()),
    }
}

/// The CUDA area: the runtimes found and the toolkits installed.
fn describe_cuda(s: &Snapshot) -> (String, Vec<String>) {
    let rts = s.runtime_list();
    let mut facts: Vec<String> = rts
        .iter()
        .map(|r| {
            let v = r
                .version_string()
                .unwrap_or_else(|| "version unknown".into());
            let full = r
                .full_version
                .as_deref()
                .filter(|f| *f != v)
                .map(|f| format!(" ({f})"))
                .unwrap_or_default();
            let err = match &r.api_version {
                Probed::Failed { error, .. } => format!(" [could not load: {error}]"),
                _ => String::new(),
            };
            format!(
                "runtime {v}{full}: {} [{}]{err}",
                r.path,
                r.origins.join(", ")
            )
        })
        .collect();
    if let Some(tks) = s.cuda.toolkits.get() {
        for t in tks {
            facts.push(format!(
                "toolkit {} at {}{}",
                t.version.as_deref().unwrap_or("?"),
                t.root,
                t.nvcc
                    .get()
                    .map(|n| format!(", nvcc {n}"))
                    .unwrap_or_default()
            ));
        }
    }
    let head = if rts.is_empty() {
        if unprobed(&s.cuda.runtimes) {
            "not probed".to_string()
        } else {
            "no CUDA runtime found".to_string()
        }
    } else {
        let mut vs: Vec<String> = rts.iter().filter_map(|r| r.version_string()).collect();
        vs.dedup();
        format!("runtime {}", vs.join(", "))
    };
    (head, facts)
}

/// The cuDNN area: each libcudnn found, with its version.
fn describe_cudnn(s: &Snapshot) -> (String, Vec<String>) {
    let libs = s.cudnn_list();
    let facts = libs
        .iter()
        .map(|c| {
            let err = match &c.version {
                Probed::Failed { error, .. } => format!(" [could not load: {error}]"),
                _ => String::new(),
            };
            format!(
                "cuDNN {}: {} [{}]{err}",
                c.version_string()
                    .unwrap_or_else(|| "version unknown".into()),
                c.path,
                c.origins.join(", ")
            )
        })
        .collect();
    let head = if libs.is_empty() {
        if unprobed(&s.cudnn) {
            "not probed"
        } else {
            "none found"
        }
        .to_string()
    } else {
        let mut vs: Vec<String> = libs.iter().filter_map(|c| c.version_string()).collect();
        vs.dedup();
        vs.join(", ")
    };
    (head, facts)
}

/// The frameworks area: PyTorch, TensorFlow and JAX in each Python environment.
fn describe_frameworks(s: &Snapshot) -> (String, Vec<String>) {
    let mut facts = Vec::new();
    let mut names = Vec::new();
    for e in s.python_envs() {
        let mut items = Vec::new();
        if let Some(t) = &e.torch {
            let how = match (&t.cuda, &t.hip) {
                (Some(c), _) => format!("CUDA {c}"),
                (None, Some(h)) => format!("ROCm {h}"),
                _ => "CPU only".to_string(),
            };
            items.push(format!("torch {} ({how})", t.version));
            names.push(format!("torch {}", t.version));
        }
        if let Some(tf) = &e.tensorflow {
            let how = match (tf.is_cuda_build, &tf.cuda_version) {
                (Some(true), Some(c)) => format!("CUDA {c}"),
                (Some(false), _) => "CPU only".to_string(),
                _ => "build unknown".to_string(),
            };
            items.push(format!("{} {} ({how})", tf.package, tf.version));
            names.push(format!("tensorflow {}", tf.version));
        }
        for p in e.packages.iter().filter(|p| {
            p.name == "jax"
                || p.name == "jaxlib"
                || p.name.starts_with("jax-cuda")
                || p.name.starts_with("cupy")
        }) {
            items.push(format!("{} {}", p.name, p.version));
            if p.name == "jax" {
                names.push(format!("jax {}", p.version));
            }
        }
        let nv = e
            .packages
            .iter()
            .filter(|p| p.name.starts_with("nvidia-"))
            .count();
        if nv > 0 {
            items.push(format!("{nv} nvidia-* wheels"));
        }
        if let Some(Probed::Found { value }) = &e.deep {
            if let Some(avail) = value
                .pointer("/torch/cuda_available")
                .and_then(|v| v.as_bool())
            {
                items.push(format!("torch.cuda.is_available() = {avail}"));
            }
        }
        if let Some(Probed::Failed { error, .. }) = &e.deep {
            items.push(format!("deep probe failed: {error}"));
        }
        let py = e
            .python_version
            .as_deref()
            .map(|v| format!("Python {v}, "))
            .unwrap_or_default();
        facts.push(format!(
            "{} [{py}{}]: {}",
            e.prefix,
            e.origin,
            if items.is_empty() {
                "no GPU framework".to_string()
            } else {
                items.join(", ")
            }
        ));
    }
    let head = if names.is_empty() {
        if unprobed(&s.python) {
            "not probed".to_string()
        } else {
            format!(
                "no PyTorch, TensorFlow or JAX in {} Python environment(s)",
                s.python_envs().len()
            )
        }
    } else {
        names.join(", ")
    };
    (head, facts)
}

/// The environment area: the GPU-related variables set.
fn describe_environment(s: &Snapshot) -> (String, Vec<String>) {
    let facts: Vec<String> = s
        .env
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "VIRTUAL_ENV" | "CONDA_PREFIX"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let head = if crate::report::env_unprobed(s) {
        "not probed".to_string()
    } else if facts.is_empty() {
        "no GPU-related variables set".to_string()
    } else {
        format!("{} GPU-related variable(s) set", facts.len())
    };
    (head, facts)
}

/// The smoke area: what ran on each GPU, its rates, and steps skipped.
fn describe_smoke(s: &Snapshot, gpus: &GpuFilter) -> (String, Vec<String>) {
    let run = match s.smoke.get() {
        Some(r) => r,
        None => return (reason(&s.smoke).to_string(), Vec::new()),
    };
    if let Some(e) = &run.error {
        return (format!("could not start: {e}"), Vec::new());
    }
    let shown: Vec<_> = run
        .gpus
        .iter()
        .filter(|g| {
            gpus.as_ref()
                .is_none_or(|sel| g.index.is_none_or(|i| sel.contains(&i)))
        })
        .collect();
    let mut facts = Vec::new();
    for g in &shown {
        let label = g.label();
        let mut rates = Vec::new();
        if let (Some(h), Some(d)) = (g.h2d_gbps, g.d2h_gbps) {
            rates.push(format!("H2D {h:.1} GB/s, D2H {d:.1} GB/s"));
        }
        if let Some(x) = g.d2d_gbps {
            rates.push(format!("D2D {x:.0} GB/s"));
        }
        if let Some(x) = g.sgemm_gflops {
            rates.push(format!("SGEMM {x:.0} GFLOP/s"));
        }
        let state = match g.failure() {
            Some(f) => format!("failed at '{}'", f.name),
            None => "passed".to_string(),
        };
        let rates = if rates.is_empty() {
            String::new()
        } else {
            format!("; {}", rates.join(", "))
        };
        facts.push(format!("{label}: {state} in {} ms{rates}", g.millis));
        for st in g
            .steps
            .iter()
            .filter(|st| st.status == crate::snapshot::StepStatus::Skipped)
        {
            if !st.detail.starts_with("not run after") {
                facts.push(format!("{label}: {} skipped: {}", st.name, st.detail));
            }
        }
    }
    let failed = shown.iter().filter(|g| g.failure().is_some()).count();
    let head = if shown.is_empty() {
        "no GPU to test".to_string()
    } else if failed == 0 {
        format!("{} GPU(s) passed in {} ms", shown.len(), run.millis)
    } else {
        format!("{failed} of {} GPU(s) failed", shown.len())
    };
    (head, facts)
}

/// A rate in GB/s with the precision it deserves: "2351 GB/s", "18 GB/s", "2.1 GB/s".
fn gbps(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0} GB/s")
    } else {
        format!("{r:.1} GB/s")
    }
}

/// The pattern test's rate against the device-to-device copy rate measured in the same run:
/// "2351 GB/s (86 % of the 2740 GB/s copy rate)". The test moves data as a copy does, so more
/// than about 1.5 times the copy rate means the reference itself was off (a tiny copy on the
/// simulated GPU, a copy timed while the GPU was busy): then no ratio is shown.
fn memory_rate(m: f64, copy: Option<f64>) -> String {
    match copy {
        Some(c) if c > 0.0 && m / c <= 1.5 => {
            format!(
                "{} ({:.0} % of the {} copy rate)",
                gbps(m),
                100.0 * m / c,
                gbps(c)
            )
        }
        Some(c) if c > 0.0 => format!(
            "{} (the {} copy rate measured as the reference is too low to compare with)",
            gbps(m),
            gbps(c)
        ),
        _ => gbps(m),
    }
}

/// The stress area: per GPU what was tested, the rates, and the watch.
fn describe_stress(s: &Snapshot) -> (String, Vec<String>) {
    let Some(run) = &s.stress else {
        return ("not run".into(), Vec::new());
    };
    if let Some(e) = &run.error {
        return (format!("could not start: {e}"), Vec::new());
    }
    let g2 = |b: u64| b as f64 / (1u64 << 30) as f64;
    let mut facts = Vec::new();
    for g in &run.gpus {
        let label = g.label();
        if run.tests.iter().any(|t| t == "memory") {
            let cov = if g.free_bytes > 0 {
                100.0 * g.tested_bytes as f64 / g.free_bytes as f64
            } else {
                0.0
            };
            let rate = match g.memory_gbps {
                Some(m) => format!(", {}", memory_rate(m, g.copy_gbps)),
                None => String::new(),
            };
            facts.push(format!(
                "{label}: memory {:.2} of {:.2} GiB free ({cov:.1} %), {} round(s), {} error(s){rate}",
                g2(g.tested_bytes),
                g2(g.free_bytes),
                g.memory_rounds,
                g.memory_errors
            ));
        }
        if run.tests.iter().any(|t| t == "compute") {
            let mut f = format!(
                "{label}: compute {} FMA launch(es), {} wrong",
                g.compute_launches, g.compute_errors
            );
            if let Some(r) = g.fma_gflops {
                f.push_str(&format!(", {r:.0} GFLOP/s"));
            }
            if !g.gemm_types.is_empty() {
                let rate = |r: Option<f64>| r.map_or("?".to_string(), |r| format!("{r:.0}"));
                f.push_str(&format!(
                    "; GEMM ({}) {} launch(es), {} wrong element(s), GFLOP/s fp32 {} / fp16 {} / bf16 {}",
                    g.gemm_types.join(", "),
                    g.gemm_launches,
                    g.gemm_errors,
                    rate(g.sgemm_gflops),
                    rate(g.hgemm_gflops),
                    rate(g.bf16_gflops)
                ));
            }
            for why in &g.gemm_skipped {
                f.push_str(&format!("; {why}"));
            }
            facts.push(f);
        }
        let w = &g.watch;
        if w.samples > 0 {
            facts.push(format!(
                "{label}: watch {} sample(s), peak {} °C, {} W, lowest SM clock {} MHz",
                w.samples,
                w.max_temperature_c.map_or("?".into(), |t| t.to_string()),
                w.max_power_w.map_or("?".into(), |p| format!("{p:.0}")),
                w.min_sm_mhz.map_or("?".into(), |c| c.to_string())
            ));
        }
    }
    let head = format!(
        "{} GPU(s), {:.0} of {:.0} s, {}",
        run.gpus.len(),
        run.seconds,
        run.planned_seconds,
        run.tests.join(" + ")
    );
    (head, facts)
}

/// The machine's terms (issue 31) as host facts: os-release, package managers, Secure Boot.
fn terms_facts(s: &Snapshot) -> Vec<String> {
    let mut facts = Vec::new();
    match s.os_release.get() {
        Some(o) => {
            let mut f = format!("os-release: {}", o.id);
            if let Some(v) = &o.version_id {
                f.push_str(&format!(" {v}"));
            }
            if !o.id_like.is_empty() {
                f.push_str(&format!(" (like {})", o.id_like.join(", ")));
            }
            facts.push(f);
        }
        None if !unprobed(&s.os_release) => {
            facts.push(format!("os-release: {}", reason(&s.os_release)))
        }
        None => {}
    }
    match s.package_managers.get() {
        Some(list) if list.is_empty() => facts.push("package managers: none on PATH".to_string()),
        Some(list) => facts.push(format!("package managers: {}", list.join(", "))),
        None if !unprobed(&s.package_managers) => {
            facts.push(format!("package managers: {}", reason(&s.package_managers)))
        }
        None => {}
    }
    match s.secure_boot.get() {
        Some(b) => facts.push(format!(
            "Secure Boot: {} ({})",
            if b.enabled { "on" } else { "off" },
            b.how
        )),
        None if !unprobed(&s.secure_boot) => {
            facts.push(format!("Secure Boot: unknown ({})", reason(&s.secure_boot)))
        }
        None => {}
    }
    facts
}

fn install_fact(i: &crate::snapshot::DriverInstall) -> String {
    let mut parts = Vec::new();
    if let Some(p) = &i.kernel_module {
        parts.push(format!("module from {p}"));
    }
    if let Some(p) = &i.libcuda_package {
        parts.push(format!("libcuda from {p}"));
    }
    match i.dkms {
        Some(true) => parts.push("DKMS".to_string()),
        Some(false) => parts.push("not DKMS".to_string()),
        None => {}
    }
    if parts.is_empty() {
        format!("installed by: {}", i.method)
    } else {
        format!("installed by: {} ({})", i.method, parts.join(", "))
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
