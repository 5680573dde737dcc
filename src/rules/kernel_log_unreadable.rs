//! `faults.kernel-log-unreadable`: the kernel log (on Windows the System event log) could not be
//! read, so Xid errors are unknown.

use serde_json::json;

use super::{unprobed, Context, Rule, RuleDoc};
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "faults.kernel-log-unreadable",
        category: Category::Configuration,
        area: Area::Driver,
        summary: "The kernel log is not readable, so Xid errors cannot be checked",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let k = &ctx.snap.kernel_log;
    if unprobed(k) || !matches!(k.code(), Some("unreadable" | "access_denied")) {
        return Vec::new();
    }
    let why = k.reason().unwrap_or("").to_string();
    if super::windows_fixes::on_windows(ctx.snap) {
        // The System event log (probe::windows::eventlog) stands for the kernel log there.
        return vec![doc
            .finding(
                Severity::Warning,
                "The System event log is not readable: Xid errors and display-driver resets cannot be checked",
                format!("wevtutil could not read the System event log ({why})."),
            )
            .fix(
                "Run gpudoctor in a terminal opened as Administrator, or add the user to the built-in Event Log Readers group (as Administrator; it applies at the next sign-in):",
                &["Add-LocalGroupMember -Group 'Event Log Readers' -Member $env:USERNAME"],
            )
            .evidence(json!({"sources": why}))
            .link("https://learn.microsoft.com/en-us/windows-server/identity/ad-ds/manage/understand-security-groups#event-log-readers")];
    }
    vec![doc
        .finding(
            Severity::Warning,
            "The kernel log is not readable: Xid errors cannot be checked",
            format!("None of the kernel log sources could be read by this user ({why})."),
        )
        .fix(
            "Grant read access in one of these ways (or run gpudoctor with sudo):",
            &[
                "sudo usermod -aG systemd-journal \"$USER\"",
                "sudo sysctl kernel.dmesg_restrict=0",
            ],
        )
        .evidence(json!({"sources": why}))
        .link("https://docs.kernel.org/admin-guide/sysctl/kernel.html#dmesg-restrict")]
}

#[cfg(test)]
#[path = "kernel_log_unreadable_tests.rs"]
pub(super) mod tests;
