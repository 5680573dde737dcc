//! `gpudoctor completions` and `gpudoctor man`.

use crate::app::Output;
use crate::cli::Cli;
use crate::report::ExitStatus;

/// A completion script generated from the clap definition.
pub(crate) fn completions(shell: clap_complete::Shell) -> Output {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut buf: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut cmd, "gpudoctor", &mut buf);
    Output::ok(
        String::from_utf8_lossy(&buf).into_owned(),
        ExitStatus::Healthy,
    )
}

/// The man page, generated from the clap definition.
pub(crate) fn man_page() -> Output {
    use clap::CommandFactory;
    let mut buf: Vec<u8> = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut buf) {
        return Output::tool_error(format!("could not write the man page: {e}"));
    }
    Output::ok(
        String::from_utf8_lossy(&buf).into_owned(),
        ExitStatus::Healthy,
    )
}
