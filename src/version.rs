//! Version numbers as NVIDIA and Python print them, parsed into comparable values.
//!
//! Driver versions ("580.159.04", "470.82.01", "375.74"), CUDA versions ("12.4", or 12040 from
//! `cudaRuntimeGetVersion`), cuDNN's two integer encodings (8907 for 8.9.7; 90100 for 9.1.0), and
//! PEP 440 framework versions with local tags ("2.1.0+cu121").

use std::cmp::Ordering;
use std::fmt;

/// An NVIDIA driver version: branch, minor and optional patch ("580.159.04").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DriverVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: Option<u32>,
    /// Width of the printed minor and patch fields, kept so that "535.54.03" prints as read.
    minor_width: u8,
    patch_width: u8,
}

impl DriverVersion {
    /// Parses "580.159.04", "470.82.01", "375.74", "551.61" (Windows). Extra text is rejected.
    pub fn parse(s: &str) -> Option<DriverVersion> {
        let s = s.trim();
        let mut parts = s.split('.');
        let major: u32 = parse_digits(parts.next()?)?;
        let minor_s = parts.next()?;
        let minor: u32 = parse_digits(minor_s)?;
        let (patch, patch_width) = match parts.next() {
            Some(p) => (Some(parse_digits(p)?), p.len() as u8),
            None => (None, 0),
        };
        if parts.next().is_some() {
            return None;
        }
        Some(DriverVersion {
            major,
            minor,
            patch,
            minor_width: minor_s.len() as u8,
            patch_width,
        })
    }

    /// The driver branch ("R580").
    pub fn branch(&self) -> u32 {
        self.major
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch.unwrap_or(0)).cmp(&(
            other.major,
            other.minor,
            other.patch.unwrap_or(0),
        ))
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.minor_width == 0 {
            // A bare branch ("580"), as a minimum is sometimes stated.
            return write!(f, "{}", self.major);
        }
        write!(
            f,
            "{}.{:0w$}",
            self.major,
            self.minor,
            w = self.minor_width as usize
        )?;
        if let Some(p) = self.patch {
            write!(f, ".{:0w$}", p, w = self.patch_width as usize)?;
        }
        Ok(())
    }
}

