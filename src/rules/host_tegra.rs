//! `host.tegra`: an NVIDIA Jetson/Tegra board. Its integrated GPU is driven by nvgpu from Jetson
//! Linux (L4T), not by the `nvidia` kernel module, and NVML is missing (JetPack 5 and older) or
//! partial (Orin, Thor): say so, instead of reporting "no NVIDIA driver" and a discrete-GPU fix.

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "host.tegra",
        category: Category::Configuration,
        area: Area::Driver,
        summary: "A Jetson/Tegra board: integrated GPU, driver from Jetson Linux, NVML missing or partial",
    },
    check,
};

const GO_NVLIB: &str =
    "https://github.com/NVIDIA/go-nvlib/blob/main/pkg/nvlib/info/property-extractor.go";
const JETSON_LINUX: &str = "https://developer.nvidia.com/embedded/jetson-linux";

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let s = ctx.snap;
    let Some(t) = s.host.get().and_then(|h| h.tegra.as_ref()) else {
        return Vec::new();
    };
    let what: Vec<String> = [
        t.model.clone(),
        t.soc.clone(),
        t.l4t.as_ref().map(|r| format!("Jetson Linux {r}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let board = if what.is_empty() {
        "NVIDIA Jetson/Tegra board".to_string()
    } else {
        format!("NVIDIA Jetson/Tegra board ({})", what.join(", "))
    };
    let evidence = json!({
        "markers": t.markers,
        "l4t": t.l4t,
        "soc": t.soc,
        "model": t.model,
        "nvml": s.driver.nvml.reason(),
        "libcuda": s.driver.libcuda.reason(),
    });
    let nvml = if s.driver.nvml.is_found() {
        "NVML answers only part of its calls on an integrated GPU, so values it does not give are unknown and the checks that need them are skipped"
    } else {
        "there is no NVML (no nvidia-smi) on this board, so the GPU health, memory and driver-version checks do not apply"
    };
    if s.driver.libcuda.is_found() || s.is_assumed("driver") {
        return vec![doc
            .finding(
                Severity::Info,
                format!("{board}: integrated GPU"),
                format!(
                    "Its GPU is driven by Jetson Linux (nvgpu), not by the nvidia kernel module of discrete GPUs; {nvml}. CUDA is checked through Jetson Linux's libcuda.so.1."
                ),
            )
            .fix(
                "Read the GPU's load, clocks and temperatures, and the Jetson Linux release:",
                &["sudo tegrastats --interval 1000", "cat /etc/nv_tegra_release"],
            )
            .evidence(evidence)
            .link(GO_NVLIB)
            .link(JETSON_LINUX)];
    }
    let mut f = doc
        .finding(
            Severity::Error,
            format!("{board} without its CUDA driver (libcuda.so.1)"),
            format!(
                "This is a Jetson, where the GPU's driver comes with Jetson Linux, but libcuda.so.1 does not load ({}), so no CUDA program can use the GPU; {nvml}. In a container, the NVIDIA runtime mounts Jetson Linux's libraries.",
                s.driver.libcuda.reason().unwrap_or("not found")
            ),
        )
        .with_fix({
            // Jetson Linux (L4T) is Ubuntu-based: JetPack is an apt package there.
            let terms = crate::fixes::Terms {
                os_id: Some("ubuntu".into()),
                ..crate::fixes::Terms::of(s)
            };
            let mut fix = crate::fixes::driver_fix(
                &terms,
                crate::fixes::DriverAction::Jetpack,
                &crate::fixes::Values::default(),
            );
            fix.text = "Install JetPack's CUDA driver on the board, or start the container with the NVIDIA runtime:".into();
            fix.commands.push("docker run --runtime nvidia IMAGE".into());
            fix
        })
        .evidence(evidence)
        .link(GO_NVLIB)
        .link(JETSON_LINUX);
    f.category = Category::DriverMissing;
    vec![f]
}

#[cfg(test)]
#[path = "host_tegra_tests.rs"]
pub(super) mod tests;
