//! `container.no-gpu`: running inside a container that was started without GPU access.

use serde_json::json;

use super::{unprobed, Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "container.no-gpu",
        category: Category::ContainerNoGpu,
        area: Area::Host,
        summary:
            "Inside a container started without GPU access (no /dev/nvidia*, no driver libraries)",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let s = ctx.snap;
    let Some(host) = s.host.get() else {
        return Vec::new();
    };
    let Some(kind) = host.container.as_deref() else {
        return Vec::new();
    };
    if unprobed(&s.driver.device_nodes) {
        return Vec::new();
    }
    let nodes = s.driver.device_nodes.get().cloned().unwrap_or_default();
    let nvidia_visible = s.env.get("NVIDIA_VISIBLE_DEVICES").cloned();
    let hidden_by_var = matches!(
        nvidia_visible.as_deref(),
        Some("void") | Some("none") | Some("")
    );
    if !nodes.is_empty() && !hidden_by_var {
        return Vec::new();
    }
    let mut detail = format!(
        "gpudoctor runs inside a {kind} container ({}) with no /dev/nvidia* device nodes",
        host.container_markers.join(", ")
    );
    if !s.driver.nvml.is_found() {
        detail.push_str(" and no NVIDIA driver libraries");
    }
    detail.push('.');
    if hidden_by_var {
        detail.push_str(&format!(
            " NVIDIA_VISIBLE_DEVICES={:?} asks the NVIDIA runtime for no GPU.",
            nvidia_visible.clone().unwrap_or_default()
        ));
    }
    let commands: &[&str] = match kind {
        "kubernetes" => &["# in the pod spec:  resources: { limits: { nvidia.com/gpu: 1 } }"],
        "podman" => &["podman run --device nvidia.com/gpu=all IMAGE"],
        _ => &[
            "docker run --gpus all IMAGE",
            "nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
        ],
    };
    vec![doc
        .finding(Severity::Error, "This container was started without GPU access", detail)
        .fix(
            "Start the container with the NVIDIA Container Toolkit (on the host), and check the host with gpudoctor first:",
            commands,
        )
        .evidence(json!({"container": kind, "markers": host.container_markers, "NVIDIA_VISIBLE_DEVICES": nvidia_visible}))
        .link("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html")]
}

#[cfg(test)]
#[path = "container_no_gpu_tests.rs"]
pub(super) mod tests;
