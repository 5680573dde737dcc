//! Fixes in the machine's own terms (issue 31): the data renders for every family, names only
//! package managers the machine has, Debian's package names exist in Debian's archive, and the
//! Python commands run (in dry-run form) in a real venv made by uv and by python -m venv.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gpudoctor::fixes::{
    driver_data, driver_fix, python_install, DriverAction, PyInstall, Terms, Values,
};
use gpudoctor::snapshot::PythonEnv;

/// Minimal os-release facts per distribution (ID, ID_LIKE, VERSION_ID) and the package managers
/// such a machine has, as the os-release files of those distributions say.
fn machines() -> Vec<(Terms, Vec<&'static str>)> {
    let t = |id: &str, like: &[&str], v: &str, pm: &[&str]| -> (Terms, Vec<&'static str>) {
        let pm: Vec<&'static str> = pm
            .iter()
            .map(|p| -> &'static str { Box::leak(p.to_string().into_boxed_str()) })
            .collect();
        (
            Terms {
                os_id: Some(id.into()),
                id_like: like.iter().map(|s| s.to_string()).collect(),
                version_id: Some(v.into()),
                managers: Some(pm.iter().map(|s| s.to_string()).collect()),
                ..Terms::default()
            },
            pm,
        )
    };
    vec![
        t("ubuntu", &["debian"], "20.04", &["apt"]),
        t("ubuntu", &["debian"], "22.04", &["apt"]),
        t("ubuntu", &["debian"], "24.04", &["apt"]),
        t("debian", &[], "11", &["apt"]),
        t("debian", &[], "12", &["apt"]),
        t("rhel", &["fedora"], "8.10", &["dnf", "yum"]),
        t("rhel", &["fedora"], "9.4", &["dnf", "yum"]),
        t(
            "rocky",
            &["rhel", "centos", "fedora"],
            "9.4",
            &["dnf", "yum"],
        ),
        t(
            "almalinux",
            &["rhel", "centos", "fedora"],
            "8.10",
            &["dnf", "yum"],
        ),
        t("amzn", &["centos", "rhel", "fedora"], "2", &["yum"]),
        t("amzn", &["fedora"], "2023", &["dnf", "yum"]),
        t("sles", &["suse"], "15.6", &["zypper"]),
        t("opensuse-leap", &["suse", "opensuse"], "15.6", &["zypper"]),
        t("fedora", &[], "41", &["dnf"]),
        t("arch", &[], "", &["pacman"]),
    ]
}

/// Every install method a fix is rendered for: unknown, NVIDIA's repository, the .run installer,
/// precompiled modules.
const METHODS: [Option<&str>; 4] = [
    None,
    Some("nvidia-repo"),
    Some("runfile"),
    Some("precompiled"),
];

const MANAGERS: &[&str] = &[
    "apt",
    "apt-get",
    "ubuntu-drivers",
    "dnf",
    "yum",
    "zypper",
    "pacman",
    "apk",
    "winget",
    "choco",
];

/// The package-manager words a command runs (after sudo, in each `&&` / `;` part).
fn managers_in(cmd: &str) -> Vec<String> {
    cmd.split(['&', ';', '|'])
        .filter_map(|part| {
            let p = part.trim();
            let p = p.strip_prefix("sudo ").unwrap_or(p);
            let w = p.split_whitespace().next()?;
            MANAGERS.contains(&w).then(|| w.to_string())
        })
        .collect()
}

#[test]
fn every_fix_renders_for_every_family_with_only_its_own_package_manager() {
    let v = Values {
        branch: "580",
        version: Some("580.95.05"),
    };
    let mut rendered = 0;
    for (terms, pm) in machines() {
        let family = terms.family();
        assert!(family.is_some(), "no family for {terms:?}");
        for method in METHODS {
            let terms = Terms {
                install_method: method.map(str::to_string),
                ..terms.clone()
            };
            for &a in DriverAction::ALL {
                let f = driver_fix(&terms, a, &v);
                assert!(!f.text.is_empty());
                for c in &f.commands {
                    rendered += 1;
                    assert!(
                        !c.contains('<') && !c.contains('{'),
                        "placeholder left in {c:?} ({terms:?}, {a:?})"
                    );
                    for m in managers_in(c) {
                        let ok = pm.contains(&m.as_str())
                            || (m == "apt-get" && pm.contains(&"apt"))
                            || (m == "ubuntu-drivers" && terms.os_id.as_deref() == Some("ubuntu"))
                            // Jetson boards are Ubuntu: JetPack's row is Ubuntu's on any host.
                            || a == DriverAction::Jetpack;
                        assert!(ok, "{c:?} names {m}, which {terms:?} lacks ({a:?})");
                    }
                    assert_eq!(
                        f.needs_root,
                        f.commands.iter().any(|c| c.starts_with("sudo ")) || f.needs_root
                    );
                }
                if f.commands.iter().any(|c| c.starts_with("sudo ")) {
                    assert!(f.needs_root, "{f:?}");
                }
            }
        }
    }
    assert!(rendered > 200, "only {rendered} commands rendered");
}

/// The package managers each recorded distribution ships (its documentation's install
/// commands: apt on Debian and Ubuntu, dnf and yum on RHEL-likes 8/9, Fedora and Amazon Linux
/// 2023, yum only on Amazon Linux 2, zypper on SLES, pacman on Arch).
fn managers_of(file: &str) -> &'static [&'static str] {
    match file.split('-').next().unwrap_or("") {
        "ubuntu" | "debian" => &["apt"],
        "amzn" if file == "amzn-2" => &["yum"],
        "rhel" | "rocky" | "almalinux" | "amzn" | "fedora" => &["dnf", "yum"],
        "sles" => &["zypper"],
        "arch" => &["pacman"],
        _ => &[],
    }
}

