//! Unit tests of `driver`.
use super::*;

// Real lines recorded from machines (reference/compat-facts.md §8, uv's test fixtures).
const OPEN_550: &str = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16-I3-D08-1-2)  Mon Dec 30 17:26:13 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n";
const PROP_375: &str = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017\nGCC version:  gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.4)\n";
const PROP_580: &str =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Wed Apr 29 17:32:45 UTC 2026\n";
const OPEN_ARM: &str = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jul 23 21:16:02 UTC 2025\n";

#[test]
fn open_module_line() {
    let k = parse_proc_version(OPEN_550).unwrap();
    assert_eq!(k.version, "550.144.03");
    assert_eq!(k.flavor, "open");
    assert_eq!(k.arch.as_deref(), Some("x86_64"));
    let k = parse_proc_version(OPEN_ARM).unwrap();
    assert_eq!(
        (k.version.as_str(), k.arch.as_deref()),
        ("580.65.06", Some("aarch64"))
    );
}

#[test]
fn proprietary_module_lines() {
    let k = parse_proc_version(PROP_375).unwrap();
    assert_eq!(k.version, "375.74");
    assert_eq!(k.flavor, "proprietary");
    assert_eq!(k.arch, None);
    assert_eq!(parse_proc_version(PROP_580).unwrap().version, "580.159.04");
}

#[test]
fn garbage_is_not_a_version() {
    assert!(parse_proc_version("hello\n").is_none());
    assert!(parse_proc_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  \n").is_none());
}
