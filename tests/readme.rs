//! The README's sample outputs cannot go stale: every ```text block that starts with
//! `$ gpudoctor ...` is run here (from the repository root, on fixed inputs: `--snapshot`,
//! `--no-probe --assume`, a fixture on stdin) and its output compared with the block; a block
//! quoted from an insta snapshot (`tests/snapshots/NAME.snap` named in the paragraph before it)
//! must still be in that snapshot; and any other ```text block must be a synopsis (its first
//! line `gpudoctor ...`), so no sample output goes unchecked. A block that cannot be run here
//! (it needs a GPU, its output holds times) says so right before it, with its reason:
//! `<!-- readme-test: not run: REASON -->`.
//!
//! `README_UPDATE=1 cargo test --test readme` rewrites the outputs in README.md in place; check
//! the diff.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced block: its info string, the line its body starts on (0-based), its body lines,
/// and the prose paragraph before it.
struct Block {
    info: String,
    start: usize,
    body: Vec<String>,
    before: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let start = i + 1;
            let mut j = start;
            while j < lines.len() && lines[j] != "```" {
                j += 1;
            }
            // The paragraph before the fence (up to the previous blank line or fence).
            let mut end = i;
            while end > 0 && lines[end - 1].trim().is_empty() {
                end -= 1;
            }
            let mut k = end;
            while k > 0 && !lines[k - 1].trim().is_empty() && !lines[k - 1].starts_with("```") {
                k -= 1;
            }
            out.push(Block {
                info: info.trim().to_string(),
                start,
                body: lines[start..j.min(lines.len())]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                before: lines[k..end].join("\n"),
            });
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Splits a shell command line: words, '...' and "..." quoting, and `< FILE`.
fn shell_words(line: &str) -> (Vec<String>, Option<String>) {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    cur.push(q);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    let mut stdin = None;
    if let Some(p) = words.iter().position(|w| w == "<") {
        stdin = words.get(p + 1).cloned();
        words.truncate(p);
    }
    (words, stdin)
}

/// Runs `$ gpudoctor ...` as a reader would from the repository root, in a clean environment
/// (no policy, matrix or cached matrix of this machine's user, no colour).
fn run(cmdline: &str) -> String {
    let (words, stdin) = shell_words(cmdline);
    assert_eq!(words[0], "gpudoctor", "{cmdline}");
    let home = tempfile::tempdir().unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
    c.args(&words[1..])
        .current_dir(root())
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .stdin(match &stdin {
            Some(f) => Stdio::from(std::fs::File::open(root().join(f)).unwrap()),
            None => Stdio::null(),
        });
    let o = c.output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "`{cmdline}` exited {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn normalise(lines: &[String]) -> String {
    let mut v: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v.join("\n")
}

#[test]
fn the_readme_sample_outputs_are_what_gpudoctor_prints() {
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let update = std::env::var_os("README_UPDATE").is_some();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut stale = Vec::new();
    let mut ran = 0;
    // Replace from the end, so earlier line numbers stay valid.
    for b in blocks(&text).into_iter().rev() {
        if b.info != "text" {
            continue;
        }
        let first = b.body.first().cloned().unwrap_or_default();
        if let Some(why) = b.before.split("<!-- readme-test: not run:").nth(1) {
            assert!(
                why.trim_end().ends_with("-->") && why.trim_end().len() > 3 + 5,
                "README.md:{}: say why the block is not run",
                b.start + 1
            );
            continue;
        }
        if let Some(cmd) = first.strip_prefix("$ ") {
            ran += 1;
            let got: Vec<String> = run(cmd).lines().map(str::to_string).collect();
            if normalise(&got) != normalise(&b.body[1..]) {
                stale.push(format!(
                    "README.md:{}: `{cmd}` prints:\n{}\n",
                    b.start + 1,
                    normalise(&got)
                ));
                if update {
                    let mut new = vec![first.clone()];
                    new.extend(got.iter().map(|l| l.trim_end().to_string()));
                    while new.last().is_some_and(|l| l.is_empty()) {
                        new.pop();
                    }
                    lines.splice(b.start..b.start + b.body.len(), new);
                }
            }
        } else if let Some(snap) = snapshot_named(&b.before) {
            let want = strip_ansi(&std::fs::read_to_string(root().join(&snap)).unwrap());
            let want: Vec<String> = want.lines().map(|l| l.trim_end().to_string()).collect();
            let excerpt = normalise(&b.body);
            assert!(
                normalise(&want).contains(&excerpt),
                "README.md:{}: this excerpt is no longer in {snap}:\n{excerpt}",
                b.start + 1
            );
        } else {
            assert!(
                first.starts_with("gpudoctor "),
                "README.md:{}: a ```text block that is neither `$ gpudoctor ...` with its output, nor an excerpt of a named tests/snapshots/*.snap, nor a synopsis: make it one of them so that it is checked",
                b.start + 1
            );
        }
    }
    assert!(ran >= 3, "only {ran} README commands found");
    if update && !stale.is_empty() {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        eprintln!("README.md updated: {} block(s)", stale.len());
        return;
    }
    assert!(
        stale.is_empty(),
        "stale README output (README_UPDATE=1 cargo test --test readme rewrites it):\n{}",
        stale.join("\n")
    );
}

/// The `tests/snapshots/NAME.snap` a paragraph names.
fn snapshot_named(paragraph: &str) -> Option<String> {
    let at = paragraph.find("tests/snapshots/")?;
    let rest = &paragraph[at..];
    let end = rest.find(".snap")? + ".snap".len();
    Some(rest[..end].to_string())
}

/// The README's first steps, on a fresh clone: install, then the two commands.
#[test]
fn the_readme_starts_with_an_install_step_and_the_two_commands() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let first = blocks(&text).into_iter().next().unwrap();
    assert_eq!(first.info, "sh");
    let cmds: Vec<&str> = first
        .body
        .iter()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        cmds[0].starts_with("cargo install --locked --path ."),
        "{cmds:?}"
    );
    assert!(cmds.contains(&"gpudoctor check"), "{cmds:?}");
    assert!(cmds.contains(&"scripts/test.sh"), "{cmds:?}");
    assert!(Path::new(&root().join("scripts/test.sh")).is_file());
    // Every `gpudoctor SUBCOMMAND` the README shows exists.
    let help = common::Run::new().args(["--help"]).run().stdout;
    for b in blocks(&text) {
        for l in b.body.iter().filter(|l| l.starts_with("gpudoctor ")) {
            let sub = l.split_whitespace().nth(1).unwrap();
            assert!(
                help.contains(&format!("  {sub} ")),
                "README shows `gpudoctor {sub}`, which --help does not list"
            );
        }
    }
}
