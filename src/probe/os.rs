//! The machine's terms (issue 31): which operating system it is (`/etc/os-release`), which
//! package managers are on PATH, and whether UEFI Secure Boot is on. Fixes are written in these
//! terms; nothing here decides a fix.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use crate::sanitize;
use crate::snapshot::{OsRelease, Probed, SecureBoot};

/// The package managers looked for on Linux, in the order fixes prefer them, each with the
/// executables that mark it ("apt" is also "apt-get").
const LINUX_MANAGERS: &[(&str, &[&str])] = &[
    ("apt", &["apt-get", "apt"]),
    ("dnf", &["dnf", "dnf5"]),
    ("yum", &["yum"]),
    ("zypper", &["zypper"]),
    ("pacman", &["pacman"]),
    ("apk", &["apk"]),
];

/// The package managers looked for on Windows.
const WINDOWS_MANAGERS: &[(&str, &[&str])] = &[("winget", &["winget"]), ("choco", &["choco"])];

/// Parses an os-release file as os-release(5) describes it
/// (https://www.freedesktop.org/software/systemd/man/latest/os-release.html): newline-separated
/// `KEY=VALUE` assignments in shell syntax; blank lines and lines starting with '#' are
/// ignored; values may be in double quotes (where `\"`, `\\`, `\$` and `` \` `` are escapes) or
/// single quotes (no escapes). Lines that are not assignments are skipped.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, raw)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        if let Some(v) = shell_value(raw) {
            out.insert(key.to_string(), v);
        }
    }
    out
}

/// One shell word: quoted and unquoted pieces joined, up to the first unquoted blank. None when
/// a quote is not closed (the line is malformed; os-release(5) says to ignore it).
fn shell_value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => match chars.next()? {
                        e @ ('"' | '\\' | '$' | '`') => out.push(e),
                        // A backslash before a newline or another character stays as it is.
                        e => {
                            out.push('\\');
                            out.push(e);
                        }
                    },
                    ch => out.push(ch),
                }
            },
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    ch => out.push(ch),
                }
            },
            '\\' => {
                if let Some(e) = chars.next() {
                    out.push(e);
                }
            }
            c if c.is_whitespace() => break,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The fields fixes depend on, from the parsed assignments. ID defaults to "linux" as
/// os-release(5) says; the values are sanitised (they are printed).
pub fn os_release_from(fields: &BTreeMap<String, String>) -> OsRelease {
    let get = |k: &str| {
        fields
            .get(k)
            .map(|v| sanitize::clean_line(v.trim(), 120))
            .filter(|v| !v.is_empty())
    };
    OsRelease {
        id: get("ID").unwrap_or_else(|| "linux".to_string()),
        id_like: get("ID_LIKE")
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        version_id: get("VERSION_ID"),
        pretty_name: get("PRETTY_NAME"),
    }
}

/// `/etc/os-release`, else `/usr/lib/os-release` (os-release(5): "Applications should check for
/// the former, and exclusively use its data if it exists, and only fall back to the latter").
pub fn os_release(root: &Path) -> Probed<OsRelease> {
    let mut errors = Vec::new();
    for rel in ["etc/os-release", "usr/lib/os-release"] {
        match fs::read_to_string(root.join(rel)) {
            Ok(text) => return Probed::found(os_release_from(&parse_os_release(&text))),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => errors.push(format!("/{rel}: {e}")),
        }
    }
    if errors.is_empty() {
        Probed::absent_code(
            "no_os_release",
            "neither /etc/os-release nor /usr/lib/os-release exists",
        )
    } else {
        Probed::failed(sanitize::clean_line(&errors.join("; "), 300))
    }
}

/// The package managers whose executables are on `path_var` (presence only: nothing is run).
pub fn package_managers(
    path_var: Option<&str>,
    windows: bool,
    pathext: Option<&str>,
) -> Probed<Vec<String>> {
    let Some(path) = path_var.filter(|p| !p.is_empty()) else {
        return Probed::absent_code("no_path", "PATH is not set");
    };
    let table = if windows {
        WINDOWS_MANAGERS
    } else {
        LINUX_MANAGERS
    };
    let found = table
        .iter()
        .filter(|(_, exes)| {
            exes.iter().any(|exe| {
                if windows {
                    on_windows_path(path, exe, pathext)
                } else {
                    super::python::which(path, exe).is_some()
                }
            })
        })
        .map(|(name, _)| name.to_string())
        .collect();
    Probed::found(found)
}

