//! `framework.cpu-only-build`: a CPU-only build of PyTorch, TensorFlow or JAX on a machine
//! with NVIDIA GPUs.

use crate::fixes::{python_install_command, python_uninstall, PyInstall};
use serde_json::json;

use super::{unprobed, Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "framework.cpu-only-build",
        category: Category::CpuOnlyBuild,
        area: Area::Frameworks,
        summary: "A CPU-only PyTorch, TensorFlow or JAX is installed on a machine with NVIDIA GPUs",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let gpus = ctx.gpus_exist() || ctx.snap.is_assumed("gpu") || ctx.snap.is_assumed("gpu.cc");
    // `--no-probe`: whether there are GPUs is not known. A CPU-only build may be what the user
    // wants then, but a GPU build on native Windows that cannot use a GPU (TensorFlow from 2.11,
    // any JAX CUDA plugin) is never what anyone installs it for.
    let gpus_unknown = unprobed(&ctx.snap.gpus) && unprobed(&ctx.snap.driver.pci_devices);
    if !gpus && !gpus_unknown {
        return Vec::new();
    }
    let mut out = Vec::new();
    for env in ctx.snap.python_envs() {
        torch_cpu_only(ctx, doc, env, gpus, &mut out);
        tensorflow_cpu_only(ctx, doc, env, gpus, &mut out);
        jax_cpu_only(ctx, doc, env, gpus, &mut out);
    }
    out
}

/// A CPU-only PyTorch build on a machine with GPUs.
fn torch_cpu_only(
    ctx: &Context,
    doc: &RuleDoc,
    env: &crate::snapshot::PythonEnv,
    gpus: bool,
    out: &mut Vec<Finding>,
) {
    let on_windows = super::windows_fixes::on_windows(ctx.snap);
    let install = |req: &PyInstall| python_install_command(Some(env), on_windows, req);
    let note = |text: &str| with_install_note(env, on_windows, text);
    if let Some(t) = env.torch.as_ref().filter(|t| gpus && t.is_cpu_only()) {
        out.push(
            doc.finding(
                Severity::Error,
                format!("PyTorch {} is a CPU-only build", t.version),
                format!("In {}, torch {} has no CUDA support (torch.version.cuda is None), so it will not use the GPUs.", env.label(), t.version),
            )
            .fix_owned(
                note("Reinstall PyTorch from a CUDA index that your driver supports (cu126 needs driver >= 525.60.13 under minor-version compatibility):"),
                vec![install(&PyInstall::new(&["torch"]).flag("--force-reinstall").index("https://download.pytorch.org/whl/cu126"))],
            )
            .evidence(json!({"environment": env.prefix, "torch": t}))
            .link("https://pytorch.org/get-started/locally/"),
        );
    }
}

/// A TensorFlow that cannot use the GPUs: any on native Windows from 2.11, the CPU-only
/// package before 2.1, or a build without CUDA.
fn tensorflow_cpu_only(
    ctx: &Context,
    doc: &RuleDoc,
    env: &crate::snapshot::PythonEnv,
    gpus: bool,
    out: &mut Vec<Finding>,
) {
    let on_windows = super::windows_fixes::on_windows(ctx.snap);
    let install = |req: &PyInstall| python_install_command(Some(env), on_windows, req);
    let uninstall = |names: &[&str]| python_uninstall(Some(env), on_windows, names);
    if let Some(tf) = env.tensorflow.as_ref() {
        let cpu_pkg = tf.package.ends_with("-cpu");
        let windows = ctx.snap.host.get().is_some_and(|h| h.os == "windows");
        // Native Windows GPU support ended with TensorFlow 2.10 (compat-facts.md §6).
        if windows
            && (gpus || !cpu_pkg)
            && ctx
                .matrix
                .tensorflow(&tf.version)
                .is_some_and(|r| !r.windows_gpu)
        {
            out.push(
                doc.finding(
                    Severity::Error,
                    format!("TensorFlow {} has no GPU support on native Windows", tf.version),
                    format!("In {}, TensorFlow {} runs on the CPU only: native Windows GPU support ended with TensorFlow 2.10. Later releases use the GPU only under WSL2.", env.label(), tf.version),
                )
                .fix_owned("Run TensorFlow in WSL2 with tensorflow[and-cuda], or pin the last native Windows GPU release:", vec!["wsl --install".to_string(), install(&PyInstall::new(&["tensorflow<2.11"]))])
                .evidence(json!({"environment": env.prefix, "tensorflow": tf.version, "os": "windows"}))
                .link("https://www.tensorflow.org/install/pip#windows-native"),
            );
        } else if !gpus {
            // Not known to have GPUs: the rest is about builds a GPU machine should not have.
        } else if let Some(gpu_pkg) = ctx
            .matrix
            .tensorflow(&tf.version)
            .filter(|r| crate::compat::tf_cpu_only(ctx.snap, tf, r))
            .and_then(|r| r.gpu_package.clone())
        {
            out.push(
                doc.finding(
                    Severity::Error,
                    format!("The tensorflow {} package has no GPU support", tf.version),
                    format!("In {}, tensorflow {} is the CPU-only package: before TensorFlow 2.1 the GPU build was the separate {gpu_pkg} package, so this install lists no GPU.", env.label(), tf.version),
                )
                .fix_owned(
                    format!("Install the GPU package of the same release (it needs the CUDA and cuDNN TensorFlow {} was built with):", tf.version),
                    vec![uninstall(&["tensorflow"]), install(&PyInstall::new(&[format!("{gpu_pkg}=={}", tf.version).as_str()]))],
                )
                .evidence(json!({"environment": env.prefix, "tensorflow": tf.version, "package": tf.package, "gpu_package": gpu_pkg}))
                .link("https://github.com/tensorflow/tensorflow/blob/master/RELEASE.md#release-210"),
            );
        } else if tf.is_cpu_only() || cpu_pkg {
            out.push(
                doc.finding(
                    Severity::Error,
                    format!("TensorFlow {} is a CPU-only build", tf.version),
                    format!(
                        "In {}, {} {} was built without CUDA (build_info is_cuda_build = False), so it lists no GPU. Native Windows builds after 2.10 have no GPU support; use WSL2.",
                        env.label(),
                        tf.package,
                        tf.version
                    ),
                )
                .fix_owned(
                    "Install the GPU build with its CUDA libraries (Linux/WSL2):",
                    vec![uninstall(&[tf.package.as_str()]), install(&PyInstall::new(&["tensorflow[and-cuda]"]))],
                )
                .evidence(json!({"environment": env.prefix, "tensorflow": tf}))
                .link("https://www.tensorflow.org/install/pip"),
            );
        }
    }
}

