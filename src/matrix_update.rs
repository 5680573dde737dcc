//! `gpudoctor matrix update --from FILE|URL [--sha256 HEX]`: reads or downloads a newer matrix
//! (one YAML file holding every table: the `gpudoctor-matrix.yaml` each release ships, made by
//! scripts/matrix-bundle.sh), checks its hash and validates it completely before anything is
//! replaced (every row parses and makes sense, and every table the built-in matrix has rows in
//! has rows), then writes it atomically to the user's cache directory, keeping the previous copy
//! as `matrix.yaml.prev`. HTTPS only; plain HTTP is accepted for loopback addresses (tests).
//! Nothing here runs unless asked: `check` never touches the network.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::matrix::Matrix;

/// The largest matrix accepted (the embedded one is about 50 KB).
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// `$GPUDOCTOR_CACHE_DIR`, `$XDG_CACHE_HOME/gpudoctor` or `~/.cache/gpudoctor`; on Windows
/// `%GPUDOCTOR_CACHE_DIR%` or `%LOCALAPPDATA%\gpudoctor` (where Windows programs keep caches).
pub fn cache_dir() -> Option<PathBuf> {
    let get = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        return get("GPUDOCTOR_CACHE_DIR")
            .or_else(|| get("LOCALAPPDATA").map(|p| p.join("gpudoctor")));
    }
    get("GPUDOCTOR_CACHE_DIR")
        .or_else(|| get("XDG_CACHE_HOME").map(|p| p.join("gpudoctor")))
        .or_else(|| get("HOME").map(|p| p.join(".cache").join("gpudoctor")))
}

/// Where an updated matrix lives.
pub fn cached_path() -> Option<PathBuf> {
    cache_dir().map(|d| d.join("matrix.yaml"))
}

/// What an update did.
#[derive(Debug)]
pub struct Updated {
    pub path: PathBuf,
    pub previous: Option<PathBuf>,
    pub matrix: Matrix,
    pub sha256: String,
}

/// Checks the URL: https, or http to a loopback address.
pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("--from {url}: not a URL ({e})"))?;
    match u.scheme() {
        "https" => Ok(u),
        "http" => {
            let loopback = match u.host() {
                Some(url::Host::Ipv4(a)) => a.is_loopback(),
                Some(url::Host::Ipv6(a)) => a.is_loopback(),
                Some(url::Host::Domain(d)) => d == "localhost",
                None => false,
            };
            if loopback {
                Ok(u)
            } else {
                Err(format!("--from {url}: only https:// is accepted (plain http only to 127.0.0.1 / localhost)"))
            }
        }
        other => Err(format!(
            "--from {url}: the scheme {other}: is not supported; use https://"
        )),
    }
}

/// True when `from` names a URL rather than a file: it has a scheme ("https://…").
fn is_url(from: &str) -> bool {
    from.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    })
}

/// Reads a local matrix file, with the download's size cap.
fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("--from {}: {e}: nothing was changed", path.display()))?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(format!(
            "--from {}: not a regular file of at most {MAX_BYTES} bytes: nothing was changed",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|e| format!("--from {}: {e}: nothing was changed", path.display()))
}

/// Reads or downloads, verifies, validates and installs a matrix into `dir`.
pub fn update(from: &str, sha256: Option<&str>, dir: &Path) -> Result<Updated, String> {
    if let Some(h) = sha256 {
        if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("--sha256 {h}: expected 64 hexadecimal digits"));
        }
    }
    let (body, what) = if is_url(from) {
        (fetch(check_url(from)?)?, "download")
    } else {
        (read_file(Path::new(from))?, "file")
    };
    let url = from;
    let digest = hex(&Sha256::digest(&body));
    if let Some(want) = sha256 {
        if !digest.eq_ignore_ascii_case(want) {
            return Err(format!(
                "the {what}'s sha256 is {digest}, not {want}: nothing was changed"
            ));
        }
    }
    let text = String::from_utf8(body)
        .map_err(|_| format!("the {what} is not UTF-8 text: nothing was changed"))?;
    let matrix = Matrix::from_texts(std::iter::once((url.to_string(), text.clone())), url)
        .map_err(|errs| {
            format!(
                "the matrix in the {what} is not valid, nothing was changed:\n  {}",
                errs.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n  ")
            )
        })?;
    // Every table the built-in matrix has must have rows: an installed matrix replaces the
    // built-in one whole, so a file cut short (no pytorch or jax rows) would silently take
    // those rules away from every later check.
    let missing = match Matrix::embedded() {
        Ok(reference) => matrix.missing_tables(&reference),
        Err(_) => [
            ("cuda_toolkits", matrix.toolkits.len()),
            ("driver_branches", matrix.branches.len()),
            ("gpus", matrix.gpus.len()),
        ]
        .into_iter()
        .filter(|(_, n)| *n == 0)
        .map(|(name, _)| name)
        .collect(),
    };
    if !missing.is_empty() {
        return Err(format!(
            "the matrix in the {what} has no rows in {}: it must hold every table in one file, as the built-in matrix does (a download cut short, or a partial file?): nothing was changed",
            missing.join(", ")
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("matrix.yaml");
    // The previous matrix is kept beside it; both are written through a temporary file and
    // renamed, and neither may be anything but a regular file (safewrite).
    let existing = crate::safewrite::target(&path)
        .map_err(|e| format!("cannot write {}: {e}: nothing was changed", path.display()))?;
    let previous = match existing {
        crate::safewrite::Target::File { exists: false, .. } => None,
        _ => {
            let prev = dir.join("matrix.yaml.prev");
            let old = crate::userfile::read(&path, "installed matrix")
                .map_err(|e| format!("{}: {e}: nothing was changed", path.display()))?;
            crate::safewrite::write(&prev, old.as_bytes(), crate::safewrite::Existing::Replace)
                .map_err(|e| {
                    format!(
                        "cannot keep the previous matrix as {}: {e}: nothing was changed",
                        prev.display()
                    )
                })?;
            Some(prev)
        }
    };
    crate::safewrite::write(&path, text.as_bytes(), crate::safewrite::Existing::Replace)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Updated {
        path,
        previous,
        matrix,
        sha256: digest,
    })
}

fn fetch(u: reqwest::Url) -> Result<Vec<u8>, String> {
    let shown = u.to_string();
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::custom(|a| {
            // Follow redirects only to https (never downgrade).
            if a.url().scheme() == "https" && a.previous().len() < 5 {
                a.follow()
            } else {
                a.stop()
            }
        }))
        .build()
        .map_err(|e| format!("cannot start an HTTP client: {e}"))?;
    let resp = client.get(u).send().map_err(|e| {
        format!(
            "could not download {shown}: {}: nothing was changed",
            chain(&e)
        )
    })?;
    if !resp.status().is_success() {
        return Err(format!(
            "{shown} answered {}: nothing was changed",
            resp.status()
        ));
    }
    let mut body = Vec::new();
    resp.take(MAX_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("the download from {shown} broke off: {e}: nothing was changed"))?;
    if body.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{shown} is larger than {MAX_BYTES} bytes: nothing was changed"
        ));
    }
    Ok(body)
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    crate::sanitize::clean_line(&s, 400)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