/// Whether `name` with one of PATHEXT's extensions is in a folder of a Windows PATH. Unlike
/// `python::which_windows` this looks in `…\Microsoft\WindowsApps` too, where winget is an
/// app execution alias (a reparse point `fs::metadata` cannot follow, hence symlink_metadata).
pub fn on_windows_path(path: &str, name: &str, pathext: Option<&str>) -> bool {
    let exts = super::python::pathext_list(pathext);
    path.split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .any(|d| {
            exts.iter().any(|e| {
                fs::symlink_metadata(Path::new(d).join(format!("{name}{e}")))
                    .is_ok_and(|m| !m.is_dir())
            })
        })
}

/// The efivarfs file of the UEFI global variable `SecureBoot` (EFI_GLOBAL_VARIABLE GUID
/// 8be4df61-93ca-11d2-aa0d-00e098032b8c, UEFI 2.10 §3.3 "Globally Defined Variables").
pub const SECURE_BOOT_EFIVAR: &str =
    "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// The state from the efivarfs file's bytes: efivarfs puts the variable's 4 attribute bytes
/// before its data (https://docs.kernel.org/filesystems/efivarfs.html), and SecureBoot's data
/// is one byte, 1 when Secure Boot is on.
pub fn secure_boot_from_efivar(bytes: &[u8]) -> Option<bool> {
    if bytes.len() < 5 {
        return None;
    }
    bytes.last().map(|b| *b == 1)
}

/// The state from `mokutil --sb-state`'s output: "SecureBoot enabled" / "SecureBoot disabled"
/// (mokutil src/mokutil.c, github.com/lcp/mokutil at 9ae73db).
pub fn secure_boot_from_mokutil(stdout: &str) -> Option<bool> {
    stdout.lines().find_map(|l| match l.trim() {
        "SecureBoot enabled" => Some(true),
        "SecureBoot disabled" => Some(false),
        _ => None,
    })
}

/// Secure Boot on Linux: the EFI variable (no subprocess), else `mokutil --sb-state` under
/// `limit`. Absent where the machine was not booted through UEFI (or a container hides
/// /sys/firmware).
pub fn secure_boot(root: &Path, path_var: Option<&str>, limit: Duration) -> Probed<SecureBoot> {
    let efi = root.join("sys/firmware/efi");
    if !efi.is_dir() {
        return Probed::absent_code(
            "no_efi",
            "no /sys/firmware/efi: not booted through UEFI, or a container hides it; Secure Boot cannot be read",
        );
    }
    let mut why = Vec::new();
    match fs::read(root.join(SECURE_BOOT_EFIVAR)) {
        Ok(bytes) => match secure_boot_from_efivar(&bytes) {
            Some(enabled) => {
                return Probed::found(SecureBoot {
                    enabled,
                    how: "efivars".to_string(),
                })
            }
            None => why.push(format!(
                "the SecureBoot EFI variable holds {} bytes",
                bytes.len()
            )),
        },
        Err(e) => why.push(format!("the SecureBoot EFI variable: {e}")),
    }
    let mokutil = path_var.and_then(|p| super::python::which(p, "mokutil"));
    match mokutil {
        Some(exe) => {
            let mut cmd = std::process::Command::new(exe);
            cmd.arg("--sb-state");
            match super::deadline::run(cmd, limit, 4096) {
                Ok(out) if out.timed_out => {
                    why.push(format!("mokutil --sb-state {}", out.describe(limit)))
                }
                Ok(out) => {
                    let text = format!("{}\n{}", out.stdout_text(), out.stderr_text());
                    match secure_boot_from_mokutil(&text) {
                        Some(enabled) => {
                            return Probed::found(SecureBoot {
                                enabled,
                                how: "mokutil --sb-state".to_string(),
                            })
                        }
                        None => why.push(format!(
                            "mokutil --sb-state said {:?}",
                            sanitize::clean_line(text.trim(), 160)
                        )),
                    }
                }
                Err(e) => why.push(format!("mokutil --sb-state: {e}")),
            }
        }
        None => why.push("mokutil is not on PATH".to_string()),
    }
    Probed::failed(sanitize::clean_line(&why.join("; "), 300))
}

#[cfg(test)]
#[path = "os_tests.rs"]
mod tests;
