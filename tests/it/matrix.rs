//! The matrix: every row exercised through the query that uses it; `matrix show / validate /
//! path`; `matrix update` against a local HTTP server on 127.0.0.1 (a good file, a wrong
//! sha256, malformed YAML, a server that is down), each leaving the previous matrix intact.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::Run;
use gpudoctor::compat::{driver_runs, DriverFacts, Runs};
use gpudoctor::matrix::{coverage, Coverage, Matrix, Os, EMBEDDED};
use gpudoctor::version::{CudaVersion, DriverVersion};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

fn m() -> Matrix {
    Matrix::embedded().unwrap()
}

#[test]
fn every_toolkit_row_is_reachable() {
    let m = m();
    for r in &m.toolkits {
        let cuda = CudaVersion::parse(&r.cuda).unwrap();
        // A GA row without a driver (13.4, 13.5: not read from their notes) has no minimum.
        if r.ga && r.linux.is_some() {
            let (d, row) = m.ga_driver(cuda, Os::Linux).unwrap();
            assert_eq!(Some(d.to_string()), r.linux, "{}", r.release);
            assert_eq!(row.release, r.release);
        }
        // The driver packaged with any release runs that release (its branch supports it).
        if let Some(l) = &r.linux {
            let v = DriverVersion::parse(l).unwrap();
            let d = DriverFacts {
                version: Some(v),
                cuda: m.driver_cuda(&v),
                os: Os::Linux,
            };
            assert_eq!(
                driver_runs(&m, &d, cuda, true),
                Runs::Yes,
                "{} with {l}",
                r.release
            );
        }
        if let Some(w) = &r.windows {
            let v = DriverVersion::parse(w).unwrap();
            let d = DriverFacts {
                version: Some(v),
                cuda: m.driver_cuda(&v),
                os: Os::Windows,
            };
            assert_eq!(
                driver_runs(&m, &d, cuda, false),
                Runs::Yes,
                "{} with {w}",
                r.release
            );
        }
    }
}

#[test]
fn every_branch_mvc_and_compute_capability_row() {
    let m = m();
    for b in &m.branches {
        let v = DriverVersion::parse(&format!("{}.10", b.branch)).unwrap();
        assert_eq!(
            m.driver_cuda(&v).map(|c| c.to_string()),
            Some(b.cuda.clone()),
            "R{}",
            b.branch
        );
    }
    for r in &m.forward_compat {
        let cuda = CudaVersion::parse(&r.cuda).unwrap();
        assert_eq!(m.forward_compat(cuda), Some(r));
        // Every base branch it names is an older branch of the table.
        for b in &r.branches {
            assert!(
                m.branches.iter().any(|x| x.branch == *b),
                "R{b} of cuda-compat {}",
                r.cuda
            );
        }
    }
    for r in &m.mvc {
        let (d, row) = m.mvc_min(r.major, Os::Linux).unwrap();
        assert_eq!(d.to_string(), r.linux);
        assert_eq!(row.major, r.major);
        let need = CudaVersion {
            major: r.major,
            minor: 9,
        };
        assert_eq!(m.min_driver(need, Os::Linux, false).unwrap().driver, d);
    }
    for c in &m.ccs {
        assert_eq!(m.cc(&c.cc).unwrap(), c);
        if let Some(first) = &c.first_cuda {
            if let Some(cuda) = CudaVersion::parse(first).filter(|c| c.major >= 10) {
                assert!(
                    m.ga_driver(cuda, Os::Linux).is_some(),
                    "{}: no GA driver for {first}",
                    c.cc
                );
            }
        }
    }
}

#[test]
fn every_gpu_name_resolves_to_its_row() {
    let m = m();
    for r in &m.gpus {
        for n in &r.names {
            let name = n.replace('*', "0");
            assert_eq!(m.gpu(&name).map(|x| &x.cc), Some(&r.cc), "{name}");
        }
    }
}

#[test]
fn every_cudnn_row_is_found_by_its_versions() {
    let m = m();
    for r in &m.cudnn {
        assert_eq!(m.cudnn(&r.from), Some(r), "{}", r.from);
        let to = r.to.replace(".x", ".0");
        assert_eq!(m.cudnn(&to), Some(r), "{to}");
    }
}