/// Every fix rendered for each real /etc/os-release recorded under tests/fixtures/os-release
/// (parsed by the probe's own parser) finds the distribution's family and names only package
/// managers that distribution has.
#[test]
fn every_fix_renders_for_each_recorded_os_release() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/os-release");
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".md") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let o =
            gpudoctor::probe::os::os_release_from(&gpudoctor::probe::os::parse_os_release(&text));
        let pm = managers_of(&name);
        assert!(
            !pm.is_empty(),
            "{name}: no package managers listed for it in this test"
        );
        let base = Terms {
            os_id: Some(o.id.clone()),
            id_like: o.id_like.clone(),
            version_id: o.version_id.clone(),
            ..Terms::default()
        };
        let family = base
            .family()
            .unwrap_or_else(|| panic!("{name}: no family for {o:?}"));
        for method in METHODS {
            let terms = Terms {
                install_method: method.map(str::to_string),
                ..base.clone()
            };
            for &a in DriverAction::ALL {
                if a == DriverAction::Jetpack {
                    continue;
                }
                let f = driver_fix(
                    &terms,
                    a,
                    &Values {
                        branch: "580",
                        version: Some("580.95.05"),
                    },
                );
                for c in &f.commands {
                    for m in managers_in(c) {
                        let ok = pm.contains(&m.as_str())
                            || (m == "apt-get" && pm.contains(&"apt"))
                            || (m == "ubuntu-drivers" && o.id == "ubuntu");
                        assert!(ok, "{name} ({}): {c:?} names {m}", family.id);
                    }
                }
            }
        }
    }
    assert!(files >= 15, "only {files} recorded os-release files");
}

#[test]
fn the_branch_is_filled_in_and_the_family_decides_the_command() {
    let v = Values {
        branch: "580",
        version: None,
    };
    let ubuntu = Terms {
        os_id: Some("ubuntu".into()),
        version_id: Some("24.04".into()),
        ..Terms::default()
    };
    let rocky = Terms {
        os_id: Some("rocky".into()),
        id_like: vec!["rhel".into()],
        version_id: Some("9.4".into()),
        ..Terms::default()
    };
    assert_eq!(
        driver_fix(&ubuntu, DriverAction::Install, &v).commands,
        ["sudo ubuntu-drivers install nvidia:580", "sudo reboot"]
    );
    assert_eq!(
        driver_fix(&rocky, DriverAction::InstallOpen, &v).commands,
        [
            "sudo dnf module enable -y nvidia-driver:580-open",
            "sudo dnf install nvidia-open",
            "sudo reboot"
        ]
    );
    // A .run install is upgraded with a .run, never with packages.
    let run = Terms {
        install_method: Some("runfile".into()),
        ..ubuntu.clone()
    };
    let f = driver_fix(&run, DriverAction::Install, &v);
    assert!(
        f.commands.iter().all(|c| managers_in(c).is_empty()),
        "{f:?}"
    );
    assert!(
        f.commands[0].contains("NVIDIA-Linux-$(uname -m)-580."),
        "{f:?}"
    );
    // An unknown family: how to find out, NVIDIA's guide, no other distribution's command.
    let unknown = Terms {
        os_id: Some("gentoo".into()),
        ..Terms::default()
    };
    let f = driver_fix(&unknown, DriverAction::Install, &v);
    assert_eq!(f.commands, ["cat /etc/os-release"]);
    assert!(f
        .text
        .contains("docs.nvidia.com/datacenter/tesla/driver-installation-guide"));
    // Debian 12 carries 535 itself; 580 comes from NVIDIA's repository.
    let deb = Terms {
        os_id: Some("debian".into()),
        version_id: Some("12".into()),
        ..Terms::default()
    };
    let own = driver_fix(
        &deb,
        DriverAction::Install,
        &Values {
            branch: "535",
            version: None,
        },
    );
    assert!(
        own.commands.iter().any(|c| c.ends_with(" nvidia-driver")),
        "{own:?}"
    );
    let repo = driver_fix(&deb, DriverAction::Install, &v);
    assert!(
        repo.commands
            .iter()
            .any(|c| c.contains("nvidia-driver-pinning-580")),
        "{repo:?}"
    );
}

