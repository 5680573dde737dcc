//! The release packaging and install path without a release build: scripts/package.sh packs the
//! debug binary (stripped) exactly as scripts/release.sh packs a release one, then
//! scripts/install.sh (run by `sh`, dash on Debian: POSIX only) verifies and installs it into a
//! temporary prefix. Also scripts/check-glibc.sh, which release.sh trusts to reject a binary
//! that needs a glibc newer than 2.17, on the binary built here.
// Linux only: install.sh installs Linux release archives.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn arch() -> &'static str {
    std::env::consts::ARCH
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// dist/ as package.sh writes it, made once per test run (a stripped copy of the debug binary:
/// the layout matters here, not the size).
fn dist() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        let bin = d.join("gpudoctor");
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(&bin)
            .arg(env!("CARGO_BIN_EXE_gpudoctor"))
            .status()
            .is_ok_and(|s| s.success());
        if !stripped {
            std::fs::copy(env!("CARGO_BIN_EXE_gpudoctor"), &bin).unwrap();
        }
        let out = d.join("dist");
        let o = Command::new("bash")
            .arg(Path::new(ROOT).join("scripts/package.sh"))
            .args(["--arch", arch(), "--bin"])
            .arg(&bin)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "package.sh: {}", text(&o.stderr));
        out
    })
}

fn tarball_name() -> String {
    let version = env!("CARGO_PKG_VERSION");
    format!("gpudoctor-{version}-{}-linux-gnu.tar.gz", arch())
}