/// A JAX that cannot use the GPUs: a CUDA plugin on native Windows, or no CUDA plugin at all.
fn jax_cpu_only(
    ctx: &Context,
    doc: &RuleDoc,
    env: &crate::snapshot::PythonEnv,
    gpus: bool,
    out: &mut Vec<Finding>,
) {
    let on_windows = super::windows_fixes::on_windows(ctx.snap);
    let install = |req: &PyInstall| python_install_command(Some(env), on_windows, req);
    let note = |text: &str| with_install_note(env, on_windows, text);
    if let Some((jax, major)) = env.package("jax").and_then(|j| {
        crate::compat::jax_cuda_major(env)
            .filter(|&m| crate::compat::jax_windows_cpu_only(ctx.snap, ctx.matrix, &j.version, m))
            .map(|m| (j, m))
    }) {
        // The matrix's windows_gpu: no JAX CUDA build runs on native Windows.
        out.push(
            doc.finding(
                Severity::Error,
                format!("JAX {} has no GPU support on native Windows", jax.version),
                format!("In {}, JAX {} has the CUDA {major} plugin installed, but JAX's CUDA builds run on Linux only: on native Windows jax.devices() lists only the CPU. JAX uses an NVIDIA GPU on Windows only under WSL2.", env.label(), jax.version),
            )
            .fix_owned("Run JAX in WSL2 (a Linux distribution under Windows, using the Windows \
                NVIDIA driver), and install it there (in its Linux shell) with its CUDA \
                plugin:", vec!["wsl --install".to_string(), python_install_command(None, false, &PyInstall::new(&["jax[cuda12]"]).flag("-U")).replacen("python ", "python3 ", 1)])
            .evidence(json!({"environment": env.prefix, "jax": jax.version, "cuda_plugin": major, "os": "windows"}))
            .link("https://docs.jax.dev/en/latest/installation.html#supported-platforms"),
        );
    } else if let Some(jax) = env.package("jax").filter(|_| gpus) {
        let plugin = env.package_prefixed(&["jax-cuda", "jax-rocm"]);
        let cuda_jaxlib = env
            .package("jaxlib")
            .is_some_and(|j| j.version.contains("cuda"));
        if plugin.is_none() && !cuda_jaxlib {
            out.push(
                doc.finding(
                    Severity::Error,
                    format!("JAX {} has no CUDA plugin: it runs on the CPU", jax.version),
                    format!("In {}, jax and jaxlib are installed without jax-cuda12-plugin or jax-cuda13-plugin, so jax.devices() lists only the CPU.", env.label()),
                )
                .fix_owned(
                    note("Install JAX with its CUDA plugin (cuda13 needs driver >= 580, cuda12 >= 525):"),
                    vec![install(&PyInstall::new(&["jax[cuda12]"]).flag("-U"))],
                )
                .evidence(json!({"environment": env.prefix, "jax": jax.version}))
                .link("https://docs.jax.dev/en/latest/installation.html"),
            );
        }
    }
}

/// `text`, followed by what installing into `env` needs said (its tool's note), if anything.
fn with_install_note(env: &crate::snapshot::PythonEnv, on_windows: bool, text: &str) -> String {
    match crate::fixes::python_install(Some(env), on_windows, &PyInstall::default()).text {
        n if n.is_empty() => text.to_string(),
        n => format!("{text} {n}"),
    }
}

#[cfg(test)]
#[path = "cpu_only_build_tests.rs"]
pub(super) mod tests;