#[test]
fn every_framework_row_and_variant_is_found() {
    let m = m();
    for r in &m.pytorch {
        for v in &r.variants {
            let version = format!("{}.0+{}", r.torch, v.tag);
            assert_eq!(m.torch(&version), Some(r), "{version}");
            assert!(r.variant(&v.tag).is_some());
            // Each listed architecture really is covered by its own cubins.
            for cc in &v.sass {
                assert!(
                    matches!(coverage(&v.sass, &v.ptx, cc), Coverage::Sass(_)),
                    "{version} {cc}"
                );
            }
        }
    }
    for r in &m.tensorflow {
        assert_eq!(m.tensorflow(&format!("{}.0", r.tf)), Some(r));
    }
    for r in &m.jax {
        assert_eq!(
            m.jax(&r.from, r.cuda_major),
            Some(r),
            "{} CUDA {}",
            r.from,
            r.cuda_major
        );
    }
}

#[test]
fn show_validate_and_path() {
    let r = Run::new().args(["matrix", "show", "--json"]).run();
    assert_eq!(r.code, 0);
    let v = r.json();
    assert_eq!(v["source"], "embedded");
    assert_eq!(v["data_version"], "2026-11-23");
    assert!(v["rows"]["cuda_toolkits"].as_u64().unwrap() >= 40);
    assert!(v["rows"]["pytorch variants"].as_u64().unwrap() >= 40);

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-matrix");
    let r = Run::new().args(["matrix", "validate"]).arg_path(&dir).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("valid"));

    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "schema: gpudoctor.matrix/1\ndata_version: \"2026-01-01\"\ndriver_branches:\n  - { branch: 550, cuda: \"12.4\", source: \"https://x\" }\n  - { branch: 535, cuda: \"12.2\", source: \"https://x\" }\n",
    )
    .unwrap();
    let r = Run::new().args(["matrix", "validate"]).arg_path(&bad).run();
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!(
            "{}:5:5: branch 535 is not after 550",
            bad.display()
        )),
        "{}",
        r.stderr
    );

    let r = Run::new().args(["matrix", "path"]).run();
    assert!(r.stdout.starts_with("embedded"), "{}", r.stdout);
    let r = Run::new()
        .args(["matrix", "path", "--matrix"])
        .arg_path(&dir)
        .run();
    assert!(r.stdout.contains("compat-matrix"));
}

/// A one-shot HTTP server on 127.0.0.1 answering every request with `status` and `body`.
fn serve(status: &'static str, body: Vec<u8>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().take(3) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
        }
    });
    format!("http://{addr}/matrix.yaml")
}

fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn update(cache: &Path, args: &[&str]) -> common::Ran {
    Run::new()
        .env("GPUDOCTOR_CACHE_DIR", cache)
        .args(["matrix", "update"])
        .args(args)
        .run()
}

