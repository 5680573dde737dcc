//! The helpers the integration tests share (one copy each): a small builder for running the real
//! gpudoctor binary with a controlled environment (`Run::new().args([..]).env(k, v).run()`), the
//! fixtures' paths, the stand-in libraries, reading a JSON report.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod agree;

pub struct Run {
    cmd: Command,
}

pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
    /// The rule ids of a JSON report, in order.
    pub fn rules(&self) -> Vec<String> {
        rule_ids(&self.json())
    }
}

/// The rule ids of a JSON report's findings, in order.
pub fn rule_ids(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// The finding of `rule` in a JSON report; panics with the findings when there is none.
pub fn finding<'a>(report: &'a serde_json::Value, rule: &str) -> &'a serde_json::Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule)
        .unwrap_or_else(|| panic!("no {rule} finding in {:#}", report["findings"]))
}

impl Run {
    /// gpudoctor with an environment holding only PATH (system directories) and HOME.
    #[cfg(not(windows))]
    pub fn new() -> Run {
        Run::of(Path::new(env!("CARGO_BIN_EXE_gpudoctor")))
    }
    /// Like [`Run::new`], with another copy of the binary (one placed in a venv's bin/).
    #[cfg(not(windows))]
    pub fn of(binary: &Path) -> Run {
        let mut cmd = Command::new(binary);
        cmd.env_clear()
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("HOME", "/nonexistent-home")
            .env("NO_COLOR", "1");
        Run { cmd }
    }
    /// gpudoctor with an environment holding only what every Windows process has (SystemRoot,
    /// windir, the system PATH, the profile folders), pointed at a profile that does not exist.
    #[cfg(windows)]
    pub fn new() -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpudoctor"));
        let sysroot = std::env::var("SystemRoot").unwrap_or_else(|_| r"C:\windows".to_string());
        cmd.env_clear()
            .env("SystemRoot", &sysroot)
            .env("windir", &sysroot)
            .env("PATH", format!(r"{sysroot}\system32;{sysroot}"))
            .env("PATHEXT", ".COM;.EXE;.BAT;.CMD")
            .env("USERPROFILE", r"C:\nonexistent-home")
            .env("LOCALAPPDATA", r"C:\nonexistent-home\AppData\Local")
            .env("NO_COLOR", "1");
        Run { cmd }
    }
    pub fn args<I, S>(mut self, a: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(a);
        self
    }
    pub fn arg_path(mut self, p: &Path) -> Run {
        self.cmd.arg(p);
        self
    }
    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Run {
        self.cmd.env(k, v);
        self
    }
    /// The command, to run it another way (raw bytes, a terminal).
    pub fn into_command(self) -> Command {
        self.cmd
    }
    pub fn run(mut self) -> Ran {
        let out = self.cmd.output().expect("gpudoctor runs");
        let code = out
            .status
            .code()
            .unwrap_or_else(|| panic!("gpudoctor was killed by a signal: {:?}", out.status));
        let ran = Ran {
            code,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            !ran.stderr.contains("panicked"),
            "gpudoctor panicked:\n{}",
            ran.stderr
        );
        ran
    }
}

/// The repository's root (where README.md, scripts/ and tests/ are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures() -> PathBuf {
    root().join("tests/fixtures")
}

/// A recorded snapshot of tests/fixtures/snapshots, e.g. "synthetic-2xh100.json".
pub fn snapshot_fixture(name: &str) -> PathBuf {
    fixtures().join("snapshots").join(name)
}

/// A recorded snapshot of tests/fixtures/snapshots as JSON, to change before a check.
pub fn snapshot_json(name: &str) -> serde_json::Value {
    let p = snapshot_fixture(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `gpudoctor check --format json --snapshot S EXTRA...` on the snapshot `snap` (written to a
/// temporary file).
pub fn check_json(snap: &serde_json::Value, extra: &[&str]) -> Ran {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("snap.json");
    std::fs::write(&p, snap.to_string()).unwrap();
    Run::new()
        .args(["check", "--format", "json", "--snapshot"])
        .arg_path(&p)
        .args(extra)
        .run()
}

/// True when the tests run as root (CI does; some cases need it: mknod, mounts, reading what
/// only root may).
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The venv made by scripts/test-setup.sh; tests that need it fail with a clear message
/// when it is missing, unless GPUDOCTOR_SKIP_PYPI_TESTS=1.
pub fn test_venv() -> Option<PathBuf> {
    let v = std::env::var("GPUDOCTOR_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(".venv-test"));
    if v.join(".gpudoctor-test-setup-v5").exists() {
        return Some(v);
    }
    if std::env::var("GPUDOCTOR_SKIP_PYPI_TESTS").as_deref() == Ok("1") {
        eprintln!(
            "skipping: {} is missing and GPUDOCTOR_SKIP_PYPI_TESTS=1",
            v.display()
        );
        return None;
    }
    panic!(
        "{} is missing: run scripts/test-setup.sh first (it installs real CUDA libraries from PyPI), \
         or set GPUDOCTOR_SKIP_PYPI_TESTS=1 to skip these tests",
        v.display()
    );
}

/// True when this machine has an NVIDIA driver loaded (the no-driver tests then do not apply).
pub fn has_driver() -> bool {
    Path::new("/proc/driver/nvidia/version").exists()
}

/// Builds the C stand-in `tests/standin/<src>` into `dir/<name>` with `cc` (and `defines`, such
/// as "-DR470"): libraries that answer as a broken driver does, for faults real ones can't show.
pub fn build_standin(src: &str, dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let src = root().join("tests/standin").join(src);
    let so = dir.join(name);
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&so)
        .args(defines)
        .arg(&src)
        .status()
        .expect("cc, to build a stand-in library");
    assert!(st.success(), "building {}", src.display());
    so
}

/// Writes an executable script at `path` (a stand-in for a tool: python3, nvidia-smi, a helper).
pub fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The embedded matrix as one file with `data_version` (the form `matrix update` installs).
pub fn matrix_single_file(data_version: &str) -> String {
    let mut out = format!("schema: gpudoctor.matrix/1\ndata_version: \"{data_version}\"\n");
    for (_, text) in gpudoctor::matrix::EMBEDDED {
        for line in text.lines() {
            if !line.starts_with("schema:") && !line.starts_with("data_version:") {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Copies a directory tree (a site-packages laid out for a test).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// `gpudoctor run` with a fast sampler (every 0.1 s); add `--`, the command and its arguments.
pub fn gpudoctor_run() -> Run {
    Run::new()
        .env("GPUDOCTOR_RUN_INTERVAL", "0.1")
        .args(["run"])
}

/// A JSON report file (`run --report`, `--save`'s report.json), read and parsed.
pub fn report_file(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The evidence lines of one of `run`'s causes, as one text.
pub fn evidence(cause: &serde_json::Value) -> String {
    cause["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a prepared gpudoctor command whose stdout is a JSON report: its exit code, the report,
/// and how long it took; panics with stdout and stderr when stdout is not JSON.
pub fn json_output(mut c: Command) -> (i32, serde_json::Value, std::time::Duration) {
    let t = std::time::Instant::now();
    let out = c.output().unwrap();
    let took = t.elapsed();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v, took)
}

/// The Python that runs the knowledge generators (scripts/knowledge/): the test venv's
/// (scripts/test-setup.sh makes it, with PyYAML), else `python3` on PATH.
pub fn python() -> PathBuf {
    let venv = root().join(".venv-test/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}
