//! The command line, as clap types. Nothing here touches the machine; `commands::config` turns
//! these into the plain configuration of a run, once, and nothing past the commands sees them.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "gpudoctor",
    version,
    long_version = crate::build_info::LONG_VERSION,
    about = "A doctor for NVIDIA GPU machines: driver, CUDA, cuDNN, frameworks and GPUs, with causes and fixes",
    long_about = None,
    after_help = "Exit codes: 0 healthy, 1 the host is unfit (a finding at or above --fail-on, including no NVIDIA driver), 2 gpudoctor itself failed (bad arguments, unreadable matrix or snapshot)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Probe this machine (or read a snapshot), evaluate the rules and report findings with fixes.
    Check(CheckArgs),
    /// Probe only and print the snapshot JSON (for bug reports: `check --snapshot FILE` reads it).
    Snapshot(SnapshotArgs),
    /// List every rule with its id, category and one line.
    Rules(RulesArgs),
    /// Explain a crash code, an error message, a whole log, or a rule.
    Explain(ExplainArgs),
    /// Burn-in: memory patterns over nearly all free memory and a verified compute burn on every
    /// GPU at once, with a health watch; exit 1 when a GPU is faulty.
    Stress(StressArgs),
    /// The newest build of each framework that works with this driver and these GPUs.
    Recommend(RecommendArgs),
    /// Run a command (a training script, a job step) unchanged while watching the GPUs, host
    /// memory and kernel log; when it fails, explain why with evidence. Exits with its status.
    Run(RunArgs),
    /// The compatibility matrix: show, validate, path, update.
    #[command(subcommand)]
    Matrix(MatrixCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff), or write them all: gpudoctor man --dir /usr/local/share/man/man1
    Man(ManArgs),
    /// Internal: load one library in this child process and print its version as JSON.
    #[command(name = "__probe-lib", hide = true)]
    ProbeLib { kind: String, target: String },
    /// Internal: run the NVML probe in this child process and print its answer as JSON.
    #[command(name = "__probe-nvml", hide = true)]
    ProbeNvml {
        #[arg(long)]
        deep: bool,
    },
    /// Internal: run the smoke tests in this child process (the request as JSON on stdin) and
    /// print the result as JSON.
    #[command(name = "__smoke", hide = true)]
    Smoke,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowBy {
    Framework,
    Cuda,
    Arch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Markdown,
    /// Prometheus text for node_exporter's textfile collector.
    Prometheus,
    /// JUnit XML: a testcase per rule (per GPU for GPU rules).
    Junit,
    /// One line: the verdict and the most severe findings (for scripts: Slurm, NPD, gates).
    Line,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Options shared by the commands that probe.
#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// Also import each framework in each Python environment (slower; runs Python under a deadline).
    #[arg(long)]
    pub deep: bool,
    /// A Python interpreter or environment prefix to inspect, besides those found (repeatable).
    #[arg(long = "python", value_name = "PATH")]
    pub pythons: Vec<PathBuf>,
    /// Give up on probes still running after this many seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 10.0,
        allow_negative_numbers = true
    )]
    pub timeout: f64,
    /// How far back to read the kernel log for Xid and other driver messages, in hours.
    #[arg(
        long,
        value_name = "HOURS",
        default_value_t = 24.0,
        allow_negative_numbers = true
    )]
    pub log_window: f64,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Only these GPUs (indexes or UUIDs, comma-separated).
    #[arg(long, value_name = "LIST")]
    pub gpu: Option<String>,
    /// Run the GPU smoke tests (the default when a driver is present).
    #[arg(long, overrides_with = "no_smoke")]
    pub smoke: bool,
    /// Do not run the GPU smoke tests (context, copies, our own kernel, SGEMM, cuDNN).
    #[arg(long, overrides_with = "smoke")]
    pub no_smoke: bool,
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Use this compatibility matrix (a YAML file or directory) instead of the built-in one.
    #[arg(long, value_name = "FILE", env = "GPUDOCTOR_MATRIX")]
    pub matrix: Option<PathBuf>,
    /// Evaluate a snapshot written by `gpudoctor snapshot` instead of probing this machine.
    #[arg(long, value_name = "FILE", conflicts_with = "no_probe")]
    pub snapshot: Option<PathBuf>,
    /// Do not probe this machine: only --assume facts exist.
    #[arg(long)]
    pub no_probe: bool,
    /// Add or override one fact (repeatable): driver, driver.cuda, gpu, gpu.cc, cuda, cudnn, torch, tensorflow, jax, jaxlib, jax.cuda, os, container.
    #[arg(long, value_name = "KEY=VALUE")]
    pub assume: Vec<String>,
    /// Fail unless exactly this many GPUs are usable.
    #[arg(long, value_name = "N")]
    pub expect_gpus: Option<u32>,
    /// The lowest severity that makes the exit status 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Run only rules whose id (or category) starts with this (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub only: Vec<String>,
    /// Skip rules whose id (or category) starts with this (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub skip: Vec<String>,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Show every fact gathered, not only those under findings.
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// A fleet's policy file.
#[derive(Debug, Args, Clone)]
pub struct PolicyArgs {
    /// A policy file (YAML): waivers with reasons and expiry dates, severity changes, thresholds per node class.
    #[arg(long, value_name = "FILE", env = "GPUDOCTOR_POLICY")]
    pub policy: Option<PathBuf>,
    /// The policy's node class for this machine (default: the first class whose hostname and GPU model match).
    #[arg(long, value_name = "NAME", requires = "policy")]
    pub node_class: Option<String>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Remove identifying values: GPU UUIDs, the home directory in paths.
    #[arg(long)]
    pub redact: bool,
    /// Write to this file instead of standard output (`-` is standard output). The file is
    /// written beside its target and renamed into place; an existing file is not overwritten,
    /// and a link, FIFO or device is refused (/dev/stdout, /dev/fd/N and /dev/null are streams).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace the -o file if it exists (only ever a regular file).
    #[arg(long, requires = "output")]
    pub force: bool,
    #[command(flatten)]
    pub probe: ProbeArgs,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The page of this subcommand (`check`, `stress`, `matrix show`) instead of gpudoctor(1).
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,
    /// Write gpudoctor.1 and gpudoctor-SUBCOMMAND.1 for every subcommand into DIR (created if
    /// missing; pages of the same name there are replaced).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FrameworkChoice {
    Torch,
    Tensorflow,
    Jax,
}

