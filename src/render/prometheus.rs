//! `--format prometheus`: the report as Prometheus text exposition for node_exporter's textfile
//! collector (write it to `*.prom` in the collector's directory). Gauges only: the verdict,
//! finding counts by category and severity (every category, zeros included, so alerts need no
//! `absent()`), and per-GPU health, smoke and stress values. A value gpudoctor could not read is
//! left out, never written as 0.
//! Format: https://prometheus.io/docs/instrumenting/exposition_formats/

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::{Category, Report, Severity};

/// Escapes a label value (backslash, double quote, newline).
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => {}
            c => o.push(c),
        }
    }
    o
}

/// Collects samples by metric, so each metric's HELP and TYPE come once, before its samples.
#[derive(Default)]
struct Out {
    metrics: BTreeMap<&'static str, (&'static str, Vec<String>)>,
}

impl Out {
    fn add(&mut self, name: &'static str, help: &'static str, labels: &[(&str, String)], v: f64) {
        if !v.is_finite() {
            return;
        }
        let l: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let line = if l.is_empty() {
            format!("{name} {v}")
        } else {
            format!("{name}{{{}}} {v}", l.join(","))
        };
        self.metrics
            .entry(name)
            .or_insert((help, Vec::new()))
            .1
            .push(line);
    }
    fn text(self) -> String {
        let mut s = String::new();
        for (name, (help, lines)) in self.metrics {
            let _ = writeln!(s, "# HELP {name} {help}");
            let _ = writeln!(s, "# TYPE {name} gauge");
            for l in lines {
                let _ = writeln!(s, "{l}");
            }
        }
        s
    }
}

pub fn render(report: &Report) -> String {
    let mut o = Out::default();
    let r = report;
    add_run(&mut o, r);
    add_finding_counts(&mut o, r);
    add_gpus(&mut o, r);
    add_smoke(&mut o, r);
    add_stress(&mut o, r);
    o.text()
}

/// The run itself: versions, verdict, each area's mark, when it ran.
fn add_run(o: &mut Out, r: &Report) {
    o.add(
        "gpudoctor_info",
        "gpudoctor and compatibility matrix versions (always 1).",
        &[
            ("version", r.tool.version.clone()),
            ("matrix", r.matrix.version.clone()),
        ],
        1.0,
    );
    for v in ["pass", "warn", "fail"] {
        let now = serde_json::to_value(r.verdict).ok();
        let is = now.as_ref().and_then(|x| x.as_str()) == Some(v);
        o.add(
            "gpudoctor_verdict",
            "1 for the verdict of this run (pass, warn or fail), 0 for the others.",
            &[("verdict", v.to_string())],
            if is { 1.0 } else { 0.0 },
        );
    }
    for a in &r.areas {
        o.add(
            "gpudoctor_area_status",
            "The mark of each area, as the human report shows it (status: ok, warning, error, unknown, waived, not_checked); always 1.",
            &[
                ("area", a.area.as_str().to_string()),
                ("status", a.status.as_str().to_string()),
            ],
            1.0,
        );
    }
    if let Some(t) = r.snapshot.taken_at {
        o.add(
            "gpudoctor_last_run_timestamp_seconds",
            "When gpudoctor ran (Unix time).",
            &[],
            t as f64,
        );
    }
}

/// Findings by category and severity (zeros included), and the waived ones.
fn add_finding_counts(o: &mut Out, r: &Report) {
    for c in Category::ALL {
        for s in [Severity::Error, Severity::Warning, Severity::Info] {
            let n = r
                .findings
                .iter()
                .filter(|f| f.category == c && f.severity == s && f.waived.is_none())
                .count();
            o.add(
                "gpudoctor_findings",
                "Findings of this run by category and severity (waived ones not counted).",
                &[
                    ("category", c.as_str().to_string()),
                    ("severity", s.as_str().to_string()),
                ],
                n as f64,
            );
        }
    }
    o.add(
        "gpudoctor_waived_findings",
        "Findings a policy waived (shown, not counted in gpudoctor_findings).",
        &[],
        r.findings.iter().filter(|f| f.waived.is_some()).count() as f64,
    );
}