/// The Debian archive's packages, from the cached Packages index of `suite`.
fn debian_archive(suite: &str) -> Vec<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/debian-archive")
        .join(format!("{suite}-amd64.txt"));
    std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// CHECKED AGAINST DEBIAN'S ARCHIVE: every package the Debian rows install from Debian's own
/// archive (the "distribution" rows and the branch table) is in the non-free or contrib
/// Packages index of that release (bookworm for 12, bullseye for 11), cached from
/// deb.debian.org in tests/fixtures/debian-archive/. NVIDIA's repository rows are not Debian's
/// archive and are not checked here (they cite NVIDIA's guide).
#[test]
fn debian_package_names_exist_in_debians_archive() {
    let data = driver_data();
    let debian = data.families.iter().find(|f| f.id == "debian").unwrap();
    let mut checked = 0;
    for (release, suite) in [("12", "bookworm"), ("11", "bullseye")] {
        let archive = debian_archive(suite);
        assert!(archive.len() > 500, "{suite}: {} packages", archive.len());
        let mut names: Vec<String> = debian.branches[release].values().cloned().collect();
        let terms = Terms {
            os_id: Some("debian".into()),
            version_id: Some(release.into()),
            ..Terms::default()
        };
        for branch in debian.branches[release].keys() {
            for a in [
                DriverAction::Install,
                DriverAction::InstallOpen,
                DriverAction::InstallProprietary,
                DriverAction::Utils,
            ] {
                let f = driver_fix(
                    &terms,
                    a,
                    &Values {
                        branch,
                        version: None,
                    },
                );
                if f.text.contains("NVIDIA's CUDA repository") {
                    // Not Debian's archive: NVIDIA's rows cite NVIDIA's guide.
                    continue;
                }
                for c in &f.commands {
                    if let Some(rest) = c.strip_prefix("sudo apt-get install ") {
                        names.extend(
                            rest.split_whitespace()
                                .filter(|w| !w.contains('$') && !w.starts_with('-'))
                                .map(str::to_string),
                        );
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        for n in &names {
            assert!(
                archive.contains(n),
                "Debian {release} ({suite}): {n} is not in the archive"
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} names checked");
}

fn uv() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("GPUDOCTOR_TEST_UV") {
        return Some(PathBuf::from(p));
    }
    if Command::new("uv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some(PathBuf::from("uv"));
    }
    // From PyPI: the uv wheel carries the binary (uv-*.data/scripts/uv).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("uv-wheel");
    let bin = dir.join("uv");
    if bin.exists() {
        return Some(bin);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let ok = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--only-binary=:all:",
            "--no-deps",
            "uv",
            "-d",
        ])
        .arg(&dir)
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    let script = format!(
        "import zipfile,glob,os\nw=glob.glob('{0}/uv-*.whl')[0]\nz=zipfile.ZipFile(w)\nn=[x for x in z.namelist() if x.endswith('/scripts/uv')][0]\nopen('{0}/uv','wb').write(z.read(n))\nos.chmod('{0}/uv',0o755)\n",
        dir.display()
    );
    Command::new("python3")
        .args(["-c", &script])
        .status()
        .ok()?;
    bin.exists().then_some(bin)
}

fn env(kind: &str, prefix: &Path) -> PythonEnv {
    let mut e: PythonEnv = serde_json::from_value(serde_json::json!({
        "prefix": prefix.display().to_string(),
        "kind": kind,
        "origin": "test",
    }))
    .unwrap();
    e.interpreter = Some(prefix.join("bin/python").display().to_string());
    e
}

/// Runs a printed install command with `--dry-run` after `install`.
fn dry_run(cmd: &str, uv_bin: Option<&Path>) -> std::process::Output {
    let mut c = cmd.replacen(" install ", " install --dry-run ", 1);
    if let Some(u) = uv_bin {
        c = c.replacen("uv ", &format!("{} ", u.display()), 1);
    }
    Command::new("sh").args(["-c", &c]).output().unwrap()
}

/// REAL ENVIRONMENTS (network: PyPI): a venv made by uv gets `uv pip install`, a plain venv
/// `python -m pip install`; each printed command resolves in dry-run form.
#[test]
fn python_commands_run_in_a_real_uv_venv_and_a_real_pip_venv() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixes-venvs");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let req = PyInstall::new(&["nvidia-cudnn-cu12"])
        .flag("--force-reinstall")
        .flag("--no-deps");

    let uv_bin =
        uv().expect("uv: set GPUDOCTOR_TEST_UV, put uv on PATH, or let pip download it from PyPI");
    let uvenv = tmp.join("uv-venv");
    let st = Command::new(&uv_bin)
        .arg("venv")
        .arg(&uvenv)
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    assert!(!uvenv.join("bin/pip").exists(), "a uv venv has no pip");
    let fix = python_install(Some(&env("uv", &uvenv)), false, &req);
    assert_eq!(fix.commands.len(), 1);
    assert!(
        fix.commands[0].starts_with("uv pip install --python "),
        "{fix:?}"
    );
    let out = dry_run(&fix.commands[0], Some(&uv_bin));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}: {text}", fix.commands[0]);
    assert!(text.contains("nvidia-cudnn-cu12"), "{text}");

    let venv = tmp.join("pip-venv");
    let st = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    let fix = python_install(Some(&env("venv", &venv)), false, &req);
    assert!(
        fix.commands[0]
            .contains("/bin/python -m pip install --force-reinstall --no-deps nvidia-cudnn-cu12"),
        "{fix:?}"
    );
    let out = dry_run(&fix.commands[0], None);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}: {text}", fix.commands[0]);
    assert!(text.contains("Would install nvidia-cudnn-cu12"), "{text}");
}

#[test]
fn conda_poetry_and_pixi_get_their_own_tool() {
    let p = Path::new("/opt/envs/x");
    let req = PyInstall::new(&["torch==2.7.*"]).index("https://download.pytorch.org/whl/cu126");
    let conda = python_install(Some(&env("conda", p)), false, &req);
    assert_eq!(
        conda.commands,
        ["conda install -p /opt/envs/x -c conda-forge pytorch-gpu=2.7 cuda-version=12.6"]
    );
    assert!(conda.text.contains("not with pip"), "{conda:?}");
    let poetry = python_install(Some(&env("poetry", p)), false, &req);
    assert_eq!(poetry.commands[0], "poetry source add --priority=explicit pytorch-cu126 https://download.pytorch.org/whl/cu126");
    assert_eq!(
        poetry.commands[1],
        "poetry add 'torch==2.7.*' --source pytorch-cu126"
    );
    let pixi = python_install(
        Some(&env("pixi", p)),
        false,
        &PyInstall::new(&["jax[cuda12]"]),
    );
    assert_eq!(pixi.commands, ["pixi add --pypi 'jax[cuda12]'"]);
    let mut w = env("system", p);
    w.interpreter = None;
    w.python_version = Some("3.11.9".into());
    let win = python_install(Some(&w), true, &PyInstall::new(&["jax[cuda12]"]));
    assert_eq!(win.commands, ["py -3.11 -m pip install 'jax[cuda12]'"]);
    assert_eq!(win.shell, "powershell");
}

/// No rule, nor compat or recommend, carries a package manager's command in Rust: they come
/// from fixes/*.yaml.
#[test]
fn no_hard_coded_install_commands_in_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("src/rules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !p.to_string_lossy().ends_with("_tests.rs"))
        .collect();
    files.push(root.join("src/recommend.rs"));
    files.push(root.join("src/compat.rs"));
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let body = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in body.lines().enumerate() {
            for w in [
                "ubuntu-drivers",
                "apt install",
                "apt-get",
                "pip install",
                "-m pip",
                "dnf install",
                "zypper",
                "pacman -S",
            ] {
                if line.contains(w) && !line.trim_start().starts_with("//") {
                    bad.push(format!("{}:{}: {w}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "hard-coded install commands:\n{}",
        bad.join("\n")
    );
}
