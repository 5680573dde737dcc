//! `gpudoctor explain` end to end: the JSON contract, --log from a file and from stdin, --rule,
//! --with-check joined with a recorded snapshot, no match, bad input; and fuzzing of the code
//! parser and the log scanner.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{snapshot_json, Run};
use std::io::Write;

#[test]
fn json_contract() {
    let r = Run::new().args(["explain", "--json", "0xC0000409"]).run();
    assert_eq!(r.code, 0);
    let v = r.json();
    assert_eq!(v["schema"], "gpudoctor.explain/1");
    assert_eq!(v["input"], "0xC0000409");
    let m = &v["matches"][0];
    let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "kind",
            "code",
            "name",
            "category",
            "meaning",
            "likely_causes",
            "fix",
            "confidence"
        ]
    );
    assert_eq!(m["kind"], "ntstatus");
    assert_eq!(m["category"], "windows_crash_code");
    assert_eq!(m["confidence"], "high");
}

#[test]
fn no_match_is_exit_0_with_a_sentence() {
    let r = Run::new()
        .args(["explain", "everything", "is", "fine"])
        .run();
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("No known code or message matched"),
        "{}",
        r.stdout
    );
    let r = Run::new()
        .args(["explain", "--json", "everything is fine"])
        .run();
    assert_eq!(r.json()["matches"], serde_json::json!([]));
    let r = Run::new().args(["explain"]).run();
    assert_eq!(r.code, 2);
}

fn training_log() -> String {
    let mut s = String::new();
    for i in 0..2000 {
        s.push_str(&format!("epoch 1 step {i} loss 0.4{i}\n"));
    }
    s.push_str("[ 9123.44] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.\n");
    s.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    s.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    s.push_str("Process finished with exit code 137\n");
    s
}

/// gpudoctor with `args`, its standard input and output piped.
fn spawn_piped(args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpudoctor"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// gpudoctor with `args`, `input` written whole on its standard input (small inputs: written
/// before the output is read).
fn piped(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = spawn_piped(args);
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn log_from_a_file_and_from_stdin() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("train.log");
    std::fs::write(&p, training_log()).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--log"])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["input"]["lines"], 2004);
    let ms = v["matches"].as_array().unwrap();
    let names: Vec<&str> = ms.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(
        names[0], "Xid 79 GPU_HAS_FALLEN_OFF_THE_BUS",
        "most severe first: {names:?}"
    );
    let ill = ms
        .iter()
        .find(|m| {
            m["name"]
                .as_str()
                .unwrap()
                .contains("illegal memory access")
        })
        .unwrap();
    assert_eq!(
        (ill["count"].as_u64(), ill["first_line"].as_u64()),
        (Some(2), Some(2002))
    );
    // Exit code 137: host memory (the OOM killer), not GPU memory.
    assert!(ms.iter().any(|m| m["category"] == "host_memory_exhausted"));
    // The same through standard input.
    let out = piped(&["explain", "--log", "-"], training_log().as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("4 known problem(s) in 2004 lines of -"),
        "{text}"
    );
    assert!(text.contains("2 time(s), first at line 2002"));
    let r = Run::new()
        .args(["explain", "--log", "/nonexistent/x.log"])
        .run();
    assert_eq!(r.code, 2);
}

/// `explain -` reads the paste from standard input, as `--log -` does: a dash alone is not a
/// message (it once came back as "No known code or message matched -").
#[test]
fn a_dash_alone_reads_standard_input() {
    let out = piped(
        &["explain", "--json", "-"],
        b"RuntimeError: CUDA out of memory. Tried to allocate 844.00 MiB (GPU 0; 14.76 GiB total capacity; 9.70 GiB already allocated; 498.75 MiB free; 10.15 GiB reserved in total by PyTorch)\n",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["matches"][0]["category"], "gpu_memory_exhausted", "{v:#}");
    assert!(
        v["input"].as_str().unwrap().contains("Tried to allocate"),
        "{v:#}"
    );
}

/// Standard input has no cap: 70 MiB of a PyTorch-shaped log streamed through a pipe (past the
/// 64 MiB that were once read), the error on its last line, is read whole and the error found,
/// with and without `--log -`.
#[test]
fn a_long_stdin_is_read_to_its_end() {
    for args in [
        &["explain", "--json"][..],
        &["explain", "--json", "--log", "-"][..],
    ] {
        let mut child = spawn_piped(args);
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let mut block = String::new();
            for i in 0..10_000 {
                block.push_str(&format!(
                    "step {i} loss=tensor(0.6931, device='cuda:0', grad_fn=<NllLossBackward0>) max memory allocated on cuda:0\n"
                ));
            }
            let (mut bytes, mut lines) = (0u64, 0u64);
            while bytes < 70 << 20 {
                stdin.write_all(block.as_bytes()).unwrap();
                bytes += block.len() as u64;
                lines += 10_000;
            }
            let err = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
            stdin.write_all(err.as_bytes()).unwrap();
            (bytes + err.len() as u64, lines + 1)
        });
        let (bytes, lines) = writer.join().unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["input"]["bytes"].as_u64(), Some(bytes), "{args:?}");
        assert_eq!(v["input"]["lines"].as_u64(), Some(lines), "{args:?}");
        let ms = v["matches"].as_array().unwrap();
        let ill = ms
            .iter()
            .find(|m| {
                m["name"]
                    .as_str()
                    .unwrap()
                    .contains("illegal memory access")
            })
            .unwrap_or_else(|| panic!("{args:?}: {v}"));
        assert_eq!(ill["first_line"].as_u64(), Some(lines));
        // Nothing in the ordinary lines (they say cuda:0 and memory allocated on every line).
        assert!(
            ms.iter().all(|m| m["first_line"].as_u64() == Some(lines)),
            "{args:?}: {v}"
        );
    }
}

