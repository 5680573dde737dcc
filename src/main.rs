//! The gpudoctor binary: parse, run, print, exit. Everything else lives in the library.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    gpudoctor::probe::trace::line("main");
    gpudoctor::probe::windows::no_crash_dialogs();
    let cli = match gpudoctor::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Usage errors exit 2. --help and --version print to stdout and exit 0, unless
            // standard output cannot be written (then 2, like every other report).
            if e.use_stderr() || std::io::stdout().is_terminal() {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
            }
            let mut out = std::io::stdout();
            return match write!(out, "{}", e.render()).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "gpudoctor: error: could not write to standard output: {}",
                        gpudoctor::safewrite::describe(&err)
                    );
                    ExitCode::from(2)
                }
            };
        }
    };
    // Libraries that print to stdout must not corrupt the report: they print to stderr. (After
    // parsing: clap prints --help and --version to the real stdout itself.)
    gpudoctor::outguard::protect();
    // A panic must never be how gpudoctor ends: report it as an internal error (exit 2).
    let out = std::panic::catch_unwind(move || gpudoctor::app::run(cli)).unwrap_or_else(|p| {
        let msg = gpudoctor::probe::deadline::panic_message(p.as_ref());
        gpudoctor::app::Output::tool_error(format!(
            "internal error: {msg}. Please report it with the output of `gpudoctor snapshot --redact`."
        ))
    });
    // No helper outlives gpudoctor (one may still be stuck in a hung driver call).
    gpudoctor::probe::deadline::kill_helpers();
    let mut stdout = gpudoctor::outguard::writer();
    let written = stdout
        .write_all(out.stdout.as_bytes())
        .and_then(|()| stdout.flush());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    gpudoctor::probe::trace::line("output written");
    let mut code = out.status.code();
    // A report that could not be written is gpudoctor's failure (exit 2), never "healthy": a
    // gate must not trust a cut or empty report. `run` keeps its command's status.
    if let Err(e) = written {
        let _ = writeln!(
            std::io::stderr(),
            "gpudoctor: error: could not write to standard output: {}",
            gpudoctor::safewrite::describe(&e)
        );
        if !matches!(out.status, gpudoctor::report::ExitStatus::Passthrough(_)) {
            code = gpudoctor::report::ExitStatus::ToolFailed.code();
        }
    }
    // `gpudoctor run` on Windows passes on a 32-bit exit code (a crash's NTSTATUS, as
    // 3221226505): ExitCode holds one byte, so such a code leaves through exit().
    #[cfg(windows)]
    if !(0..=255).contains(&code) {
        #[allow(clippy::exit)]
        std::process::exit(code);
    }
    ExitCode::from(code.clamp(0, 255) as u8)
}
