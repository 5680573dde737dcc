//! The host side of a run: the resident memory of the command's process tree (from /proc),
//! and the memory cgroup gpudoctor and the command run in (a container's or a systemd scope's
//! limit, and how many times its OOM killer struck), cgroup v2 or v1.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The processes of the tree rooted at `root` (itself included), from one Toolhelp snapshot of
/// every process with its parent.
#[cfg(windows)]
pub fn tree(_proc_root: &Path, root: u32) -> Vec<u32> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W,
        TH32CS_SNAPPROCESS,
    };
    let mut pairs = Vec::new();
    // SAFETY: a snapshot handle closed below; `e` is sized as the API requires.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snap == INVALID_HANDLE_VALUE || snap.is_null() {
            return vec![root];
        }
        let mut e = PROCESSENTRY32W {
            dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32,
            ..Default::default()
        };
        let mut ok = Process32FirstW(snap, &mut e);
        while ok != 0 && pairs.len() < 100_000 {
            pairs.push((e.th32ProcessID, e.th32ParentProcessID));
            ok = Process32NextW(snap, &mut e);
        }
        CloseHandle(snap);
    }
    descendants(root, &pairs)
}

/// The processes of the tree rooted at `root` (itself included), by scanning /proc once.
#[cfg(not(windows))]
pub fn tree(proc_root: &Path, root: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return vec![root];
    };
    let pairs: Vec<(u32, u32)> = dir
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((pid, ppid(&e.path().join("stat"))?))
        })
        .collect();
    descendants(root, &pairs)
}

/// `root` and every process whose parent chain leads to it, from (pid, parent pid) pairs.
pub fn descendants(root: u32, pairs: &[(u32, u32)]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, pp) in pairs {
        if pid != pp {
            children.entry(*pp).or_default().push(*pid);
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while let Some(p) = out.get(i).copied() {
        if let Some(kids) = children.get(&p) {
            for k in kids {
                // Windows reuses PIDs and keeps a dead parent's: never loop.
                if !out.contains(k) {
                    out.push(*k);
                }
            }
        }
        i += 1;
        if out.len() > 100_000 {
            break;
        }
    }
    out
}

/// The parent pid from /proc/PID/stat ("pid (comm) state ppid ...": the name may hold spaces
/// and parentheses, so read after the last ')').
#[cfg(not(windows))]
fn ppid(stat: &Path) -> Option<u32> {
    let s = std::fs::read_to_string(stat).ok()?;
    let rest = s.get(s.rfind(')')? + 1..)?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Resident memory of one process, bytes: its working set (K32GetProcessMemoryInfo).
#[cfg(windows)]
pub fn rss(_proc_root: &Path, pid: u32) -> Option<u64> {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    // SAFETY: a handle opened and closed here; `c` is a plain C struct sized as declared.
    unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if h.is_null() {
            return None;
        }
        let mut c: PROCESS_MEMORY_COUNTERS = std::mem::zeroed();
        c.cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        let ok = K32GetProcessMemoryInfo(h, &mut c, c.cb);
        CloseHandle(h);
        (ok != 0).then_some(c.WorkingSetSize as u64)
    }
}

/// Resident memory of one process, bytes (/proc/PID/statm, second field, in pages).
#[cfg(not(windows))]
pub fn rss(proc_root: &Path, pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(proc_root.join(pid.to_string()).join("statm")).ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

#[cfg(unix)]
fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(not(any(unix, windows)))]
fn page_size() -> u64 {
    4096
}

/// A process's name (/proc/PID/comm), cleaned for printing.
pub fn name(proc_root: &Path, pid: u32) -> Option<String> {
    std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm"))
        .ok()
        .map(|s| crate::sanitize::clean_line(s.trim(), 64))
}

/// The host's memory, bytes (MemTotal in /proc/meminfo); None where it cannot be read (and on
/// Windows, where the OOM killer does not exist).
pub fn memory_total(proc_root: &Path) -> Option<u64> {
    if cfg!(windows) {
        return None;
    }
    let text = std::fs::read_to_string(proc_root.join("meminfo")).ok()?;
    meminfo_total(&text)
}

/// MemTotal of a /proc/meminfo text ("MemTotal:       24684084 kB"), bytes.
pub fn meminfo_total(text: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let mut f = rest.split_whitespace();
    let n: u64 = f.next()?.parse().ok()?;
    match f.next() {
        Some("kB") | None => n.checked_mul(1024),
        Some(_) => None,
    }
}

/// The memory cgroup of a process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cgroup {
    /// The cgroup's directory.
    pub path: String,
    /// "v2" or "v1".
    pub version: &'static str,
    /// The memory limit, bytes (None: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<u64>,
    /// The OOM killer's kills in this cgroup so far (memory.events / memory.oom_control).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u64>,
    /// Memory charged to the cgroup now, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_current: Option<u64>,
    /// The most it was charged (memory.peak / memory.max_usage_in_bytes), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_peak: Option<u64>,
}

