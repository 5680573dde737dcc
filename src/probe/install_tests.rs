#![allow(clippy::print_stderr)]
//! Unit tests of `install`: dpkg's file lists read against the recorded database of Debian 12's
//! libcuda1 (tests/fixtures/driver-install) and against the real `dpkg -S` on this machine's own
//! database, the owner parsers, and the method decision.
use super::*;

fn km(version: &str, flavor: &str) -> KernelModule {
    KernelModule {
        version: version.into(),
        flavor: flavor.into(),
        arch: None,
        line: String::new(),
    }
}

#[cfg(unix)]
/// A root whose dpkg database holds Debian 12's libcuda1, with the loader's libcuda.so.1 a link
/// into nvidia/current as update-alternatives leaves it.
fn debian_root() -> tempfile::TempDir {
    let fx = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/driver-install/debian12-libcuda1");
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("var/lib/dpkg");
    std::fs::create_dir_all(db.join("info")).unwrap();
    std::fs::create_dir_all(db.join("updates")).unwrap();
    std::fs::copy(fx.join("status"), db.join("status")).unwrap();
    std::fs::copy(
        fx.join("libcuda1.list"),
        db.join("info/libcuda1:amd64.list"),
    )
    .unwrap();
    std::fs::write(db.join("info/format"), "1\n").unwrap();
    let lib = d.path().join("usr/lib/x86_64-linux-gnu");
    std::fs::create_dir_all(lib.join("nvidia/current")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("nvidia/current/libcuda.so.1", lib.join("libcuda.so.1")).unwrap();
    d
}

#[cfg(unix)]
#[test]
fn dpkgs_lists_name_libcuda1_through_the_alternatives_link() {
    let root = debian_root();
    let run = |_: &str, _: &[String]| -> Option<Query> { panic!("dpkg's lists are read, not run") };
    assert_eq!(manager(root.path()), Some("dpkg"));
    // The loader's path is a link no package owns; the file it points to is libcuda1's.
    let loader = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
    assert_eq!(owner("dpkg", root.path(), loader, &run), None);
    let real = resolve_under(root.path(), loader);
    assert_eq!(
        real,
        "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
    );
    assert_eq!(
        owner("dpkg", root.path(), &real, &run).as_deref(),
        Some("libcuda1")
    );
    assert_eq!(
        dpkg_maintainer(root.path(), "libcuda1").as_deref(),
        Some("debian nvidia maintainers <pkg-nvidia-devel@lists.alioth.debian.org>")
    );
    // The whole probe names the package from the lists too (a path before its link's target).
    let both = dpkg_owners(root.path(), &[loader, &real, "/nowhere"]);
    assert_eq!(both, vec![(real.clone(), "libcuda1".to_string())]);
}

/// The real `dpkg -S` and the list reader agree on this machine's own dpkg database: for the
/// first, a middle and the last file of a sample of installed packages, and paths no package has.
#[cfg(unix)]
#[test]
fn dpkg_owners_agrees_with_the_real_dpkg_here() {
    let path = std::env::var("PATH").ok();
    let root = Path::new("/");
    if manager(root) != Some("dpkg")
        || path
            .as_deref()
            .and_then(|p| super::super::python::which(p, "dpkg"))
            .is_none()
    {
        // With CI set a missing tool fails the test (as tests/it/fleet_formats.rs does).
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: dpkg is needed for this test"
        );
        eprintln!("SKIPPED: no dpkg on this machine");
        return;
    }
    let run = path_runner(path, Duration::from_secs(20));
    let mut lists: Vec<_> = fs::read_dir("/var/lib/dpkg/info")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "list"))
        .collect();
    lists.sort();
    let mut paths: Vec<String> = Vec::new();
    for list in lists.iter().step_by((lists.len() / 12).max(1)) {
        let text = fs::read_to_string(list).unwrap_or_default();
        // Files only: dpkg -S on a directory names every package with something in it.
        let files: Vec<&str> = text
            .lines()
            .filter(|l| fs::symlink_metadata(l).is_ok_and(|m| m.is_file()))
            .collect();
        for i in [0, files.len() / 2, files.len().saturating_sub(1)] {
            if let Some(f) = files.get(i) {
                paths.push(f.to_string());
            }
        }
    }
    paths.push("/usr/lib/x86_64-linux-gnu/libcuda.so.1".into());
    paths.push("/no/such/file/anywhere".into());
    paths.sort();
    paths.dedup();
    assert!(paths.len() > 12, "too few files sampled: {paths:?}");
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let ours = dpkg_owners(root, &refs);
    let mut owned = 0;
    for p in &paths {
        let q = run("dpkg", &["-S".into(), p.clone()]).expect("dpkg -S ran");
        let theirs = if q.ok {
            parse_owner("dpkg", &q.stdout)
        } else {
            None
        };
        let mine = ours.iter().find(|(k, _)| k == p).map(|(_, v)| v.clone());
        if theirs.is_some() {
            owned += 1;
        }
        // A file two packages list (dpkg prints both): ours must be one of those dpkg named.
        match (&theirs, &mine) {
            (Some(t), Some(m)) if t != m => assert!(
                q.stdout.contains(&format!("{m}:")) || q.stdout.contains(&format!("{m},")),
                "{p}: dpkg -S says {:?}, the lists {m}",
                q.stdout
            ),
            _ => assert_eq!(
                theirs.is_some(),
                mine.is_some(),
                "{p}: dpkg -S {theirs:?}, lists {mine:?}"
            ),
        }
    }
    assert!(
        owned >= 12,
        "only {owned} of {} sampled files are owned",
        paths.len()
    );
}

