//! Unit tests of `os`: the recorded os-release files of tests/fixtures/os-release (sources in
//! its SOURCES.md), os-release(5)'s quoting, Secure Boot's two readings, PATH lookups.
use super::*;
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/os-release")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parsed(name: &str) -> OsRelease {
    os_release_from(&parse_os_release(&fixture(name)))
}

#[test]
fn every_recorded_os_release_gives_its_id_family_and_version() {
    // (file, ID, ID_LIKE, VERSION_ID) as each file states them.
    let table: &[(&str, &str, &[&str], Option<&str>)] = &[
        ("debian-11", "debian", &[], Some("11")),
        ("debian-12", "debian", &[], Some("12")),
        ("ubuntu-20.04", "ubuntu", &["debian"], Some("20.04")),
        ("ubuntu-22.04", "ubuntu", &["debian"], Some("22.04")),
        ("ubuntu-24.04", "ubuntu", &["debian"], Some("24.04")),
        ("rhel-8", "rhel", &["fedora"], Some("8.1")),
        ("rhel-9", "rhel", &["fedora"], Some("9.6")),
        (
            "rocky-8",
            "rocky",
            &["rhel", "centos", "fedora"],
            Some("8.4"),
        ),
        (
            "rocky-9",
            "rocky",
            &["rhel", "centos", "fedora"],
            Some("9.3"),
        ),
        (
            "almalinux-9",
            "almalinux",
            &["rhel", "centos", "fedora"],
            Some("9.1"),
        ),
        ("amzn-2", "amzn", &["centos", "rhel", "fedora"], Some("2")),
        ("amzn-2023", "amzn", &["fedora"], Some("2023")),
        ("sles-15", "sles", &["suse"], Some("15.1")),
        ("fedora-42", "fedora", &[], Some("42")),
        ("arch", "arch", &[], None),
    ];
    let listed: Vec<String> = std::fs::read_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/os-release"),
    )
    .unwrap()
    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
    .filter(|n| n != "SOURCES.md")
    .collect();
    assert_eq!(
        listed.len(),
        table.len(),
        "a fixture without a row: {listed:?}"
    );
    for (file, id, like, version) in table {
        let os = parsed(file);
        assert_eq!(os.id, *id, "{file}");
        assert_eq!(os.id_like, *like, "{file}");
        assert_eq!(os.version_id.as_deref(), *version, "{file}");
        assert!(os.pretty_name.is_some(), "{file}: PRETTY_NAME");
        // Quotes never survive into a value.
        assert!(
            !os.id.contains('"') && !os.pretty_name.unwrap().contains('"'),
            "{file}"
        );
    }
    assert!(parsed("rocky-9").is_like("rhel"));
    assert!(!parsed("amzn-2023").is_like("rhel"));
    assert_eq!(parsed("rhel-9").major(), Some("9"));
    assert_eq!(parsed("ubuntu-22.04").major(), Some("22"));
    assert_eq!(parsed("arch").major(), None);
}

#[test]
fn quoting_escapes_and_comments_follow_os_release_5() {
    let text = "# a comment\n\
                \n\
                NAME='Single quoted $HOME'\n\
                PRETTY_NAME=\"Say \\\"hi\\\" \\\\ \\$x \\`y\\`\"\n\
                ID=plain\n\
                VERSION_ID=\"1\"'.2'\n\
                BROKEN=\"never closed\n\
                not an assignment\n\
                lower=ignored\n";
    let f = parse_os_release(text);
    assert_eq!(f["NAME"], "Single quoted $HOME");
    assert_eq!(f["PRETTY_NAME"], "Say \"hi\" \\ $x `y`");
    assert_eq!(f["ID"], "plain");
    assert_eq!(f["VERSION_ID"], "1.2");
    assert!(!f.contains_key("BROKEN"));
    assert!(!f.contains_key("lower"));
    // ID defaults to "linux" (os-release(5)); terminal escapes are removed.
    let os = os_release_from(&parse_os_release("PRETTY_NAME=\"evil\u{1b}[31m\"\n"));
    assert_eq!(os.id, "linux");
    assert!(!os.pretty_name.unwrap().contains('\u{1b}'));
}

