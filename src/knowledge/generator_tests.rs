//! Test code shared by the knowledge tests: a generator's check run from `cargo test`.

/// Runs a knowledge generator's check (`scripts/knowledge/SCRIPT ARGS`) with the test venv's
/// Python (scripts/test-setup.sh makes it, with PyYAML), else `python3`, and fails the test with
/// its output when the committed data differs from what it generates.
pub(crate) fn assert_generator_check(script: &str, args: &[&str]) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = root.join(".venv-test/bin/python");
    let python = if venv.exists() {
        venv
    } else {
        std::path::PathBuf::from("python3")
    };
    let out = std::process::Command::new(&python)
        .arg(root.join(script))
        .args(args)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "{script} {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