#[test]
fn owner_lines_of_dpkg_rpm_and_pacman() {
    // dpkg -S as dpkg 1.21 prints it (the test above gets this line from the real dpkg).
    assert_eq!(
        parse_owner(
            "dpkg",
            "libcuda1:amd64: /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1\n"
        )
        .as_deref(),
        Some("libcuda1")
    );
    assert_eq!(
        parse_owner(
            "dpkg",
            "nvidia-dkms-580-open, nvidia-kernel-source-580-open: /usr/src\n"
        )
        .as_deref(),
        Some("nvidia-dkms-580-open")
    );
    assert_eq!(parse_owner("dpkg", "diversion by x from: /a\n"), None);
    // rpm -qf --queryformat '%{NAME}\n' and pacman -Qoq print the name alone.
    assert_eq!(
        parse_owner("rpm", "kmod-nvidia-latest-dkms\n").as_deref(),
        Some("kmod-nvidia-latest-dkms")
    );
    assert_eq!(
        parse_owner("pacman", "nvidia-utils\n").as_deref(),
        Some("nvidia-utils")
    );
    // Anything that is not a package name is refused (printed later).
    assert_eq!(parse_owner("rpm", "\u{1b}[31mx\n"), None);
}

#[test]
fn the_method_follows_the_owning_packages_and_the_runfile_traces() {
    let base = Facts {
        manager: Some("dpkg".into()),
        module_files: vec!["/lib/modules/6.8.0-45-generic/kernel/nvidia-580srv/nvidia.ko".into()],
        kernel_module: Some(km("580.95.05", "open")),
        ..Default::default()
    };
    // Ubuntu's precompiled modules.
    let f = Facts {
        module_package: Some("linux-modules-nvidia-580-server-open-6.8.0-45-generic".into()),
        libcuda_package: Some("libnvidia-compute-580-server".into()),
        packager: Some("ubuntu kernel team <kernel-team@lists.ubuntu.com>".into()),
        ..base.clone()
    };
    let d = decide(&f);
    assert_eq!(d.method, "precompiled");
    assert_eq!(d.dkms, Some(false));
    assert_eq!(d.branch.as_deref(), Some("580"));
    assert_eq!(d.open_modules, Some(true));
    // The distribution's DKMS package.
    let f = Facts {
        module_files: vec!["/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst".into()],
        module_package: None,
        libcuda_package: Some("libnvidia-compute-580".into()),
        dkms_versions: vec!["nvidia/580.95.05".into()],
        packager: Some("ubuntu developers <ubuntu-devel-discuss@lists.ubuntu.com>".into()),
        ..base.clone()
    };
    let d = decide(&f);
    assert_eq!((d.method.as_str(), d.dkms), ("distribution", Some(true)));
    // The same names from NVIDIA's repository (its packages' maintainer is NVIDIA's).
    let d = decide(&Facts {
        packager: Some("cudatools <cudatools@nvidia.com>".into()),
        ..f.clone()
    });
    assert_eq!(d.method, "nvidia-repo");
    // RHEL: NVIDIA's DKMS kmod is not precompiled; a versioned kmod is.
    let rpm = |m: &str| Facts {
        manager: Some("rpm".into()),
        module_package: Some(m.into()),
        packager: Some("nvidia corporation".into()),
        kernel_module: Some(km("570.86.15", "proprietary")),
        ..Default::default()
    };
    assert_eq!(
        decide(&rpm("kmod-nvidia-latest-dkms")).method,
        "nvidia-repo"
    );
    assert_eq!(decide(&rpm("kmod-nvidia-latest-dkms")).dkms, Some(true));
    assert_eq!(
        decide(&rpm("kmod-nvidia-570.86.15-5.14.0-503.22.1")).method,
        "precompiled"
    );
    assert_eq!(
        decide(&rpm("kmod-nvidia-latest-dkms")).open_modules,
        Some(false)
    );
    // Nothing owns anything, the installer left its uninstaller: the .run installer.
    let d = decide(&Facts {
        manager: Some("rpm".into()),
        runfile_uninstaller: true,
        runfile_log: true,
        kernel_module: Some(km("550.144.03", "proprietary")),
        ..Default::default()
    });
    assert_eq!(d.method, "runfile");
    assert_eq!(d.manager, None);
    assert!(d.evidence.iter().any(|e| e.contains("nvidia-uninstall")));
    // No traces at all: unknown, saying why.
    let d = decide(&Facts::default());
    assert_eq!(d.method, "unknown");
    assert!(!d.evidence.is_empty());
}

// A Linux driver tree, with Linux paths in its evidence (the Windows driver is always "windows").
#[cfg(unix)]
#[test]
fn no_driver_is_absent_and_a_runfile_tree_is_found() {
    let none = |_: &str, _: &[String]| -> Option<Query> { None };
    let d = tempfile::tempdir().unwrap();
    assert_eq!(
        probe(d.path(), Some("6.8.0"), None, &none).code(),
        Some("no_driver")
    );
    let m = d.path().join("lib/modules/6.8.0/kernel/drivers/video");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("nvidia.ko"), "").unwrap();
    std::fs::create_dir_all(d.path().join("usr/bin")).unwrap();
    std::fs::write(d.path().join("usr/bin/nvidia-uninstall"), "").unwrap();
    let p = probe(
        d.path(),
        Some("6.8.0"),
        Some(km("550.144.03", "open")),
        &none,
    );
    let v = p.get().unwrap();
    assert_eq!(v.method, "runfile");
    assert_eq!(v.branch.as_deref(), Some("550"));
    assert!(v
        .evidence
        .iter()
        .any(|e| e.contains("/lib/modules/6.8.0/kernel/drivers/video/nvidia.ko")));
}
