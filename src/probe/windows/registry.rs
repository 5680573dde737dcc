//! Reading the Windows registry: string and DWORD values and subkey names, through the plain
//! registry API (no `reg.exe` subprocess). Every function answers None or an empty list where a
//! key or value is missing or unreadable; nothing here waits on anything but the registry.

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
    use windows_sys::Win32::System::Registry::{
        RegCloseKey, RegEnumKeyExW, RegGetValueW, RegOpenKeyExW, HKEY, HKEY_CURRENT_USER,
        HKEY_LOCAL_MACHINE, KEY_READ, RRF_RT_REG_DWORD, RRF_RT_REG_SZ,
    };

    use super::Root;

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain(std::iter::once(0)).collect()
    }

    fn hkey(root: Root) -> HKEY {
        match root {
            Root::CurrentUser => HKEY_CURRENT_USER,
            Root::LocalMachine => HKEY_LOCAL_MACHINE,
        }
    }

    /// A string value (`name` None: the key's default value).
    pub fn string(root: Root, key: &str, name: Option<&str>) -> Option<String> {
        let k = wide(key);
        let n = name.map(wide);
        let n_ptr = n.as_ref().map_or(std::ptr::null(), |v| v.as_ptr());
        let mut buf = vec![0u16; 2048];
        let mut size = (buf.len() * 2) as u32;
        // SAFETY: the key and value names are NUL-terminated UTF-16; `buf` holds `size` bytes.
        let rc = unsafe {
            RegGetValueW(
                hkey(root),
                k.as_ptr(),
                n_ptr,
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        if rc != ERROR_SUCCESS {
            return None;
        }
        let units = (size as usize / 2).min(buf.len());
        let s = String::from_utf16_lossy(buf.get(..units)?);
        let s = s.trim_end_matches('\0').to_string();
        (!s.is_empty()).then_some(s)
    }

    /// A REG_DWORD value.
    pub fn dword(root: Root, key: &str, name: &str) -> Option<u32> {
        dword_result(root, key, name).ok().flatten()
    }

    /// A REG_DWORD value: Ok(None) where the key or value does not exist
    /// (ERROR_FILE_NOT_FOUND), Err(the Windows error) where it could not be read.
    pub fn dword_result(root: Root, key: &str, name: &str) -> Result<Option<u32>, u32> {
        let k = wide(key);
        let n = wide(name);
        let mut v: u32 = 0;
        let mut size = 4u32;
        // SAFETY: as in `string`; `v` holds the 4 bytes asked for.
        let rc = unsafe {
            RegGetValueW(
                hkey(root),
                k.as_ptr(),
                n.as_ptr(),
                RRF_RT_REG_DWORD,
                std::ptr::null_mut(),
                (&mut v as *mut u32).cast(),
                &mut size,
            )
        };
        match rc {
            ERROR_SUCCESS => Ok(Some(v)),
            ERROR_FILE_NOT_FOUND => Ok(None),
            e => Err(e),
        }
    }

    /// The names of a key's subkeys, in the registry's order.
    pub fn subkeys(root: Root, key: &str) -> Vec<String> {
        let k = wide(key);
        let mut h: HKEY = std::ptr::null_mut();
        // SAFETY: `k` is NUL-terminated; `h` is a valid out-pointer, closed below.
        if unsafe { RegOpenKeyExW(hkey(root), k.as_ptr(), 0, KEY_READ, &mut h) } != ERROR_SUCCESS {
            return Vec::new();
        }
        let mut out = Vec::new();
        for i in 0..4096u32 {
            let mut name = vec![0u16; 256];
            let mut len = name.len() as u32;
            // SAFETY: `name` holds `len` UTF-16 units; the other out-pointers may be null.
            let rc = unsafe {
                RegEnumKeyExW(
                    h,
                    i,
                    name.as_mut_ptr(),
                    &mut len,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if rc != ERROR_SUCCESS {
                break;
            }
            if let Some(units) = name.get(..len as usize) {
                out.push(String::from_utf16_lossy(units));
            }
        }
        // SAFETY: `h` was opened above.
        unsafe {
            RegCloseKey(h);
        }
        out
    }
}

/// The two hives gpudoctor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    CurrentUser,
    LocalMachine,
}

impl Root {
    pub fn name(self) -> &'static str {
        match self {
            Root::CurrentUser => "HKCU",
            Root::LocalMachine => "HKLM",
        }
    }
}

#[cfg(windows)]
pub use imp::{dword, dword_result, string, subkeys};

#[cfg(not(windows))]
pub fn string(_root: Root, _key: &str, _name: Option<&str>) -> Option<String> {
    None
}

#[cfg(not(windows))]
pub fn dword(_root: Root, _key: &str, _name: &str) -> Option<u32> {
    None
}

#[cfg(not(windows))]
pub fn subkeys(_root: Root, _key: &str) -> Vec<String> {
    Vec::new()
}

/// The Python interpreters registered as PEP 514 describes (https://peps.python.org/pep-0514/):
/// `HKCU` and `HKLM` `Software\Python\<Company>\<Tag>\InstallPath`, whose `ExecutablePath` value
/// names the interpreter (or whose default value is the folder holding `python.exe`). This is
/// what the `py` launcher lists with `py -0p`; python.org's and Anaconda's installers register
/// there. The `PyLauncher` key is the launcher's own, not an interpreter.
pub fn pep514_interpreters() -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    for root in [Root::CurrentUser, Root::LocalMachine] {
        for company in subkeys(root, r"Software\Python") {
            if company.eq_ignore_ascii_case("PyLauncher") {
                continue;
            }
            let base = format!(r"Software\Python\{company}");
            for tag in subkeys(root, &base) {
                let install = format!(r"{base}\{tag}\InstallPath");
                let exe = string(root, &install, Some("ExecutablePath"))
                    .map(std::path::PathBuf::from)
                    .or_else(|| {
                        string(root, &install, None)
                            .map(|d| std::path::Path::new(&d).join("python.exe"))
                    });
                if let Some(exe) = exe {
                    out.push((exe, format!(r"registry {}\{base}\{tag}", root.name())));
                }
            }
        }
    }
    out
}