#[test]
fn etc_comes_first_and_usr_lib_is_the_fallback() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(os_release(d.path()).code(), Some("no_os_release"));
    std::fs::create_dir_all(d.path().join("usr/lib")).unwrap();
    std::fs::write(d.path().join("usr/lib/os-release"), fixture("arch")).unwrap();
    assert_eq!(os_release(d.path()).get().unwrap().id, "arch");
    std::fs::create_dir_all(d.path().join("etc")).unwrap();
    std::fs::write(d.path().join("etc/os-release"), fixture("rocky-9")).unwrap();
    assert_eq!(os_release(d.path()).get().unwrap().id, "rocky");
    // A directory where the file should be is an error, not "absent".
    let e = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(e.path().join("etc/os-release")).unwrap();
    assert!(matches!(os_release(e.path()), Probed::Failed { .. }));
}

#[test]
fn secure_boot_from_the_efi_variable_and_mokutil() {
    // efivarfs: 4 attribute bytes (NV|BS|RT = 0x07 or BS|RT = 0x06), then the UINT8 value.
    assert_eq!(secure_boot_from_efivar(&[0x06, 0, 0, 0, 1]), Some(true));
    assert_eq!(secure_boot_from_efivar(&[0x06, 0, 0, 0, 0]), Some(false));
    assert_eq!(secure_boot_from_efivar(&[0x06, 0, 0, 0]), None);
    // mokutil's own lines (src/mokutil.c).
    assert_eq!(secure_boot_from_mokutil("SecureBoot enabled\n"), Some(true));
    assert_eq!(
        secure_boot_from_mokutil("SecureBoot disabled\n"),
        Some(false)
    );
    assert_eq!(
        secure_boot_from_mokutil("EFI variables are not supported on this system\n"),
        None
    );

    let d = tempfile::tempdir().unwrap();
    assert_eq!(
        secure_boot(d.path(), None, Duration::from_secs(1)).code(),
        Some("no_efi")
    );
    let var = d.path().join(SECURE_BOOT_EFIVAR);
    std::fs::create_dir_all(var.parent().unwrap()).unwrap();
    std::fs::write(&var, [0x06, 0, 0, 0, 1]).unwrap();
    let sb = secure_boot(d.path(), None, Duration::from_secs(1));
    assert_eq!(
        sb.get(),
        Some(&SecureBoot {
            enabled: true,
            how: "efivars".into()
        })
    );
    // Unreadable variable, no mokutil: failed with both reasons.
    std::fs::write(&var, [1]).unwrap();
    let sb = secure_boot(d.path(), Some(""), Duration::from_secs(1));
    assert!(
        sb.reason().unwrap().contains("mokutil is not on PATH"),
        "{sb:?}"
    );
}

#[cfg(unix)]
#[test]
fn package_managers_are_found_on_path_in_preference_order() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    for (dir, name, mode) in [
        (&a, "yum", 0o755),
        (&b, "dnf", 0o755),
        (&b, "zypper", 0o644), // not executable: not there
    ] {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let path = format!("{}:{}", a.display(), b.display());
    assert_eq!(
        package_managers(Some(&path), false, None).get().unwrap(),
        &vec!["dnf".to_string(), "yum".to_string()]
    );
    assert_eq!(package_managers(None, false, None).code(), Some("no_path"));
    // Windows lookups: winget is found in WindowsApps (app execution aliases live there).
    let w = d.path().join("Microsoft").join("WindowsApps");
    std::fs::create_dir_all(&w).unwrap();
    std::fs::write(w.join("winget.exe"), "").unwrap();
    let wpath = format!("{};{}", a.display(), w.display());
    assert_eq!(
        package_managers(Some(&wpath), true, Some(".EXE;.CMD"))
            .get()
            .unwrap(),
        &vec!["winget".to_string()]
    );
}
