//! Dispatches a parsed command to its module in [`crate::commands`], and carries what it
//! produced back to `main`, which alone prints.

use crate::cli::{Cli, Command};
use crate::commands as c;
use crate::report::ExitStatus;

pub use crate::commands::{evaluate, read_snapshot};

/// What a command produced.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl Output {
    pub(crate) fn ok(stdout: String, status: ExitStatus) -> Output {
        Output {
            stdout,
            stderr: String::new(),
            status,
        }
    }
    /// gpudoctor itself failed (exit 2) with a message that says what to do. The message often quotes the user's files and
    /// arguments: every line is cleaned of terminal escapes and control characters.
    pub fn tool_error(msg: impl AsRef<str>) -> Output {
        let clean: Vec<String> = msg
            .as_ref()
            .lines()
            .map(|l| crate::sanitize::clean_line(l, 2000))
            .collect();
        Output {
            stdout: String::new(),
            stderr: format!("gpudoctor: error: {}\n", clean.join("\n")),
            status: ExitStatus::ToolFailed,
        }
    }
}

pub fn run(cli: Cli) -> Output {
    match cli.command {
        Command::Check(a) => c::check(a),
        Command::Snapshot(a) => c::snapshot(a),
        Command::Rules(a) => c::list_rules(a),
        Command::Explain(a) => c::explain(a),
        Command::Stress(a) => c::stress(a),
        Command::Completions { shell } => c::completions(shell),
        Command::Man(a) => c::man_page(a),
        Command::Recommend(a) => c::recommend(a),
        Command::Run(a) => c::run(a),
        Command::Matrix(m) => c::matrix_command(m),
        Command::ProbeLib { kind, target } => c::probe_lib(&kind, &target),
        Command::ProbeNvml { deep } => c::probe_nvml(deep),
        Command::Smoke => c::smoke_child(),
    }
}
