//! The version resource of a Windows DLL or EXE, read from the file itself: the PE headers, the
//! resource section's tree down to `RT_VERSION`, and the `VS_FIXEDFILEINFO` in it. Only the
//! headers and the resource section are read, so a 600 MB cuDNN DLL costs a few kilobytes. Plain
//! file reading: it works on every platform, which lets Linux tests read real Windows DLLs.
//!
//! Layout: Microsoft's "PE Format" page (learn.microsoft.com/windows/win32/debug/pe-format:
//! optional header data directories, section table, `.rsrc` section) and `VS_FIXEDFILEINFO`
//! (learn.microsoft.com/windows/win32/api/verrsrc/ns-verrsrc-vs_fixedfileinfo, signature
//! 0xFEEF04BD).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The two version numbers of a version resource, each as four 16-bit parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileVersion {
    pub file: [u16; 4],
    pub product: [u16; 4],
}

impl FileVersion {
    /// "a.b.c.d" of the file version.
    pub fn file_string(&self) -> String {
        let [a, b, c, d] = self.file;
        format!("{a}.{b}.{c}.{d}")
    }
}

/// The NVIDIA driver version a driver DLL's file version stands for: the last five digits of its
/// last two parts, "32.0.15.6094" → "560.94" (NVIDIA's Windows driver numbering: the file
/// version's last digits are the driver branch and build; nvidia.custhelp.com answer 4458 and
/// any nvcuda.dll's Details tab).
pub fn driver_version_of(v: &FileVersion) -> Option<String> {
    let digits = format!("{}{:04}", v.file[2], v.file[3]);
    if digits.len() < 5 || v.file[3] > 9999 {
        return None;
    }
    let last5 = digits.get(digits.len() - 5..)?;
    let (major, minor) = last5.split_at(3);
    let major = major.trim_start_matches('0');
    (!major.is_empty()).then(|| format!("{major}.{minor}"))
}

/// Reads the version resource of the PE file at `path`; None when it is not a PE file or has no
/// version resource.
pub fn file_version(path: &Path) -> Option<FileVersion> {
    let mut f = File::open(path).ok()?;
    let mut head = vec![0u8; 4096];
    let n = read_at(&mut f, 0, &mut head)?;
    head.truncate(n);
    let sections = sections(&head)?;
    let (rva, size) = resource_dir(&head)?;
    let sec = sections
        .iter()
        .find(|s| rva >= s.va && rva < s.va.saturating_add(s.raw_size.max(s.v_size)))?;
    // The resource section, read whole (capped: resource sections of real DLLs are kilobytes
    // to a few megabytes).
    let len = sec.raw_size.min(16 << 20) as usize;
    let mut rsrc = vec![0u8; len];
    let n = read_at(&mut f, u64::from(sec.raw_ptr), &mut rsrc)?;
    rsrc.truncate(n);
    let _ = size;
    version_from_rsrc(&rsrc, sec.va, rva)
}

