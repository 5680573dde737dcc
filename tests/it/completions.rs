//! Shell completions and the man page, generated from the clap definition, checked by their
//! consumers: bash loads the completion and completes subcommands and flags; groff renders the
//! man page without warnings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Run;

#[test]
fn bash_completes_subcommands_and_flags() {
    let r = Run::new().args(["completions", "bash"]).run();
    assert_eq!(r.code, 0);
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("gpudoctor.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let complete = |words: &str, cword: usize| {
        let prog = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; _gpudoctor gpudoctor \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let o = std::process::Command::new("bash")
            .args(["-c", &prog])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(complete("gpudoctor st", 1), ["stress"]);
    let flags = complete("gpudoctor stress --m", 2);
    assert!(
        flags.contains(&"--minutes".to_string())
            && flags.contains(&"--memory-fraction".to_string()),
        "{flags:?}"
    );
    assert!(
        !flags.iter().any(|f| f == "--inject-faults"),
        "hidden flags stay hidden"
    );
    let formats = complete("gpudoctor check --format ", 3);
    assert_eq!(
        formats,
        ["human", "json", "markdown", "prometheus", "junit", "line"]
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let r = Run::new().args(["completions", shell]).run();
        assert_eq!(r.code, 0, "{shell}");
        assert!(r.stdout.contains("stress"), "{shell}");
    }
    assert_eq!(Run::new().args(["completions", "tcsh"]).run().code, 2);
}

#[test]
fn the_man_page_renders() {
    let r = Run::new().args(["man"]).run();
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains(".TH gpudoctor 1"),
        "{}",
        &r.stdout[..200.min(r.stdout.len())]
    );
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("gpudoctor.1");
    std::fs::write(&page, &r.stdout).unwrap();
    let o = std::process::Command::new("groff")
        .args(["-man", "-T", "utf8", "-ww"])
        .arg(&page)
        .output();
    let Ok(o) = o else {
        assert!(std::env::var_os("CI").is_none(), "groff is missing");
        return;
    };
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let warnings = String::from_utf8_lossy(&o.stderr);
    assert!(warnings.trim().is_empty(), "groff warnings: {warnings}");
    for sub in [
        "check",
        "stress",
        "explain",
        "snapshot",
        "recommend",
        "matrix",
        "rules",
    ] {
        assert!(text.contains(sub), "{sub} is not in the man page");
    }
}
