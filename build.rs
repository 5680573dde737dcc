//! Build facts for `gpudoctor --version`: the git commit, the target triple and the embedded
//! compatibility matrix's data version, as compile-time environment variables
//! (`GPUDOCTOR_GIT_COMMIT`, `GPUDOCTOR_TARGET`, `GPUDOCTOR_MATRIX_VERSION`).
//!
//! Also: every knowledge file (`knowledge/*.yaml`, `knowledge/messages/*.yaml`) as JSON in
//! `$OUT_DIR/knowledge/`, which the binary embeds (`knowledge_json!`). Parsing the YAML at run time
//! cost 28 ms for kernel-messages.yaml alone here and about 40 ms on an H200 machine, on `check`'s
//! critical path at the first NVRM line of the kernel log (docs/validation/h200-2026-11-27-run2);
//! the same data as JSON parses in 1.8 ms. The YAML stays the one home of those facts. A YAML
//! that cannot be read gives `null`, which its loader reports as a broken table (tests fail on
//! it, and the tests also parse the YAML itself).
//!
//! Outside a git checkout (a source tarball, `cargo install` from crates.io) the commit is
//! "unknown", unless `GPUDOCTOR_GIT_COMMIT` is set in the build's environment. Nothing here
//! fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The explain catalog's file types (src/explain/catalog.rs reads the same ones).
#[allow(dead_code)]
#[path = "src/explain/catalog_spec.rs"]
mod catalog_spec;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=GPUDOCTOR_GIT_COMMIT");
    let commit = match std::env::var("GPUDOCTOR_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => git_commit(&dir).unwrap_or_else(|| "unknown".to_string()),
    };
    println!("cargo:rustc-env=GPUDOCTOR_GIT_COMMIT={commit}");
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=GPUDOCTOR_TARGET={target}");
    let matrix = dir.join("compat-matrix");
    println!("cargo:rerun-if-changed={}", matrix.display());
    let version = matrix_version(&matrix).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=GPUDOCTOR_MATRIX_VERSION={version}");
    knowledge_json(&dir);
    catalog_json(&dir);
    let inputs = cover_inputs(&dir);
    println!("cargo:rustc-env=GPUDOCTOR_COVER_INPUTS={inputs:#018x}");
}

/// A fingerprint of every file the explain catalog's patterns are made of (explain-catalog/,
/// knowledge/, knowledge/messages/: their names and text, carriage returns left out). The
/// committed cover (src/explain/cover_built.rs) records the one it was computed from; when they
/// are equal, `explain --log` uses that cover without loading the catalog (the catalog is then
/// loaded at the first candidate line). FNV-1a, 64 bits.
fn cover_inputs(dir: &Path) -> u64 {
    let mut files = Vec::new();
    for sub in ["explain-catalog", "knowledge", "knowledge/messages"] {
        println!("cargo:rerun-if-changed={}", dir.join(sub).display());
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".yaml") || name.ends_with(".txt") {
                files.push(format!("{sub}/{name}"));
            }
        }
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().filter(|&&b| b != b'\r') {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in files {
        eat(f.as_bytes());
        eat(&[0]);
        eat(&std::fs::read(dir.join(&f)).unwrap_or_default());
        eat(&[0]);
    }
    h
}

/// The built-in explain catalog (`explain-catalog/signatures.yaml`, `kernel-knowledge.yaml`)
/// as JSON in `$OUT_DIR/explain-catalog/`, each signature with its line in the YAML
/// (`catalog_spec::BuiltFile`): the binary parses that instead of the YAML (56 M instructions
/// at every start of `explain`). Nothing is validated here: `Catalog::embedded` validates what it
/// reads as it always did. A file that does not parse gives `null`, and the binary then reads its
/// YAML, which says what is wrong (the tests fail on it).
fn catalog_json(dir: &Path) {
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("explain-catalog");
    println!("cargo:rerun-if-changed=src/explain/catalog_spec.rs");
    if let Err(e) = std::fs::create_dir_all(&out) {
        println!("cargo:warning=cannot create {}: {e}", out.display());
        return;
    }
    for stem in ["signatures", "kernel-knowledge"] {
        let path = dir.join("explain-catalog").join(format!("{stem}.yaml"));
        println!("cargo:rerun-if-changed={}", path.display());
        let json = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                serde_saphyr::from_str::<catalog_spec::CatalogFile>(&t).map_err(|e| e.to_string())
            })
            .and_then(|f| {
                serde_json::to_string(&catalog_spec::BuiltFile::from(f)).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|e| {
                println!("cargo:warning={}: {e}", path.display());
                "null".to_string()
            });
        if let Err(e) = std::fs::write(out.join(format!("{stem}.json")), json) {
            println!("cargo:warning=cannot write {stem}.json: {e}");
        }
    }
}

/// `knowledge/X.yaml` and `knowledge/messages/X.yaml`, converted to `$OUT_DIR/knowledge/X.json`
/// and `$OUT_DIR/knowledge/messages/X.json`.
fn knowledge_json(dir: &Path) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("knowledge");
    for sub in ["", "messages"] {
        let src = dir.join("knowledge").join(sub);
        println!("cargo:rerun-if-changed={}", src.display());
        let Ok(rd) = std::fs::read_dir(&src) else {
            continue;
        };
        let dest = out.join(sub);
        if let Err(e) = std::fs::create_dir_all(&dest) {
            println!("cargo:warning=cannot create {}: {e}", dest.display());
            continue;
        }
        for e in rd.flatten() {
            let path = e.path();
            let (Some(stem), Some("yaml")) = (
                path.file_stem().and_then(|s| s.to_str()),
                path.extension().and_then(|s| s.to_str()),
            ) else {
                continue;
            };
            println!("cargo:rerun-if-changed={}", path.display());
            let json = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    serde_saphyr::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string())
                })
                .and_then(|v| serde_json::to_string(&v).map_err(|e| e.to_string()))
                .unwrap_or_else(|e| {
                    println!("cargo:warning={}: {e}", path.display());
                    "null".to_string()
                });
            if let Err(e) = std::fs::write(dest.join(format!("{stem}.json")), json) {
                println!("cargo:warning=cannot write {stem}.json: {e}");
            }
        }
    }
}

/// `git rev-parse --short=12 HEAD`; None when git is missing or this is not a checkout. Rebuilds
/// when HEAD or the branch it names moves. (No "-dirty": this script does not rerun when a source
/// file changes, so it could not keep that mark true; `scripts/release.sh` sets
/// `GPUDOCTOR_GIT_COMMIT` itself and marks a release built from a modified tree.)
fn git_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let o = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        if !o.status.success() {
            return None;
        }
        Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // The files whose change means a new commit: HEAD itself, the branch it points to, and
    // packed-refs (where a branch lives after `git gc`).
    let mut watch = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(r);
    }
    for w in watch {
        if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", &w]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    Some(commit)
}

/// The newest `data_version: "YYYY-MM-DD"` of the matrix files: what `Matrix::embedded()`
/// computes at run time (a unit test holds the two equal).
fn matrix_version(dir: &Path) -> Option<String> {
    let mut newest: Option<String> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("yaml") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("data_version:") {
                let v = v.trim().trim_matches('"').trim_matches('\'').to_string();
                if newest.as_ref().is_none_or(|n| v > *n) {
                    newest = Some(v);
                }
            }
        }
    }
    newest
}
