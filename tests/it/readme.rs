//! The README's sample outputs cannot go stale: every ```text block that starts with
//! `$ gpudoctor ...` is run here (from the repository root, on fixed inputs: `--snapshot`,
//! `--no-probe --assume`, a fixture on stdin) and its output compared with the block; a block
//! quoted from an insta snapshot (`tests/it/snapshots/NAME.snap` named in the paragraph before it)
//! must still be in that snapshot; and any other ```text block must be a synopsis (its first
//! line `gpudoctor ...`), so no sample output goes unchecked. A block that cannot be run here
//! (it needs a GPU, its output holds times) says so right before it, with its reason:
//! `<!-- readme-test: not run: REASON -->`.
//!
//! `README_UPDATE=1 cargo test --test it readme::` rewrites the outputs in README.md in place; check
//! the diff.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;
use common::root;

use std::path::Path;
use std::process::{Command, Stdio};

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
                "README.md:{}: a ```text block that is neither `$ gpudoctor ...` with its output, nor an excerpt of a named tests/it/snapshots/*.snap, nor a synopsis: make it one of them so that it is checked",
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
        "stale README output (README_UPDATE=1 cargo test --test it readme::rewrites it):\n{}",
        stale.join("\n")
    );
}

/// The `tests/it/snapshots/NAME.snap` a paragraph names.
fn snapshot_named(paragraph: &str) -> Option<String> {
    let at = paragraph.find("tests/it/snapshots/")?;
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
    assert_eq!(cmds, ["pip install gpudoctor", "gpudoctor check"]);
    // Issue 32: until a wheel is on PyPI, one command builds and installs it locally; then the
    // build from source and the tests.
    let cmds_of = |b: &Block| -> Vec<String> {
        b.body
            .iter()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let all = blocks(&text);
    let local = cmds_of(&all[1]);
    assert_eq!(
        local,
        ["scripts/release.sh --arch x86_64 --wheel-only && pip install dist/gpudoctor-*_x86_64.whl"]
    );
    let release = std::fs::read_to_string(root().join("scripts/release.sh")).unwrap();
    assert!(
        release.contains("--wheel-only) WHEEL_ONLY=1"),
        "release.sh has no --wheel-only"
    );
    let source = cmds_of(&all[2]);
    assert!(
        source[0].starts_with("cargo install --locked --path ."),
        "{source:?}"
    );
    assert!(source.iter().any(|c| c == "scripts/test.sh"), "{source:?}");
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

/// The README's facts that come from the binary and the matrix live between
/// `<!-- generated: NAME -->` and `<!-- end generated -->`; this is what each must say.
fn generated(name: &str) -> String {
    use gpudoctor::version::{cmp_dotted, dotted};
    let m = gpudoctor::matrix::Matrix::embedded().unwrap();
    let span = |vs: Vec<&str>| -> (String, String) {
        let mut v: Vec<(Vec<u64>, &str)> = vs
            .into_iter()
            .filter_map(|s| dotted(s).map(|d| (d, s)))
            .collect();
        v.sort_by(|a, b| cmp_dotted(&a.0, &b.0));
        (v[0].1.to_string(), v[v.len() - 1].1.to_string())
    };
    match name {
        "coverage" => {
            let cuda = span(m.toolkits.iter().map(|r| r.cuda.as_str()).collect());
            let torch = span(m.pytorch.iter().map(|r| r.torch.as_str()).collect());
            let wheels: usize = m.pytorch.iter().map(|r| r.variants.len()).sum();
            let tf = span(m.tensorflow.iter().map(|r| r.tf.as_str()).collect());
            let jax_from = span(m.jax.iter().map(|r| r.from.as_str()).collect()).0;
            let jax_below = span(m.jax.iter().map(|r| r.below.as_str()).collect()).1;
            format!(
                "The embedded matrix (data version {}) covers CUDA toolkits {}–{} ({} rows), {} driver branches, {} GPU models, {} cuDNN rows, PyTorch {}–{} ({} releases, {} CUDA wheels), TensorFlow {}–{} ({} releases) and JAX {} up to (not including) {} ({} ranges); `gpudoctor matrix show` prints it all.",
                m.data_version,
                cuda.0,
                cuda.1,
                m.toolkits.len(),
                m.branches.len(),
                m.gpus.len(),
                m.cudnn.len(),
                torch.0,
                torch.1,
                m.pytorch.len(),
                wheels,
                tf.0,
                tf.1,
                m.tensorflow.len(),
                jax_from,
                jax_below,
                m.jax.len()
            )
        }
        "categories" => {
            let all: Vec<String> = gpudoctor::report::Category::ALL
                .iter()
                .map(|c| format!("`{}`", c.as_str()))
                .collect();
            format!("Categories are a fixed vocabulary: {}.", all.join(", "))
        }
        other => panic!("README.md names an unknown generated block {other:?}"),
    }
}

/// Finds the generated blocks: (name, first line of the body, line after the body).
fn generated_blocks(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(rest) = lines[i].strip_prefix("<!-- generated: ") {
            let name = rest.trim_end_matches(" -->").trim().to_string();
            let mut j = i + 1;
            while j < lines.len() && lines[j] != "<!-- end generated -->" {
                j += 1;
            }
            assert!(
                j < lines.len(),
                "README.md: generated block {name} has no end"
            );
            out.push((name, i + 1, j));
            i = j;
        }
        i += 1;
    }
    out
}

/// Issue 28: the README said PyTorch 1.13–2.14, JAX to 0.11 and CUDA 10.0–13.3 while the
/// matrix held 1.0–2.15, 0.12.1 and 8.0–13.5, and its category list lacked two categories.
/// Those facts are now generated blocks, compared here with the binary's own data.
#[test]
fn the_readme_facts_are_the_binarys_and_the_matrixs() {
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let found = generated_blocks(&lines);
    let names: Vec<&str> = found.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(names.contains(&"coverage"), "{names:?}");
    assert!(names.contains(&"categories"), "{names:?}");
    let update = std::env::var("README_UPDATE").as_deref() == Ok("1");
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    let mut stale = Vec::new();
    for (name, start, end) in &found {
        out.extend(lines[at..*start].iter().map(|s| s.to_string()));
        let want = generated(name);
        let have = lines[*start..*end].join(" ");
        if have.split_whitespace().collect::<Vec<_>>()
            != want.split_whitespace().collect::<Vec<_>>()
        {
            stale.push(format!("{name}:\n  README: {have}\n  binary: {want}"));
        }
        out.push(want);
        at = *end;
    }
    out.extend(lines[at..].iter().map(|s| s.to_string()));
    if update {
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
        return;
    }
    assert!(
        stale.is_empty(),
        "README.md is out of date (README_UPDATE=1 cargo test --test it readme::rewrites it):\n{}",
        stale.join("\n")
    );
}

/// The synopsis's `--format` lists are clap's: issue 28 found `stress --format` without `line`.
#[test]
fn the_readme_synopsis_lists_every_format_each_command_takes() {
    use clap::CommandFactory;
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let synopsis = blocks(&text)
        .into_iter()
        .find(|b| {
            b.body
                .first()
                .is_some_and(|l| l.starts_with("gpudoctor check "))
        })
        .expect("the Commands synopsis");
    let cli = gpudoctor::cli::Cli::command();
    let mut command = String::new();
    let mut checked = 0;
    for line in &synopsis.body {
        if let Some(rest) = line.strip_prefix("gpudoctor ") {
            command = rest.split_whitespace().next().unwrap().to_string();
        }
        let Some(at) = line.find("--format ") else {
            continue;
        };
        let listed: Vec<String> = line[at + "--format ".len()..]
            .trim_start_matches('[')
            .split(|c: char| c.is_whitespace() || c == ']')
            .next()
            .unwrap()
            .split('|')
            .map(str::to_string)
            .collect();
        let sub = cli.find_subcommand(&command).unwrap();
        let arg = sub
            .get_arguments()
            .find(|a| a.get_long() == Some("format"))
            .unwrap_or_else(|| panic!("{command} has no --format"));
        let mut values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        values.sort();
        assert_eq!(
            sorted, values,
            "README's `gpudoctor {command} --format` list"
        );
        checked += 1;
    }
    assert!(checked >= 3, "{checked} --format lists found");
}

/// The release files the README promises are the ones scripts/release.sh says it writes, and
/// install.sh is where the README sends the user (issue 28: it said `sh install.sh` with no
/// word of where install.sh or the tarball come from).
#[test]
fn the_readme_release_files_are_the_ones_release_sh_writes() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let release = std::fs::read_to_string(root().join("scripts/release.sh")).unwrap();
    let section = text
        .split("## Install a release build")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    assert!(section.contains("scripts/release.sh"), "{section}");
    assert!(section.contains("cd dist && sh install.sh"), "{section}");
    for f in [
        "linux-gnu.tar.gz",
        "install.sh",
        "gpudoctor-matrix.yaml",
        "SHA256SUMS",
    ] {
        assert!(section.contains(f), "README does not name {f}");
        assert!(release.contains(f), "scripts/release.sh does not write {f}");
    }
    assert!(
        release.contains("OUT=dist"),
        "release.sh's default folder is not dist/"
    );
}
