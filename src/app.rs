//! Dispatches a parsed command to its module in [`crate::commands`], and carries what it
//! produced back to `main`, which alone prints.

use crate::cli::{Cli, Command};
use crate::commands as c;

pub use crate::commands::{evaluate, read_snapshot, Output};

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