fn parse_digits(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A CUDA version, major.minor (the patch level is not part of CUDA's API encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    pub major: u32,
    pub minor: u32,
}

impl CudaVersion {
    /// "12.4", "12.4.1", "11.0", "12", or the API integer "12040" / "11040".
    pub fn parse(s: &str) -> Option<CudaVersion> {
        let s = s.trim();
        if !s.contains('.') && s.len() >= 4 {
            let n: i32 = s.parse().ok()?;
            return CudaVersion::from_api(n);
        }
        let mut parts = s.split('.');
        let major = parse_digits(parts.next()?)?;
        let minor = match parts.next() {
            Some(m) => parse_digits(m)?,
            None => 0,
        };
        if let Some(p) = parts.next() {
            parse_digits(p)?;
        }
        if major == 0 || major > 99 {
            return None;
        }
        Some(CudaVersion { major, minor })
    }

    /// From `cudaRuntimeGetVersion` / `cuDriverGetVersion`: 1000*major + 10*minor.
    pub fn from_api(v: i32) -> Option<CudaVersion> {
        if v <= 0 {
            return None;
        }
        let major = (v / 1000) as u32;
        let minor = ((v % 1000) / 10) as u32;
        if major == 0 {
            return None;
        }
        Some(CudaVersion { major, minor })
    }

    pub fn to_api(self) -> i32 {
        (self.major * 1000 + self.minor * 10) as i32
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// 12040 → "12.4"; 0 or less → "none".
pub fn cuda_api_to_string(v: i32) -> String {
    match CudaVersion::from_api(v) {
        Some(c) => c.to_string(),
        None => "none".to_string(),
    }
}

/// Decodes `cudnnGetVersion()` / `CUDNN_VERSION`: MAJOR*1000+MINOR*100+PATCH up to 8.x
/// (8907 = 8.9.7), MAJOR*10000+MINOR*100+PATCH from 9.x (90100 = 9.1.0). A value of 10000 or
/// more uses the 9.x rule (reference/compat-facts.md §4; xla#9843, pytorch#169139).
pub fn decode_cudnn(raw: u64) -> Option<String> {
    if raw == 0 {
        return None;
    }
    let (major, rest) = if raw >= 10_000 {
        (raw / 10_000, raw % 10_000)
    } else {
        (raw / 1000, raw % 1000)
    };
    Some(format!("{}.{}.{}", major, rest / 100, rest % 100))
}

/// A PEP 440 version split into its release numbers, pre-release and local tag.
/// "2.1.0+cu121" → release [2,1,0], local "cu121"; "2.16.0rc0" → pre ("rc", 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pep440 {
    pub release: Vec<u64>,
    pub pre: Option<(String, u64)>,
    pub dev: Option<u64>,
    pub local: Option<String>,
}

impl Pep440 {
    pub fn parse(s: &str) -> Option<Pep440> {
        let s = s.trim().trim_start_matches(['v', 'V']);
        let (public, local) = match s.split_once('+') {
            Some((p, l)) => (p, Some(l.to_ascii_lowercase())),
            None => (s, None),
        };
        let public = public.to_ascii_lowercase();
        let bytes = public.as_bytes();
        let mut i = 0;
        let mut release = Vec::new();
        loop {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if start == i {
                return None;
            }
            release.push(public[start..i].parse().ok()?);
            if i < bytes.len()
                && bytes[i] == b'.'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                i += 1;
                continue;
            }
            break;
        }
        let rest = &public[i..];
        let rest = rest.trim_start_matches(['.', '-', '_']);
        let mut pre = None;
        let mut dev = None;
        let mut tail = rest;
        for tag in ["rc", "alpha", "beta", "a", "b", "c", "pre", "preview"] {
            if let Some(r) = tail.strip_prefix(tag) {
                let r = r.trim_start_matches(['.', '-', '_']);
                let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
                let n = digits.parse().unwrap_or(0);
                let name = match tag {
                    "alpha" => "a",
                    "beta" => "b",
                    "c" | "pre" | "preview" => "rc",
                    t => t,
                };
                pre = Some((name.to_string(), n));
                tail = &r[digits.len()..];
                break;
            }
        }
        let tail = tail.trim_start_matches(['.', '-', '_']);
        if let Some(r) = tail.strip_prefix("post") {
            // A post release sorts after its release; fold it into the release numbers.
            let digits: String = r
                .trim_start_matches(['.', '-', '_'])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            release.push(digits.parse().unwrap_or(0));
        } else if let Some(r) = tail.strip_prefix("dev") {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            dev = Some(digits.parse().unwrap_or(0));
        } else if !tail.is_empty() {
            return None;
        }
        Some(Pep440 {
            release,
            pre,
            dev,
            local,
        })
    }

    /// Major.minor, e.g. (2, 1).
    pub fn major_minor(&self) -> (u64, u64) {
        (
            self.release.first().copied().unwrap_or(0),
            self.release.get(1).copied().unwrap_or(0),
        )
    }

    /// The CUDA version of a `+cuXYZ` local tag: "cu121" → 12.1, "cu118" → 11.8, "cu130" → 13.0.
    pub fn local_cuda(&self) -> Option<CudaVersion> {
        let local = self.local.as_deref()?;
        let tag = local.split('.').next()?;
        let digits = tag.strip_prefix("cu")?;
        if digits.len() < 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (maj, min) = digits.split_at(digits.len() - 1);
        Some(CudaVersion {
            major: maj.parse().ok()?,
            minor: min.parse().ok()?,
        })
    }

    /// True for a `+cpu` local tag.
    pub fn is_cpu_tag(&self) -> bool {
        self.local
            .as_deref()
            .is_some_and(|l| l == "cpu" || l.starts_with("cpu."))
    }
}

/// PEP 503 name normalisation: lower case, runs of '-', '_' and '.' become '-'.
pub fn normalize_dist_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut last_sep = false;
    for c in name.chars() {
        if c == '-' || c == '_' || c == '.' {
            if !last_sep {
                out.push('-');
            }
            last_sep = true;
        } else {
            out.push(c.to_ascii_lowercase());
            last_sep = false;
        }
    }
    out
}