/// A private copy of dist/ to change.
fn dist_copy(into: &Path) -> PathBuf {
    let d = into.join("dist");
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(dist()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    d
}

/// `sh install.sh ARGS` with a small environment (HOME, PATH of system directories).
fn install(script: &Path, args: &[&std::ffi::OsStr]) -> Output {
    Command::new("sh")
        .arg(script)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap()
}

#[test]
fn the_tarball_holds_the_binary_man_page_completions_and_readme() {
    let tb = dist().join(tarball_name());
    let o = Command::new("tar").arg("-tzf").arg(&tb).output().unwrap();
    assert!(o.status.success());
    let top = tarball_name().trim_end_matches(".tar.gz").to_string();
    let names: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    for f in [
        "bin/gpudoctor",
        "share/man/man1/gpudoctor.1",
        "share/man/man1/gpudoctor-check.1",
        "share/bash-completion/completions/gpudoctor",
        "share/zsh/site-functions/_gpudoctor",
        "share/fish/vendor_completions.d/gpudoctor.fish",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
    ] {
        let want = format!("{top}/{f}");
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    // SHA256SUMS names the tarball and install.sh, with the right sums.
    let o = Command::new("sha256sum")
        .arg("-c")
        .arg("SHA256SUMS")
        .current_dir(dist())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.contains(&format!("{}: OK", tarball_name())), "{out}");
    assert!(out.contains("install.sh: OK"), "{out}");
}

#[test]
fn install_verifies_then_installs_into_the_prefix() {
    let t = tempfile::tempdir().unwrap();
    let d = dist_copy(t.path());
    let prefix = t.path().join("prefix");
    // Something of the user's already in the prefix stays as it is.
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::write(prefix.join("bin/mytool"), "mine").unwrap();
    // No tarball named: install.sh takes the one for this machine beside itself.
    let o = install(
        &d.join("install.sh"),
        &["--prefix".as_ref(), prefix.as_os_str()],
    );
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let said = text(&o.stdout);
    assert!(
        said.starts_with(&format!("verified {}", tarball_name())),
        "{said}"
    );
    assert!(
        said.contains("is not on PATH"),
        "the prefix is not on PATH: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(prefix.join("bin/mytool")).unwrap(),
        "mine"
    );

    let bin = prefix.join("bin/gpudoctor");
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert!(v.status.success());
    let v = text(&v.stdout);
    assert!(
        v.starts_with(&format!("gpudoctor {}\n", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(v.contains("\ncommit: ") && v.contains("\nmatrix: "), "{v}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&bin).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o755);

    let man = std::fs::read_to_string(prefix.join("share/man/man1/gpudoctor.1")).unwrap();
    assert!(
        man.contains(".TH gpudoctor 1"),
        "{}",
        &man[..man.len().min(300)]
    );
    let bash = std::fs::read_to_string(prefix.join("share/bash-completion/completions/gpudoctor"))
        .unwrap();
    assert!(bash.contains("_gpudoctor()"), "bash completion");
    let zsh = std::fs::read_to_string(prefix.join("share/zsh/site-functions/_gpudoctor")).unwrap();
    assert!(zsh.starts_with("#compdef gpudoctor"), "zsh completion");
    let fish =
        std::fs::read_to_string(prefix.join("share/fish/vendor_completions.d/gpudoctor.fish"))
            .unwrap();
    assert!(fish.contains("complete -c gpudoctor"), "fish completion");
    assert!(prefix.join("share/doc/gpudoctor/README.md").is_file());

    // The installed bash completion works from where bash-completion looks for it.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; COMP_WORDS=(gpudoctor ex); COMP_CWORD=1; _gpudoctor gpudoctor ex gpudoctor; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            prefix.join("share/bash-completion/completions/gpudoctor").display()
        ))
        .output()
        .unwrap();
    assert_eq!(text(&o.stdout).trim(), "explain", "{}", text(&o.stderr));

    // Installing again (an upgrade) replaces the files and leaves no temporary file behind.
    let o = install(
        &d.join("install.sh"),
        &["--prefix".as_ref(), prefix.as_os_str()],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let leftovers: Vec<_> = walk(&prefix)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("install-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_tarball_whose_checksum_differs_is_not_installed() {
    let t = tempfile::tempdir().unwrap();
    let d = dist_copy(t.path());
    let tb = d.join(tarball_name());
    let mut bytes = std::fs::read(&tb).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&tb, bytes).unwrap();
    let prefix = t.path().join("prefix");
    let o = install(
        &d.join("install.sh"),
        &["--prefix".as_ref(), prefix.as_os_str(), tb.as_os_str()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("checksum mismatch for {}", tarball_name())),
        "{err}"
    );
    assert!(!prefix.exists(), "nothing is installed");
}

#[test]
fn no_checksum_no_install() {
    let t = tempfile::tempdir().unwrap();
    let d = dist_copy(t.path());
    let tb = d.join(tarball_name());
    let prefix = t.path().join("prefix");
    let args = [prefix.as_os_str(), tb.as_os_str()];

    // SHA256SUMS without the tarball's line.
    let sums = std::fs::read_to_string(d.join("SHA256SUMS")).unwrap();
    let other: String = sums
        .lines()
        .filter(|l| !l.ends_with(&tarball_name()))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(other, sums);
    std::fs::write(d.join("SHA256SUMS"), other).unwrap();
    let o = install(
        &d.join("install.sh"),
        &["--prefix".as_ref(), args[0], args[1]],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains(&format!("has no line for {}", tarball_name())),
        "{}",
        text(&o.stderr)
    );

    // No SHA256SUMS at all.
    std::fs::remove_file(d.join("SHA256SUMS")).unwrap();
    let o = install(
        &d.join("install.sh"),
        &["--prefix".as_ref(), args[0], args[1]],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("SHA256SUMS not found"),
        "{}",
        text(&o.stderr)
    );
    assert!(!prefix.exists(), "nothing is installed");
}

#[test]
fn a_tarball_for_another_architecture_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = dist_copy(t.path());
    let other = if arch() == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    let renamed = tarball_name().replace(arch(), other);
    std::fs::rename(d.join(tarball_name()), d.join(&renamed)).unwrap();
    let o = Command::new("sha256sum")
        .arg(&renamed)
        .current_dir(&d)
        .output()
        .unwrap();
    std::fs::write(d.join("SHA256SUMS"), &o.stdout).unwrap();
    let prefix = t.path().join("prefix");
    let o = install(
        &d.join("install.sh"),
        &[
            "--prefix".as_ref(),
            prefix.as_os_str(),
            d.join(&renamed).as_os_str(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("is for {other}, this machine is {}", arch())),
        "{err}"
    );
    // Bad arguments exit 2.
    let o = install(&d.join("install.sh"), &["--frobnicate".as_ref()]);
    assert_eq!(o.status.code(), Some(2));
    let o = install(&d.join("install.sh"), &["/nonexistent/x.tar.gz".as_ref()]);
    assert_eq!(o.status.code(), Some(2));
}

/// The binary built here needs the host's glibc (newer than 2.17 on any current distribution):
/// the checker must say so and name the symbols; with a limit above it, it passes.
#[test]
fn check_glibc_rejects_a_binary_that_needs_a_newer_glibc() {
    let script = Path::new(ROOT).join("scripts/check-glibc.sh");
    let bin = env!("CARGO_BIN_EXE_gpudoctor");
    let o = Command::new("bash")
        .arg(&script)
        .args(["--max", "999.0", bin])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let top = out
        .split("GLIBC_")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no version in {out}"))
        .to_string();
    assert!(out.contains("needs ") && out.contains("libc.so.6"), "{out}");
    let o = Command::new("bash")
        .arg(&script)
        .args(["--max", "2.17", bin])
        .output()
        .unwrap();
    let minor: u32 = top.split('.').nth(1).unwrap().parse().unwrap();
    if minor > 17 {
        assert_eq!(o.status.code(), Some(1));
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("needs GLIBC_{top}, newer than 2.17")),
            "{err}"
        );
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("  GLIBC_{top} "))),
            "names the symbols: {err}"
        );
    } else {
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    // Not an ELF file with glibc versions.
    let o = Command::new("bash")
        .arg(&script)
        .arg(Path::new(ROOT).join("README.md"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}