fn read_at(f: &mut File, off: u64, buf: &mut [u8]) -> Option<usize> {
    f.seek(SeekFrom::Start(off)).ok()?;
    let mut got = 0;
    while got < buf.len() {
        match f.read(buf.get_mut(got..)?) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(got)
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

struct Section {
    va: u32,
    v_size: u32,
    raw_size: u32,
    raw_ptr: u32,
}

/// Offset of the optional header, and the header's size.
fn optional_header(head: &[u8]) -> Option<(usize, usize)> {
    if head.get(..2)? != b"MZ" {
        return None;
    }
    let pe = u32_at(head, 0x3c)? as usize;
    if head.get(pe..pe + 4)? != b"PE\0\0" {
        return None;
    }
    let coff = pe + 4;
    let opt_size = u16_at(head, coff + 16)? as usize;
    Some((coff + 20, opt_size))
}

fn sections(head: &[u8]) -> Option<Vec<Section>> {
    let (opt, opt_size) = optional_header(head)?;
    let pe = u32_at(head, 0x3c)? as usize;
    let count = u16_at(head, pe + 4 + 2)? as usize;
    let table = opt + opt_size;
    let mut out = Vec::with_capacity(count);
    for i in 0..count.min(96) {
        let s = table + i * 40;
        out.push(Section {
            v_size: u32_at(head, s + 8)?,
            va: u32_at(head, s + 12)?,
            raw_size: u32_at(head, s + 16)?,
            raw_ptr: u32_at(head, s + 20)?,
        });
    }
    Some(out)
}

/// The resource table's data directory entry (index 2): RVA and size.
fn resource_dir(head: &[u8]) -> Option<(u32, u32)> {
    let (opt, _) = optional_header(head)?;
    let dirs = match u16_at(head, opt)? {
        0x20b => opt + 112, // PE32+
        0x10b => opt + 96,  // PE32
        _ => return None,
    };
    let count = u32_at(head, dirs - 4)?;
    if count < 3 {
        return None;
    }
    let rva = u32_at(head, dirs + 2 * 8)?;
    let size = u32_at(head, dirs + 2 * 8 + 4)?;
    (rva != 0 && size != 0).then_some((rva, size))
}

const RT_VERSION: u32 = 16;
const FIXED_SIGNATURE: u32 = 0xFEEF_04BD;

/// Walks type → name → language in the resource tree (offsets relative to the tree's root, at
/// `root_rva - section_va` in `rsrc`) and reads the first version resource.
fn version_from_rsrc(rsrc: &[u8], section_va: u32, root_rva: u32) -> Option<FileVersion> {
    let root = root_rva.checked_sub(section_va)? as usize;
    let entry = |dir: usize, want: Option<u32>| -> Option<u32> {
        let named = u16_at(rsrc, dir + 12)? as usize;
        let ids = u16_at(rsrc, dir + 14)? as usize;
        (0..(named + ids).min(4096)).find_map(|i| {
            let e = dir + 16 + i * 8;
            let id = u32_at(rsrc, e)?;
            let off = u32_at(rsrc, e + 4)?;
            match want {
                Some(w) => (id == w).then_some(off),
                None => Some(off),
            }
        })
    };
    let sub = |off: u32| -> Option<usize> {
        (off & 0x8000_0000 != 0).then(|| root + (off & 0x7fff_ffff) as usize)
    };
    let types = entry(root, Some(RT_VERSION))?;
    let names = sub(types)?;
    let langs = sub(entry(names, None)?)?;
    let data_entry = entry(langs, None)?;
    if data_entry & 0x8000_0000 != 0 {
        return None;
    }
    let de = root + data_entry as usize;
    let data_rva = u32_at(rsrc, de)?;
    let data_size = u32_at(rsrc, de + 4)? as usize;
    let start = data_rva.checked_sub(section_va)? as usize;
    let blob = rsrc.get(start..start.checked_add(data_size)?)?;
    fixed_info(blob)
}

/// The VS_FIXEDFILEINFO inside a VS_VERSIONINFO blob: it follows the "VS_VERSION_INFO" key,
/// 32-bit aligned.
pub fn fixed_info(blob: &[u8]) -> Option<FileVersion> {
    let mut off = 0;
    while off + 52 <= blob.len() {
        if u32_at(blob, off)? == FIXED_SIGNATURE {
            let w = |o: usize| u32_at(blob, off + o);
            let (fms, fls, pms, pls) = (w(8)?, w(12)?, w(16)?, w(20)?);
            let split = |ms: u32, ls: u32| {
                [
                    (ms >> 16) as u16,
                    (ms & 0xffff) as u16,
                    (ls >> 16) as u16,
                    (ls & 0xffff) as u16,
                ]
            };
            return Some(FileVersion {
                file: split(fms, fls),
                product: split(pms, pls),
            });
        }
        off += 4;
    }
    None
}

#[cfg(test)]
#[path = "pe_tests.rs"]
mod tests;