/// A dotted version ("12.4", "0.4.30", "8.9.2.26"), compared numerically with missing parts as 0.
pub fn dotted(s: &str) -> Option<Vec<u64>> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    s.split('.')
        .map(|p| {
            if p.is_empty() || p.len() > 12 || !p.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                p.parse().ok()
            }
        })
        .collect()
}

/// Compares two dotted versions, padding the shorter with zeros ("12.4" == "12.4.0").
pub fn cmp_dotted(a: &[u64], b: &[u64]) -> Ordering {
    let n = a.len().max(b.len());
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        match x.cmp(&y) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    Ordering::Equal
}

/// `v` within [from, to]; a last component "x" in `to` matches any value there ("9.5.x").
/// None when a bound is not a version.
pub fn in_range(v: &str, from: &str, to: &str) -> Option<bool> {
    let v = dotted(v)?;
    let lo = dotted(from)?;
    if cmp_dotted(&v, &lo) == Ordering::Less {
        return Some(false);
    }
    match to.strip_suffix(".x") {
        Some(prefix) => {
            let p = dotted(prefix)?;
            let head: Vec<u64> = v.iter().take(p.len()).copied().collect();
            Some(cmp_dotted(&head, &p) != Ordering::Greater)
        }
        None => Some(cmp_dotted(&v, &dotted(to)?) != Ordering::Greater),
    }
}

impl Pep440 {
    /// The version normalised to semver for comparison: the first three release numbers;
    /// pre-releases as `-a.N`, `-b.N`, `-rc.N` and dev releases as `-0dev.N` (so that, as in
    /// PEP 440, dev < a < b < rc < final); further release numbers and the local tag go to build
    /// metadata, which semver ignores when comparing.
    pub fn to_semver(&self) -> semver::Version {
        let part = |i: usize| self.release.get(i).copied().unwrap_or(0);
        let mut v = semver::Version::new(part(0), part(1), part(2));
        let mut pre: Vec<String> = Vec::new();
        if let Some((kind, n)) = &self.pre {
            pre.push(kind.clone());
            pre.push(n.to_string());
        }
        if let Some(d) = self.dev {
            pre.push("0dev".to_string());
            pre.push(d.to_string());
        }
        if !pre.is_empty() {
            v.pre = semver::Prerelease::new(&pre.join(".")).unwrap_or(semver::Prerelease::EMPTY);
        }
        let mut build: Vec<String> = self.release.iter().skip(3).map(|n| n.to_string()).collect();
        if let Some(l) = &self.local {
            build.extend(
                l.split(['.', '-', '_'])
                    .filter(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric()))
                    .map(str::to_string),
            );
        }
        if !build.is_empty() {
            v.build = semver::BuildMetadata::new(&build.join("."))
                .unwrap_or(semver::BuildMetadata::EMPTY);
        }
        v
    }

    /// PEP 440 order of the public versions (local tags ignored).
    pub fn cmp_public(&self, other: &Pep440) -> Ordering {
        self.to_semver()
            .cmp_precedence(&other.to_semver())
            .then_with(|| cmp_dotted(&self.release, &other.release))
    }
}

impl DriverVersion {
    /// As semver (major.minor.patch), for comparisons across tools.
    pub fn to_semver(&self) -> semver::Version {
        semver::Version::new(
            u64::from(self.major),
            u64::from(self.minor),
            u64::from(self.patch.unwrap_or(0)),
        )
    }

    /// Like [`DriverVersion::parse`], also accepting a bare branch ("580" = 580.0).
    pub fn parse_min(s: &str) -> Option<DriverVersion> {
        DriverVersion::parse(s).or_else(|| {
            let major = parse_digits(s.trim())?;
            Some(DriverVersion {
                major,
                minor: 0,
                patch: None,
                minor_width: 0,
                patch_width: 0,
            })
        })
    }
}

impl CudaVersion {
    pub fn to_semver(self) -> semver::Version {
        semver::Version::new(u64::from(self.major), u64::from(self.minor), 0)
    }
}

#[cfg(test)]
#[path = "version_tests.rs"]
mod tests;