/// Each GPU's error findings, temperature, power, memory, PCIe link and health.
fn add_gpus(o: &mut Out, r: &Report) {
    for g in r.snapshot.gpu_list() {
        let mut labels = vec![("gpu", g.index.to_string())];
        if let Some(u) = g.uuid.get() {
            labels.push(("uuid", u.clone()));
        }
        if let Some(n) = g.name.get() {
            labels.push(("name", n.clone()));
        }
        let errors = r
            .findings
            .iter()
            .filter(|f| {
                f.gpu == Some(g.index) && f.severity == Severity::Error && f.waived.is_none()
            })
            .count();
        o.add(
            "gpudoctor_gpu_error_findings",
            "Error findings about this GPU.",
            &labels,
            errors as f64,
        );
        if let Some(t) = g.temperature_c.get() {
            o.add(
                "gpudoctor_gpu_temperature_celsius",
                "GPU temperature.",
                &labels,
                f64::from(*t),
            );
        }
        if let Some(p) = g.power_w.get() {
            o.add("gpudoctor_gpu_power_watts", "GPU power draw.", &labels, *p);
        }
        if let Some(m) = g.memory.get() {
            o.add(
                "gpudoctor_gpu_memory_free_bytes",
                "Free GPU memory.",
                &labels,
                m.free_bytes as f64,
            );
            o.add(
                "gpudoctor_gpu_memory_total_bytes",
                "Total GPU memory.",
                &labels,
                m.total_bytes as f64,
            );
        }
        if let Some(l) = g.pcie.get() {
            if let Some(w) = l.width {
                o.add(
                    "gpudoctor_gpu_pcie_link_width",
                    "Current PCIe link width.",
                    &labels,
                    f64::from(w),
                );
            }
            if let Some(x) = l.gen {
                o.add(
                    "gpudoctor_gpu_pcie_link_generation",
                    "Current PCIe link generation.",
                    &labels,
                    f64::from(x),
                );
            }
        }
        if let Some(h) = g.health.get() {
            add_gpu_health(o, h, &labels);
        }
    }
}

/// Each GPU's smoke result and copy rates.
fn add_smoke(o: &mut Out, r: &Report) {
    if let Some(run) = r.snapshot.smoke.get() {
        for g in &run.gpus {
            let labels = vec![("gpu", g.index.unwrap_or(g.ordinal).to_string())];
            o.add(
                "gpudoctor_smoke_passed",
                "1 when every smoke test that ran on this GPU passed.",
                &labels,
                if g.failure().is_none() { 1.0 } else { 0.0 },
            );
            for (name, v) in [
                ("h2d", g.h2d_gbps),
                ("d2h", g.d2h_gbps),
                ("d2d", g.d2d_gbps),
            ] {
                if let Some(v) = v {
                    let mut l = labels.clone();
                    l.push(("direction", name.to_string()));
                    o.add(
                        "gpudoctor_smoke_copy_gbps",
                        "Copy rate measured by the smoke tests, GB/s.",
                        &l,
                        v,
                    );
                }
            }
        }
    }
}

/// Each GPU's stress errors, memory coverage, temperature and FMA rate.
fn add_stress(o: &mut Out, r: &Report) {
    if let Some(run) = &r.snapshot.stress {
        for g in &run.gpus {
            let labels = vec![("gpu", g.index.unwrap_or(g.ordinal).to_string())];
            o.add(
                "gpudoctor_stress_memory_errors",
                "Memory words that read back wrong under stress.",
                &labels,
                g.memory_errors as f64,
            );
            o.add(
                "gpudoctor_stress_compute_errors",
                "Wrong FMA and GEMM results under stress.",
                &labels,
                (g.compute_errors + g.gemm_errors) as f64,
            );
            if g.free_bytes > 0 {
                o.add(
                    "gpudoctor_stress_memory_coverage_ratio",
                    "Fraction of free memory the pattern test held.",
                    &labels,
                    g.tested_bytes as f64 / g.free_bytes as f64,
                );
            }
            if let Some(t) = g.watch.max_temperature_c {
                o.add(
                    "gpudoctor_stress_max_temperature_celsius",
                    "Highest temperature under stress.",
                    &labels,
                    f64::from(t),
                );
            }
            if let Some(v) = g.fma_gflops {
                o.add(
                    "gpudoctor_stress_fma_gflops",
                    "FMA burn rate under stress.",
                    &labels,
                    v,
                );
            }
        }
    }
}

/// A GPU's ECC errors, remapped rows and PCIe replays, where NVML read them.
fn add_gpu_health(o: &mut Out, h: &crate::snapshot::GpuHealth, labels: &[(&str, String)]) {
    if let Some(e) = &h.ecc {
        if let Some(v) = e.volatile_uncorrected {
            o.add(
                "gpudoctor_gpu_ecc_uncorrected_volatile",
                "Uncorrectable ECC errors since the driver loaded.",
                labels,
                v as f64,
            );
        }
        if let Some(v) = e.aggregate_uncorrected {
            o.add(
                "gpudoctor_gpu_ecc_uncorrected_aggregate",
                "Uncorrectable ECC errors over the GPU's life.",
                labels,
                v as f64,
            );
        }
        if let Some(v) = e.volatile_corrected {
            o.add(
                "gpudoctor_gpu_ecc_corrected_volatile",
                "Corrected ECC errors since the driver loaded.",
                labels,
                v as f64,
            );
        }
    }
    if let Some(rr) = &h.remapped_rows {
        o.add(
            "gpudoctor_gpu_remapped_rows_uncorrectable",
            "Rows remapped for uncorrectable errors.",
            labels,
            f64::from(rr.uncorrectable),
        );
        o.add(
            "gpudoctor_gpu_remap_pending",
            "1 when a row remap waits for a GPU reset.",
            labels,
            if rr.pending { 1.0 } else { 0.0 },
        );
    }
    if let Some(p) = h.pcie_replays {
        o.add(
            "gpudoctor_gpu_pcie_replays",
            "PCIe replays since the driver loaded.",
            labels,
            p as f64,
        );
    }
}
