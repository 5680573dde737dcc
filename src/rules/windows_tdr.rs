//! `windows.tdr`: Windows' timeout detection and recovery (TDR). Windows resets a GPU whose work
//! does not finish (or yield to the scheduler) within `TdrDelay` seconds, 2 unless the registry
//! says otherwise (https://learn.microsoft.com/en-us/windows-hardware/drivers/display/tdr-registry-keys).
//! A CUDA kernel that runs longer on a GPU in WDDM mode (every GeForce, and any GPU that drives a
//! display) is killed with it: the program gets cudaErrorLaunchTimeout or loses the device, and
//! the System event log gets a `Display` 4101 / `nvlddmkm` 153 record (probe::windows::eventlog).
//!
//! What it says, and why so:
//! - resets seen and TdrDelay at the default 2 s (or less): warning, raise it;
//! - resets seen with a longer TdrDelay: warning, the kernels outlast even that or the GPU hangs;
//! - resets seen and the settings not read (`--assume os=windows`, an older snapshot, a registry
//!   error): warning, with the settings unknown;
//! - no reset, default delay, GPUs present: info only. The default is no fault by itself, but it
//!   is the first thing to know before a long kernel runs on a display GPU;
//! - TdrLevel 0 (detection off): nothing; Windows resets nothing;
//! - every GPU in TCC or MCDM mode (NVML's driver model): nothing; no display, no TDR.
//!
//! The fix's 60 s is a judgement, not a documented value: longer than most single kernels, short
//! enough that a GPU that really hangs is still recovered within a minute.
//!
//! Never on a Linux snapshot: there is no TDR there.

use serde_json::json;

use super::windows_fixes::on_windows;
use super::{Context, Rule, RuleDoc};
use crate::faults::logparse::LogEvent;
use crate::snapshot::WindowsHost;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "windows.tdr",
        category: Category::Configuration,
        area: Area::Driver,
        summary: "Windows' GPU timeout (TDR) against long CUDA kernels",
    },
    check,
};

/// The fix's TdrDelay: see the module's note.
const SUGGESTED_DELAY_S: u32 = 60;

const RAISE: &str = r#"reg add "HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers" /v TdrDelay /t REG_DWORD /d 60 /f"#;
const RESTART: &str = "shutdown /r /t 0";

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    if !on_windows(ctx.snap) {
        return Vec::new();
    }
    // A GPU in TCC or MCDM mode drives no display and is not under TDR: where NVML names every
    // GPU's driver model and none is WDDM, there is nothing to say.
    let models: Vec<Option<&str>> = ctx
        .snap
        .gpu_list()
        .iter()
        .map(|g| g.driver_model.as_deref())
        .collect();
    if !models.is_empty() && models.iter().all(|m| m.is_some_and(|m| m != "WDDM")) {
        return Vec::new();
    }
    let log = ctx.snap.kernel_log.get();
    let resets: u64 = log
        .map(|l| {
            l.events
                .iter()
                .filter(|e| matches!(e.event, LogEvent::DisplayDriverReset { .. }))
                .map(|e| e.count)
                .sum()
        })
        .unwrap_or(0);
    let window = log.map(|l| l.window_hours).unwrap_or(0.0);
    let settings: Option<&WindowsHost> = ctx
        .snap
        .host
        .get()
        .and_then(|h| h.windows.as_ref())
        .filter(|w| w.registry_error.is_none());
    let fix_text = format!(
        "In a terminal run as Administrator, raise TdrDelay to \
        {SUGGESTED_DELAY_S} s and restart Windows; or run long kernels on a GPU \
        that drives no display, switched to TCC mode (nvidia-smi -i N -dm 1; \
        data-centre and most workstation GPUs, not GeForce). If resets come \
        under light load, suspect the GPU instead: power, cooling, overclock, \
        driver."
    );
    let Some(w) = settings else {
        return resets_without_settings(ctx, doc, resets, window, fix_text);
    };
    let (delay, level) = (w.tdr_delay(), w.tdr_level());
    if level == 0 {
        return Vec::new();
    }
    let set = if w.tdr_delay_s.is_some() {
        "set in the registry"
    } else {
        "Windows' default, TdrDelay not set"
    };
    let evidence = json!({
        "tdr_delay_s": delay,
        "tdr_delay_set": w.tdr_delay_s.is_some(),
        "tdr_level": level,
        "resets": resets,
        "window_hours": window,
    });
    let finding = if resets > 0 && delay <= WindowsHost::DEFAULT_TDR_DELAY_S {
        doc.finding(
            Severity::Warning,
            format!("Windows reset the display driver {} with a {delay} s TDR delay", times(resets)),
            format!("The System event log holds {resets} display-driver reset(s) in the last {window} h, and TdrDelay is {delay} s ({set}): any CUDA kernel longer than that on a GPU in WDDM mode is killed with the reset."),
        )
    } else if resets > 0 {
        doc.finding(
            Severity::Warning,
            format!("Windows reset the display driver {} despite a {delay} s TDR delay", times(resets)),
            format!("The System event log holds {resets} display-driver reset(s) in the last {window} h although TdrDelay is {delay} s ({set}): kernels run longer even than that, or the GPU hangs."),
        )
    } else if delay <= WindowsHost::DEFAULT_TDR_DELAY_S && ctx.gpus_exist() {
        doc.finding(
            Severity::Info,
            format!("Windows resets a GPU that is busy for more than {delay} s (TDR)"),
            format!("TdrDelay is {delay} s ({set}): a CUDA kernel longer than that on a GPU in WDDM mode (every GeForce, any GPU driving a display) is killed. {}", match log {
                Some(_) => format!("No reset is in the System event log of the last {window} h."),
                None => "The System event log was not read, so past resets are unknown.".to_string(),
            }),
        )
    } else {
        return Vec::new();
    };
    let commands = if delay < SUGGESTED_DELAY_S {
        vec![RAISE.to_string(), RESTART.to_string()]
    } else {
        Vec::new()
    };
    vec![finding
        .fix_owned(fix_text, commands)
        .evidence(evidence)
        .link(
            "https://learn.microsoft.com/en-us/windows-hardware/drivers/display/tdr-registry-keys",
        )]
}

/// Display-driver resets in the event log while the TDR settings could not be read: a warning
/// with Windows' defaults in mind.
fn resets_without_settings(
    ctx: &Context,
    doc: &RuleDoc,
    resets: u64,
    window: f64,
    fix_text: String,
) -> Vec<Finding> {
    if resets == 0 {
        return Vec::new();
    }
    let why = ctx
        .snap
        .host
        .get()
        .and_then(|h| h.windows.as_ref())
        .and_then(|w| w.registry_error.clone())
        .unwrap_or_else(|| "not in this snapshot".to_string());
    vec![doc
        .finding(
            Severity::Warning,
            format!("Windows reset the display driver {} (TDR)", times(resets)),
            format!("The System event log holds {resets} display-driver reset(s) in the last {window} h. The TDR settings could not be read ({why}); unset, TdrDelay is 2 s, so a CUDA kernel longer than that on a GPU in WDDM mode is killed."),
        )
        .fix_owned(fix_text, vec![RAISE.to_string(), RESTART.to_string()])
        .evidence(json!({"resets": resets, "window_hours": window, "settings": null, "why": why}))]
}

/// "once", or "N times".
fn times(n: u64) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

#[cfg(test)]
#[path = "windows_tdr_tests.rs"]
pub(super) mod tests;
