//! `gpudoctor completions` and `gpudoctor man`.

use super::Output;
use crate::cli::{Cli, ManArgs};
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

/// The man pages, generated from the clap definition: gpudoctor(1) on stdout, one
/// subcommand's page (`man check`), or every page written into a directory (`man --dir DIR`),
/// so that the gpudoctor-check(1) and others gpudoctor(1) refers to exist.
pub(crate) fn man_page(a: ManArgs) -> Output {
    use clap::CommandFactory;
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    if let Some(dir) = &a.dir {
        return match write_pages(&root, dir) {
            Ok(names) => Output::ok(
                format!(
                    "wrote {} man pages to {}: {}\n",
                    names.len(),
                    dir.display(),
                    names.join(" ")
                ),
                ExitStatus::Healthy,
            ),
            Err(e) => Output::tool_error(format!(
                "could not write the man pages to {}: {e}",
                dir.display()
            )),
        };
    }
    // `man matrix show` or `man matrix-show`: walk down the subcommands.
    let words: Vec<String> = a
        .command
        .iter()
        .flat_map(|w| w.split(['-', ' ']).map(str::to_string).collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect();
    let mut cmd = root;
    for w in &words {
        let next = cmd
            .get_subcommands()
            .find(|c| !c.is_hide_set() && c.get_name() == w)
            .cloned();
        match next {
            Some(c) => cmd = c,
            None => {
                let names: Vec<&str> = cmd
                    .get_subcommands()
                    .filter(|c| !c.is_hide_set())
                    .map(|c| c.get_name())
                    .collect();
                return Output::tool_error(format!(
                    "man {}: no such subcommand; the pages are for: {}",
                    crate::sanitize::clean_line(&words.join(" "), 80),
                    names.join(", ")
                ));
            }
        }
    }
    let mut buf: Vec<u8> = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd).render(&mut buf) {
        return Output::tool_error(format!("could not write the man page: {e}"));
    }
    Output::ok(
        String::from_utf8_lossy(&buf).into_owned(),
        ExitStatus::Healthy,
    )
}

/// Writes the page of `cmd` and of each visible subcommand below it; returns the file names.
fn write_pages(cmd: &clap::Command, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut names = Vec::new();
    let mut todo = vec![cmd.clone()];
    while let Some(c) = todo.pop() {
        todo.extend(c.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
        let man = clap_mangen::Man::new(c);
        let name = man.get_filename();
        let mut buf: Vec<u8> = Vec::new();
        man.render(&mut buf)?;
        crate::safewrite::write(&dir.join(&name), &buf, crate::safewrite::Existing::Replace)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{name}: {e}")))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}
