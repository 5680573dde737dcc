//! Unit tests of `probe::windows`: paths, the OS name, the TDR settings from what the registry
//! reads gave.
use super::*;

/// The Windows files scripts/test-setup.sh took from PyPI's win_amd64 wheels (laid out as a
/// site-packages: `nvidia\cuda_runtime\bin\cudart64_12.dll`, `nvidia\cudnn\bin\cudnn64_9.dll`,
/// `torch\version.py` and their dist-info), or None when the PyPI tests are skipped.
pub fn test_files() -> Option<PathBuf> {
    let v = std::env::var("GPUDOCTOR_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-test"));
    let w = v.join("win");
    if w.is_dir() {
        return Some(w);
    }
    assert!(
        std::env::var("GPUDOCTOR_SKIP_PYPI_TESTS").as_deref() == Ok("1"),
        "{} is missing: run scripts/test-setup.sh",
        w.display()
    );
    None
}

/// A python.org-style Windows install under `prefix`: `python.exe` and `python311.dll` (empty
/// stand-ins: nothing runs them) beside `Lib\site-packages` holding a copy of [`test_files`].
pub fn make_test_install(prefix: &Path, win: &Path) {
    std::fs::create_dir_all(prefix).unwrap();
    std::fs::write(prefix.join("python.exe"), b"").unwrap();
    std::fs::write(prefix.join("python311.dll"), b"").unwrap();
    copy_tree(win, &prefix.join("Lib").join("site-packages"));
}

fn copy_tree(from: &Path, to: &Path) {
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

#[test]
fn verbatim_prefixes_are_not_printed() {
    assert_eq!(
        plain_path(r"\\?\C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4"),
        PathBuf::from(r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4")
    );
    assert_eq!(
        plain_path(r"\\?\UNC\server\share\envs\py311"),
        PathBuf::from(r"\\server\share\envs\py311")
    );
    // A verbatim path that has no plain spelling stays as it is.
    assert_eq!(
        plain_path(r"\\?\Volume{0b1c}\x"),
        PathBuf::from(r"\\?\Volume{0b1c}\x")
    );
    assert_eq!(plain_path("/usr/lib"), PathBuf::from("/usr/lib"));
}

/// The registry's values as Windows 11 23H2, Windows 10 22H2 and Server 2022 hold them (build
/// numbers from https://github.com/nvaccess/nvda/issues/12509).
#[test]
fn the_os_name_says_windows_11_where_the_registry_says_10() {
    assert_eq!(
        describe_os("Windows 10 Pro", Some("23H2"), Some("22631"), Some(4460)),
        "Windows 11 Pro 23H2 (build 22631.4460)"
    );
    assert_eq!(
        describe_os("Windows 10 Home", Some("22H2"), Some("19045"), Some(5011)),
        "Windows 10 Home 22H2 (build 19045.5011)"
    );
    assert_eq!(
        describe_os(
            "Windows Server 2022 Datacenter",
            Some("21H2"),
            Some("20348"),
            None
        ),
        "Windows Server 2022 Datacenter 21H2 (build 20348)"
    );
    assert_eq!(
        describe_os("Windows 10 Pro", None, None, None),
        "Windows 10 Pro"
    );
}

#[test]
fn unset_values_mean_windows_defaults() {
    let w = tdr_from_reads(DwordRead::NotSet, DwordRead::NotSet);
    assert_eq!(w.tdr_delay_s, None);
    assert_eq!(w.tdr_level, None);
    assert_eq!(w.registry_error, None);
    assert_eq!(w.tdr_delay(), 2);
    assert_eq!(w.tdr_level(), 3);
}

#[test]
fn set_values_and_errors() {
    let w = tdr_from_reads(DwordRead::Value(60), DwordRead::Error(5));
    assert_eq!(w.tdr_delay(), 60);
    assert_eq!(w.tdr_level, None);
    assert_eq!(
        w.registry_error.as_deref(),
        Some(r"HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers: TdrLevel: Windows error 5")
    );
}

#[test]
fn an_old_snapshot_without_the_section_still_loads() {
    let h: crate::snapshot::Host =
        serde_json::from_str(r#"{"os":"windows","arch":"x86_64","wsl":false}"#).unwrap();
    assert_eq!(h.windows, None);
    let h: crate::snapshot::Host =
        serde_json::from_str(r#"{"os":"windows","arch":"x86_64","windows":{"tdr_delay_s":10}}"#)
            .unwrap();
    assert_eq!(h.windows.unwrap().tdr_delay(), 10);
    // Not written when absent.
    let linux = crate::snapshot::Host::default();
    assert!(!serde_json::to_string(&linux).unwrap().contains("windows"));
}

#[test]
fn windows_terms_os_release_secure_boot_and_install() {
    let w11 = os_release_from(
        Some("Windows 10 Pro"),
        Some("23H2"),
        Some("22631"),
        Some(4460),
    );
    assert_eq!(w11.id, "windows");
    assert_eq!(w11.version_id.as_deref(), Some("11"));
    assert_eq!(
        w11.pretty_name.as_deref(),
        Some("Windows 11 Pro 23H2 (build 22631.4460)")
    );
    let w10 = os_release_from(Some("Windows 10 Home"), Some("22H2"), Some("19045"), None);
    assert_eq!(w10.version_id.as_deref(), Some("10"));
    assert_eq!(os_release_from(None, None, None, None).version_id, None);

    let on = secure_boot_from(DwordRead::Value(1));
    assert_eq!(
        on.get().map(|s| (s.enabled, s.how.as_str())),
        Some((true, "registry"))
    );
    assert_eq!(
        secure_boot_from(DwordRead::Value(0))
            .get()
            .map(|s| s.enabled),
        Some(false)
    );
    assert_eq!(secure_boot_from(DwordRead::NotSet).code(), Some("no_efi"));
    assert!(secure_boot_from(DwordRead::Error(5))
        .reason()
        .is_some_and(|r| r.contains("Windows error 5") && r.contains("UEFISecureBootEnabled")));

    let i = driver_install(Some("581.57"));
    let i = i.get().unwrap();
    assert_eq!(
        (i.method.as_str(), i.branch.as_deref()),
        ("windows", Some("581"))
    );
    assert_eq!(driver_install(None).get().unwrap().branch, None);
}
