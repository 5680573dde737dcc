//! Reads glibc's `/etc/ld.so.cache` directly (what `ldconfig -p` prints), so finding the
//! libraries the dynamic loader knows costs no child process.
//!
//! Format (glibc `sysdeps/generic/dl-cache.h`): an optional old-format block starting with
//! "ld.so-1.7.0", then the new format: the magic "glibc-ld.so.cache" + "1.1", `nlibs: u32`,
//! `len_strings: u32`, 4 bytes of flags and padding, `extension_offset: u32`, 3 unused `u32`,
//! then `nlibs` entries of 24 bytes (`flags: i32, key: u32, value: u32, osversion: u32,
//! hwcap: u64`); `key` and `value` are offsets of NUL-terminated strings from the start of the
//! new-format header.

const OLD_MAGIC: &[u8] = b"ld.so-1.7.0";
const NEW_MAGIC: &[u8] = b"glibc-ld.so.cache1.1";

/// (soname, path) pairs in cache order.
pub fn parse(data: &[u8]) -> Vec<(String, String)> {
    let start = if data.starts_with(NEW_MAGIC) {
        0
    } else if data.starts_with(OLD_MAGIC) {
        // Old header: magic (11) + pad (1) + nlibs u32, then nlibs entries of 12 bytes.
        let Some(n) = read_u32(data, 12) else {
            return Vec::new();
        };
        let off = 16usize.saturating_add((n as usize).saturating_mul(12));
        // The new format follows, aligned to 8 bytes.
        let aligned = (off + 7) & !7;
        match find(data, NEW_MAGIC, aligned.min(data.len())) {
            Some(p) => p,
            None => return Vec::new(),
        }
    } else {
        return Vec::new();
    };
    let hdr = &data[start..];
    let (Some(nlibs), Some(_len_strings)) = (read_u32(hdr, 20), read_u32(hdr, 24)) else {
        return Vec::new();
    };
    let entries_at = 48usize;
    let mut out = Vec::new();
    for i in 0..nlibs as usize {
        let e = entries_at + i * 24;
        let (Some(key), Some(value)) = (read_u32(hdr, e + 4), read_u32(hdr, e + 8)) else {
            break;
        };
        if let (Some(k), Some(v)) = (cstr(hdr, key as usize), cstr(hdr, value as usize)) {
            out.push((k, v));
        }
    }
    out
}

fn read_u32(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn cstr(d: &[u8], at: usize) -> Option<String> {
    let rest = d.get(at..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
#[path = "ldcache_tests.rs"]
mod tests;
