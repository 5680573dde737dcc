//! Runs driver work in a sacrificial child process.
//!
//! A driver library that segfaults, aborts, calls `exit` or hangs takes its process with it, so
//! NVML and the smoke tests run in `gpudoctor __probe-nvml` and `gpudoctor __smoke`. The child
//! prints one JSON answer on its standard output and [breadcrumbs](super::breadcrumb) on its
//! standard error; here the parent turns a crash, an exit without an answer or a hang into a
//! [`HelperFailure`] that names the call the library was in.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::{breadcrumb, deadline};
use crate::sanitize;

/// How a helper process failed to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HelperFailure {
    /// It was killed at its deadline.
    pub timed_out: bool,
    /// "killed by signal 11 (SIGSEGV)", "exit status 0", "timed out after 2.0 s and was killed".
    pub how: String,
    /// The last call it had started ("nvmlInit_v2", "GPU 0: memory").
    pub at: Option<String>,
    /// The first lines it printed on stderr (sanitised), breadcrumbs left out.
    pub said: String,
}

impl HelperFailure {
    /// One sentence: "the NVML helper process was killed by signal 11 (SIGSEGV) in
    /// nvmlInit_v2; it said: ...".
    pub fn describe(&self, what: &str) -> String {
        let verb = if self.how.starts_with("killed") {
            "was "
        } else if self.how.starts_with("exit status") {
            "ended with "
        } else {
            ""
        };
        let mut s = format!("{what} {verb}{}", self.how);
        if let Some(at) = &self.at {
            s.push_str(&format!(" in {at}"));
        }
        if !self.timed_out && !self.how.contains("signal") && !self.how.starts_with("crashed") {
            s.push_str(" without giving an answer");
        }
        if !self.said.is_empty() {
            s.push_str(&format!("; it said: {}", self.said));
        }
        s
    }
}

/// Runs `helper ARGS` with `input` on its stdin, kills it (with its process group) after
/// `limit`, and reads its JSON answer: the last stdout line that starts with `{`. An answer is
/// accepted even when the process crashed afterwards (in a library's exit handler, say).
pub fn run<T: DeserializeOwned>(
    helper: &Path,
    args: &[&str],
    input: Option<Vec<u8>>,
    limit: Duration,
) -> Result<T, HelperFailure> {
    let mut cmd = Command::new(helper);
    cmd.args(args);
    let out = deadline::run_with_input(cmd, input, limit, 4 << 20).map_err(|e| HelperFailure {
        timed_out: false,
        how: format!("could not be started ({}: {e})", helper.display()),
        at: None,
        said: String::new(),
    })?;
    let text = out.stdout_text();
    let answer = text.lines().rev().find(|l| l.starts_with('{'));
    let stderr = out.stderr_text();
    if super::trace::enabled() {
        // The helper's own trace (GPUDOCTOR_TRACE is inherited), timed from its own start.
        for l in stderr.lines().filter_map(|l| l.strip_prefix("[trace ")) {
            super::trace::line(&format!("helper {:?}: [{l}", args.first().unwrap_or(&"")));
        }
    }
    if let Some(Ok(v)) = answer.map(serde_json::from_str::<T>) {
        return Ok(v);
    }
    let said = breadcrumb::said(&stderr);
    let mut how = out.describe(limit);
    if answer.is_some() && out.success() {
        how = "printed an answer that could not be read".to_string();
    }
    Err(HelperFailure {
        timed_out: out.timed_out,
        how,
        at: breadcrumb::last(&stderr),
        said: sanitize::clean_line(
            &said.into_iter().take(3).collect::<Vec<_>>().join(" / "),
            400,
        ),
    })
}