#[test]
fn rule_documentation() {
    let r = Run::new()
        .args(["explain", "--rule", "compat.driver-too-old"])
        .run();
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .starts_with("compat.driver-too-old (driver_too_old)"));
    assert!(
        r.stdout.contains("What it does:")
            && r.stdout.contains("Why:")
            && r.stdout.contains("Fix:")
    );
    let v = Run::new()
        .args(["explain", "--json", "--rule", "health.memory"])
        .run()
        .json();
    assert_eq!(v["matches"][0]["kind"], "rule");
    assert_eq!(
        Run::new().args(["explain", "--rule", "no.such"]).run().code,
        2
    );
}

#[test]
fn with_check_joins_the_explanation_with_the_machine() {
    // A driver-too-old message on a machine whose snapshot has R470 and torch cu121.
    let mut s = snapshot_json("synthetic-2xh100.json");
    for p in [
        "/driver/kernel_module/value/version",
        "/driver/sys_module_version/value",
        "/driver/nvml/value/driver_version",
        "/driver/libcuda/value/file_version",
    ] {
        *s.pointer_mut(p).unwrap() = serde_json::json!("470.82.01");
    }
    *s.pointer_mut("/driver/nvml/value/cuda_driver_version")
        .unwrap() = serde_json::json!(11040);
    *s.pointer_mut("/driver/libcuda/value/cuda_driver_version")
        .unwrap() = serde_json::json!(11040);
    *s.pointer_mut("/python/value/0/torch").unwrap() =
        serde_json::json!({"version": "2.1.0+cu121", "cuda": "12.1"});
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.json");
    std::fs::write(&p, s.to_string()).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--with-check", "--snapshot"])
        .arg_path(&p)
        .args(["RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."])
        .run();
    let v = r.json();
    let machine = v["matches"][0]["machine"].as_array().unwrap();
    let joined: Vec<&str> = machine.iter().map(|x| x.as_str().unwrap()).collect();
    assert!(
        joined.iter().any(|l| l.contains("torch 2.1.0+cu121")
            && l.contains("470.82.01")
            && l.contains("525.60.13")),
        "{joined:#?}"
    );
}

mod fuzz {
    use gpudoctor::explain::{codes, explain_text, logscan};
    use gpudoctor::matrix::Matrix;
    use proptest::prelude::*;

    proptest! {
        // 5,000 cases each: arbitrary text, numbers in every form, and logs with random bytes.
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn the_code_parser_never_panics(s in "\\PC{0,40}", n in any::<i64>()) {
            let m = Matrix::default();
            let _ = codes::parse(&s, &m);
            let _ = codes::parse(&n.to_string(), &m);
            let _ = codes::parse(&format!("0x{:X}", n), &m);
            let _ = codes::readings(n);
        }

        #[test]
        fn explain_never_panics_on_text(s in "\\PC{0,300}") {
            let m = Matrix::default();
            let _ = explain_text(&s, &m);
            let _ = explain_text(&format!("CUDA out of memory. Tried to allocate {s}"), &m);
            let _ = explain_text(&format!("Loaded runtime CuDNN library: {s} but source was compiled with: {s}"), &m);
        }

        #[test]
        fn the_log_scanner_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
            let m = Matrix::default();
            let mut log = bytes.clone();
            log.extend_from_slice(b"\nNVRM: Xid (PCI:");
            log.extend_from_slice(&bytes);
            let r = logscan::scan(&log[..], &m).unwrap();
            prop_assert!(r.lines as usize <= log.len() + 1);
        }
    }
}

/// Issue 30: 50 MB of random bytes came back as "Xid error". Random bytes (with the words of a
/// real Xid line among them, as random data holds now and then) are not text: no finding, a
/// sentence that says so, exit 0 as for any input that matches nothing (design.md).
#[test]
fn random_bytes_are_not_text() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("random.bin");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut bytes = Vec::with_capacity(4 << 20);
    while bytes.len() < 4 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.extend_from_slice(&x.to_le_bytes());
        if bytes.len() % (256 << 10) < 8 {
            bytes
                .extend_from_slice(b" NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus ");
        }
    }
    std::fs::write(&p, &bytes).unwrap();
    let r = Run::new()
        .args(["explain", "--json", "--log"])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(v["not_text"], true, "{v}");
    let r = Run::new().args(["explain", "--log"]).arg_path(&p).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("is not text"), "{}", r.stdout);
    // The same bytes pasted on standard input.
    let mut child = Run::new()
        .args(["explain", "--json"])
        .into_command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let head = bytes[..1 << 20].to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&head));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(v["not_text"], true);
}