#[derive(Debug, Args)]
pub struct RecommendArgs {
    /// Only this framework.
    #[arg(long, value_enum)]
    pub framework: Option<FrameworkChoice>,
    /// Add or override one fact (repeatable), as for `check`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub assume: Vec<String>,
    /// Do not probe this machine: only --assume facts exist.
    #[arg(long)]
    pub no_probe: bool,
    /// Use this compatibility matrix instead of the built-in one.
    #[arg(long, value_name = "FILE", env = "GPUDOCTOR_MATRIX")]
    pub matrix: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub probe: ProbeArgs,
}

#[derive(Debug, Subcommand)]
pub enum MatrixCommand {
    /// What the matrix in use covers: per framework, per CUDA version, per GPU architecture.
    Show {
        #[arg(long, value_name = "FILE", env = "GPUDOCTOR_MATRIX")]
        matrix: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Only one of the tables.
        #[arg(long, value_enum)]
        by: Option<ShowBy>,
    },
    /// Check a matrix directory, or one file of it against the built-in tables it does not
    /// hold: schema and meaning; errors with file:line:column, exit 2.
    Validate { file: PathBuf },
    /// Where the matrix in use comes from.
    Path {
        #[arg(long, value_name = "FILE", env = "GPUDOCTOR_MATRIX")]
        matrix: Option<PathBuf>,
    },
    /// Install a newer matrix (a release's gpudoctor-matrix.yaml, as a file or over HTTPS) in
    /// the user's cache directory, after checking its SHA-256 and validating it.
    Update {
        /// A file, or the https:// URL of one, holding every table (gpudoctor-matrix.yaml).
        #[arg(long = "from", value_name = "FILE|URL")]
        from: String,
        /// Refuse it unless its SHA-256 is this (the release's gpudoctor-matrix.yaml.sha256).
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
    },
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ExplainArgs {
    /// A code (-1073740791, 0xC0000409, 137, 802, cudaErrorNoDevice, "Xid 79") or a message.
    /// With none, the text is read from standard input (paste a whole traceback, then Ctrl-D).
    #[arg(value_name = "CODE_OR_MESSAGE", conflicts_with_all = ["log", "rule", "list"])]
    pub input: Vec<String>,
    /// List every signature of the explain catalog (id, category, name).
    #[arg(long, conflicts_with_all = ["log", "rule"])]
    pub list: bool,
    /// Use this explain catalog (a YAML file or a directory of them) instead of the built-in one.
    #[arg(long, value_name = "FILE", env = "GPUDOCTOR_CATALOG")]
    pub catalog: Option<std::path::PathBuf>,
    /// Scan a whole log file ("-" reads standard input).
    #[arg(long, value_name = "FILE", conflicts_with = "rule")]
    pub log: Option<std::path::PathBuf>,
    /// Print a rule's own documentation.
    #[arg(long, value_name = "RULE_ID")]
    pub rule: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Join the explanation with this machine (probed, or --snapshot).
    #[arg(long)]
    pub with_check: bool,
    /// With --with-check: use this snapshot instead of probing.
    #[arg(long, value_name = "FILE", requires = "with_check")]
    pub snapshot: Option<std::path::PathBuf>,
    /// Use this compatibility matrix instead of the built-in one.
    #[arg(long, value_name = "FILE", env = "GPUDOCTOR_MATRIX")]
    pub matrix: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StressFormat {
    Human,
    Json,
    Jsonl,
    Prometheus,
    Junit,
    Line,
}

#[derive(Debug, Args)]
pub struct StressArgs {
    /// How long to run, in minutes (fractions allowed). Default 5.
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub minutes: Option<f64>,
    /// How long to run, in seconds.
    #[arg(long, value_name = "N")]
    pub seconds: Option<f64>,
    /// Only these GPUs (indexes or UUIDs, comma-separated).
    #[arg(long, value_name = "LIST")]
    pub gpu: Option<String>,
    /// Fraction of the memory free at start to test (0.1 to 0.97; the rest is left for the
    /// driver and cuBLAS).
    #[arg(long, value_name = "F", default_value_t = 0.97)]
    pub memory_fraction: f64,
    /// Which tests: memory, compute, or both (comma-separated).
    #[arg(long, value_name = "LIST", default_value = "memory,compute")]
    pub tests: String,
    /// Output: the doctor view, one JSON report, or JSON Lines events then the report.
    #[arg(long, value_enum, default_value_t = StressFormat::Human)]
    pub format: StressFormat,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// The lowest severity that makes the exit status 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Colour in human output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Flip N bits in device memory between write and verify, to prove they are found (max 1024).
    #[arg(long, value_name = "N", default_value_t = 0, hide = true)]
    pub inject_faults: u32,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    Human,
    Json,
    Markdown,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Write the report to FILE (an existing file is replaced; `-`, /dev/fd/N, a FIFO are
    /// written as streams). Without it, a JSON report goes to a new file named on stderr.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = RunFormat::Human)]
    pub format: RunFormat,
    /// Save report.json, the output's tail, the timeline (JSON Lines) and the snapshot in DIR,
    /// for a bug report (DIR is created; a DIR holding a run's files gets a new DIR/run-N).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Say nothing when the command ends well.
    #[arg(long, short)]
    pub quiet: bool,
    /// Seconds between samples.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 1.0,
        hide = true,
        env = "GPUDOCTOR_RUN_INTERVAL"
    )]
    pub interval: f64,
    /// Where to follow the kernel log (tests give a plain file).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/dev/kmsg",
        hide = true,
        env = "GPUDOCTOR_RUN_KMSG"
    )]
    pub kmsg: PathBuf,
    /// The command and its arguments (after `--`).
    #[arg(value_name = "COMMAND", required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<std::ffi::OsString>,
}