/// The memory cgroup `/proc/PID/cgroup` names, under the cgroup mount at `sys` (normally
/// /sys/fs/cgroup). Inside a container the named path may not exist in its namespace; the
/// mount's root is then the container's own cgroup.
pub fn cgroup(proc_root: &Path, pid: &str, sys: &Path) -> Option<Cgroup> {
    if cfg!(windows) {
        // No cgroups on Windows (and under Wine, /proc would be the Linux host's).
        return None;
    }
    let text = std::fs::read_to_string(proc_root.join(pid).join("cgroup")).ok()?;
    let mut v1: Option<String> = None;
    let mut v2: Option<String> = None;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(ctl), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if id == "0" && ctl.is_empty() {
            v2 = Some(path.to_string());
        } else if ctl.split(',').any(|c| c == "memory") {
            v1 = Some(path.to_string());
        }
    }
    let pick = |base: PathBuf, rel: &str, marker: &str| -> Option<PathBuf> {
        let joined = base.join(rel.trim_start_matches('/'));
        if joined.join(marker).is_file() {
            Some(joined)
        } else if base.join(marker).is_file() {
            Some(base)
        } else {
            None
        }
    };
    if let Some(rel) = &v1 {
        if let Some(dir) = pick(sys.join("memory"), rel, "memory.limit_in_bytes") {
            return Some(read_v1(dir));
        }
    }
    if let Some(rel) = &v2 {
        for base in [sys.to_path_buf(), sys.join("unified")] {
            if let Some(dir) = pick(base, rel, "memory.max") {
                return Some(read_v2(dir));
            }
        }
    }
    None
}

fn read_num(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// "key value" lines (memory.events, memory.oom_control).
fn read_key(p: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(p).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

fn read_v2(dir: PathBuf) -> Cgroup {
    let max = std::fs::read_to_string(dir.join("memory.max"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    Cgroup {
        version: "v2",
        memory_max: max,
        oom_kills: read_key(&dir.join("memory.events"), "oom_kill"),
        memory_current: read_num(&dir.join("memory.current")),
        memory_peak: read_num(&dir.join("memory.peak")),
        path: dir.display().to_string(),
    }
}

fn read_v1(dir: PathBuf) -> Cgroup {
    // v1 writes "no limit" as the largest page-aligned i64.
    let max = read_num(&dir.join("memory.limit_in_bytes")).filter(|m| *m < (1u64 << 62));
    Cgroup {
        version: "v1",
        memory_max: max,
        oom_kills: read_key(&dir.join("memory.oom_control"), "oom_kill"),
        memory_current: read_num(&dir.join("memory.usage_in_bytes")),
        memory_peak: read_num(&dir.join("memory.max_usage_in_bytes")),
        path: dir.display().to_string(),
    }
}

/// Re-reads a cgroup found before.
pub fn reread(c: &Cgroup) -> Cgroup {
    let dir = PathBuf::from(&c.path);
    if c.version == "v2" {
        read_v2(dir)
    } else {
        read_v1(dir)
    }
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