#[test]
fn update_installs_a_good_matrix_and_keeps_the_previous_one() {
    let cache = tempfile::tempdir().unwrap();
    let first = common::matrix_single_file("2026-12-01");
    let url = serve("200 OK", first.clone().into_bytes());
    let r = update(
        cache.path(),
        &["--from", &url, "--sha256", &sha256(first.as_bytes())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let installed = cache.path().join("matrix.yaml");
    assert_eq!(std::fs::read_to_string(&installed).unwrap(), first);
    // check now uses it.
    let r = Run::new()
        .env("GPUDOCTOR_CACHE_DIR", cache.path())
        .args(["matrix", "show", "--json"])
        .run();
    assert_eq!(r.json()["data_version"], "2026-12-01");

    let second = common::matrix_single_file("2027-01-15");
    let url = serve("200 OK", second.clone().into_bytes());
    let r = update(cache.path(), &["--from", &url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&installed).unwrap(), second);
    assert_eq!(
        std::fs::read_to_string(cache.path().join("matrix.yaml.prev")).unwrap(),
        first
    );
}

fn assert_untouched(cache: &Path, before: &str) {
    assert_eq!(
        std::fs::read_to_string(cache.join("matrix.yaml")).unwrap(),
        before
    );
    let names: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["matrix.yaml"],
        "no temporary or backup file left behind"
    );
}

#[test]
fn failed_updates_leave_the_previous_matrix_intact() {
    let cache = tempfile::tempdir().unwrap();
    let before = common::matrix_single_file("2026-12-01");
    std::fs::write(cache.path().join("matrix.yaml"), &before).unwrap();

    // A wrong sha256.
    let body = common::matrix_single_file("2027-02-02");
    let url = serve("200 OK", body.into_bytes());
    let r = update(cache.path(), &["--from", &url, "--sha256", &"0".repeat(64)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("sha256"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // Malformed YAML.
    let url = serve(
        "200 OK",
        b"schema: gpudoctor.matrix/1\ndata_version: [unclosed\n".to_vec(),
    );
    let r = update(cache.path(), &["--from", &url]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not valid"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // Valid YAML that breaks the matrix's meaning.
    let broken = common::matrix_single_file("2027-02-02").replace("branch: 535,", "branch: 999,");
    let url = serve("200 OK", broken.into_bytes());
    let r = update(cache.path(), &["--from", &url]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("branch"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // A file cut short: valid YAML, but no pytorch, tensorflow or jax rows. It used to be
    // installed, and check then silently lost those rules.
    let full = common::matrix_single_file("2027-02-02");
    let cut = &full[..full.find("\npytorch:").unwrap() + 1];
    let url = serve("200 OK", cut.as_bytes().to_vec());
    let r = update(cache.path(), &["--from", &url]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("no rows in pytorch") && r.stderr.contains("jax"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // An HTTP error.
    let url = serve("404 Not Found", b"nope".to_vec());
    let r = update(cache.path(), &["--from", &url]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("404"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // A server that is down.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = update(
        cache.path(),
        &["--from", &format!("http://127.0.0.1:{port}/m.yaml")],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("could not download"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);

    // Plain HTTP to anything but loopback is refused before any connection.
    let r = update(cache.path(), &["--from", "http://192.0.2.1/m.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("only https://"), "{}", r.stderr);
    assert_untouched(cache.path(), &before);
}

/// Issue 16: `matrix validate` on one file of compat-matrix/ gave 351 errors for pytorch.yaml,
/// all cascading from the CUDA versions and compute capabilities defined in the other files. A
/// single file is now checked against the built-in tables it does not hold.
#[test]
fn validate_one_file_of_the_directory_against_the_built_in_rest() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-matrix");
    for (name, _) in EMBEDDED {
        let f = dir.join(Path::new(name).file_name().unwrap());
        let r = Run::new().args(["matrix", "validate"]).arg_path(&f).run();
        assert_eq!(r.code, 0, "{}: {}", f.display(), r.stderr);
        assert!(r.stdout.contains(": valid (rows: "), "{}", r.stdout);
        assert!(
            r.stdout.contains("checked against the built-in"),
            "{}",
            r.stdout
        );
    }

    // A real mistake in a copy of pytorch.yaml: errors at its row, and only there.
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(dir.join("pytorch.yaml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let bad_line = lines
        .iter()
        .position(|l| l.contains("tag: cu126, cuda: \"12.6\""))
        .unwrap();
    let row_line = lines[..bad_line]
        .iter()
        .rposition(|l| l.trim_start().starts_with("- torch:"))
        .unwrap()
        + 1;
    let broken = text.replacen(
        "tag: cu126, cuda: \"12.6\"",
        "tag: cu126, cuda: \"12.66\"",
        1,
    );
    let f = d.path().join("pytorch.yaml");
    std::fs::write(&f, broken).unwrap();
    let r = Run::new().args(["matrix", "validate"]).arg_path(&f).run();
    assert_eq!(r.code, 2);
    let errs: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(errs.len(), 2, "{}", r.stderr);
    for e in &errs {
        assert!(
            e.starts_with(&format!("{}:{row_line}:", f.display())),
            "{e} (expected line {row_line})"
        );
    }
    assert!(
        r.stderr.contains("CUDA 12.66 is not in cuda_toolkits"),
        "{}",
        r.stderr
    );

    // A cuda.yaml without CUDA 12.6: the built-in rows that use it are named as built-in.
    let text = std::fs::read_to_string(dir.join("cuda.yaml")).unwrap();
    let cut: String = text
        .lines()
        .filter(|l| !l.contains("cuda: \"12.6\", release"))
        .map(|l| format!("{l}\n"))
        .collect();
    let f = d.path().join("cuda.yaml");
    std::fs::write(&f, cut).unwrap();
    let r = Run::new().args(["matrix", "validate"]).arg_path(&f).run();
    assert_eq!(r.code, 2);
    // Its own forward_compat row for 12.6 is its own error; the rest are the built-in rows'.
    let own = format!("{}:", f.display());
    assert!(
        r.stderr
            .lines()
            .all(|l| l.starts_with("built-in compat-matrix/") || l.starts_with(&own)),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().filter(|l| l.starts_with(&own)).count(), 1);
    assert!(
        r.stderr.contains("built-in compat-matrix/pytorch.yaml:") && r.stderr.contains("12.6"),
        "{}",
        r.stderr
    );

    // YAML that does not parse: its own line and column.
    let f = d.path().join("jax.yaml");
    std::fs::write(
        &f,
        "schema: gpudoctor.matrix/1\ndata_version: \"2026-11-21\"\njax:\n  - { from: \"0.4.14\", below: [\n",
    )
    .unwrap();
    let r = Run::new().args(["matrix", "validate"]).arg_path(&f).run();
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with(&format!("{}:", f.display())) && r.stderr.contains(":4:"),
        "{}",
        r.stderr
    );
}

/// `matrix show` prints what the matrix covers per framework, per CUDA version and per GPU
/// architecture, one of them with --by, and all of it as JSON.
#[test]
fn show_prints_coverage_tables_and_json() {
    let r = Run::new().args(["matrix", "show"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    for head in [
        "PyTorch:",
        "TensorFlow:",
        "JAX:",
        "Per CUDA version",
        "Per GPU architecture",
    ] {
        assert!(out.contains(head), "{head}:\n{out}");
    }
    // The RTX 5090's row: Blackwell 12.0, first CUDA 12.8 whose GA driver is 570.26.
    let rtx = out
        .lines()
        .find(|l| l.trim_start().starts_with("12.0 ") && l.contains("Blackwell"))
        .unwrap();
    assert!(rtx.contains("12.8 (570.26)"), "{rtx}");

    let r = Run::new().args(["matrix", "show", "--by", "arch"]).run();
    assert!(r.stdout.contains("Per GPU architecture") && !r.stdout.contains("PyTorch:"));

    let v = Run::new().args(["matrix", "show", "--json"]).run().json();
    let m = m();
    assert_eq!(
        v["frameworks"]["torch"].as_array().unwrap().len(),
        m.pytorch.len()
    );
    assert_eq!(
        v["frameworks"]["jax"].as_array().unwrap().len(),
        m.jax.len()
    );
    let cudas: Vec<&str> = v["cuda"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cuda"].as_str().unwrap())
        .collect();
    for t in &m.toolkits {
        assert!(cudas.contains(&t.cuda.as_str()), "{}", t.cuda);
    }
    let k80 = v["architectures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["cc"] == "3.7")
        .unwrap();
    assert_eq!(k80["last_driver_branch"], 470);
}

/// How a user gets a newer matrix (docs/decisions.md): each release ships the bundle that
/// scripts/matrix-bundle.sh makes, and `matrix update --from FILE --sha256 HEX` installs it;
/// `matrix.stale` says exactly that.
#[test]
fn the_release_bundle_installs_from_a_file_with_its_sha256() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let st = std::process::Command::new(root.join("scripts/matrix-bundle.sh"))
        .arg("--out")
        .arg(out.path())
        .arg("--gpudoctor")
        .arg(env!("CARGO_BIN_EXE_gpudoctor"))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let bundle = out.path().join("gpudoctor-matrix.yaml");
    let sums = std::fs::read_to_string(out.path().join("gpudoctor-matrix.yaml.sha256")).unwrap();
    let hex = sums.split_whitespace().next().unwrap().to_string();
    assert_eq!(hex, sha256(&std::fs::read(&bundle).unwrap()));
    assert!(
        sums.trim_end().ends_with("  gpudoctor-matrix.yaml"),
        "{sums}"
    );

    let cache = tempfile::tempdir().unwrap();
    // A wrong hash installs nothing.
    let path = bundle.to_str().unwrap();
    let r = update(cache.path(), &["--from", path, "--sha256", &"0".repeat(64)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("the file's sha256"), "{}", r.stderr);
    assert!(!cache.path().join("matrix.yaml").exists());
    let r = update(cache.path(), &["--from", path, "--sha256", &hex]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = Run::new()
        .env("GPUDOCTOR_CACHE_DIR", cache.path())
        .args(["matrix", "show", "--json"])
        .run()
        .json();
    let m = m();
    assert_eq!(v["data_version"], m.data_version.as_str());
    assert_eq!(
        v["rows"]["pytorch variants"],
        m.pytorch.iter().map(|r| r.variants.len()).sum::<usize>()
    );
    assert!(v["source"].as_str().unwrap().ends_with("matrix.yaml"));
    // A missing file is an error that changes nothing.
    let r = update(
        cache.path(),
        &["--from", "/nonexistent/gpudoctor-matrix.yaml"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);

    // The stale finding's fix names the release asset and this command.
    let v = Run::new()
        .args([
            "check",
            "--no-probe",
            "--format",
            "json",
            "--assume",
            "torch=2.99.0+cu126",
        ])
        .run()
        .json();
    let f = common::finding(&v, "matrix.stale");
    let cmds = f["fix"]["commands"].to_string();
    assert!(
        cmds.contains("matrix update --from gpudoctor-matrix.yaml --sha256"),
        "{cmds}"
    );
    assert!(f["fix"]["text"]
        .as_str()
        .unwrap()
        .contains("latest gpudoctor release"));
}
