//! Unit tests of `knowledge::codes`: the mined data loads, every code has a category, `check`
//! and `explain` agree on it, no second table of numbers is left in the Rust, and the committed
//! data is what the generator makes of the pinned headers.
use super::*;
use crate::explain::codes as ex;
use crate::gpu::category_of;
use crate::matrix::Matrix;
use crate::rules::nvml_failed;
use crate::snapshot::GpuCallError;

#[test]
fn every_emitter_file_loads_with_codes_that_each_have_a_category() {
    // The YAML (the home of the facts) and the JSON embedded from it.
    let yaml = |name: &str| {
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
            .unwrap()
    };
    for (name, json) in FILES {
        let e = parse(name, &yaml(name)).unwrap_or_else(|err| panic!("{err}"));
        assert!(from_json(name, json).is_ok(), "{name}");
        assert!(!e.entries.is_empty(), "{name}");
        assert!(!e.sources.is_empty(), "{name}");
        for c in &e.entries {
            assert!(
                c.mapped == "explicit" || c.mapped == "default",
                "{name}: {} is mapped {:?}",
                c.name,
                c.mapped
            );
            assert!(!c.source.is_empty(), "{name}: {}", c.name);
        }
    }
    assert_eq!(all().len(), FILES.len());
    // A code with no category does not load: the mapping must name one for every code.
    let (name, json) = FILES[0];
    let broken = yaml(name).replacen("  category: ", "  categoryy: ", 1);
    assert!(parse(name, &broken).is_err());
    let broken = json.replacen("\"category\":", "\"categoryy\":", 1);
    assert_ne!(broken, json);
    assert!(from_json(name, &broken).is_err());
}

#[test]
fn codes_hold_the_headers_numbers_and_version_ranges() {
    // cuDNN 8 and 9 number the same status apart (cudnn_ops_infer.h, cudnn_graph.h).
    let (e, c) = by_name("CUDNN_STATUS_NOT_INITIALIZED").unwrap();
    assert_eq!(e.id, "cudnn");
    let nums: Vec<(i64, &str)> = c
        .values
        .iter()
        .map(|v| (v.num, v.versions[0].as_str()))
        .collect();
    assert_eq!(nums, vec![(1, "8"), (1001, "9")]);
    // CUDA_ERROR_CONTAINED is new in CUDA 12; 35 is the runtime's alone.
    let (_, c) = by_name("CUDA_ERROR_CONTAINED").unwrap();
    assert_eq!((c.num(), c.version_range().as_str()), (Some(226), "12-13"));
    assert!(cuda(35).0.is_some() && cuda(35).1.is_none());
    assert_eq!(by_num("nccl", 1).unwrap().name, "ncclUnhandledCudaError");
    assert_eq!(
        by_num("cublas", 13).unwrap().name,
        "CUBLAS_STATUS_EXECUTION_FAILED"
    );
    assert_eq!(nvml(16).unwrap().name, "NVML_ERROR_RESET_REQUIRED");
    assert!(c.source.contains("cuda.h:"), "{}", c.source);
}

/// The decisions of docs/decisions.md "One category per code".
#[test]
fn the_decided_categories_of_100_34_and_reset_required() {
    assert_eq!(cuda_category(100), Some(Category::Configuration));
    assert_eq!(cuda_category(34), Some(Category::LibraryPathConflict));
    assert_eq!(
        nvml_named("NVML_ERROR_RESET_REQUIRED").map(|c| c.category),
        Some(Category::DriverFault)
    );
}

fn explain_category(name: &str) -> Category {
    let v = ex::parse(name, &Matrix::default()).unwrap_or_default();
    assert!(!v.is_empty(), "explain does not know {name}");
    v[0].category
}

/// For every mined code, `check`'s path (gpu::category_of for CUDA, cuDNN and cuBLAS calls,
/// nvml.failed for NVML) and `explain`'s answer give the same category.
#[test]
fn check_and_explain_give_every_code_the_same_category() {
    let mut compared = 0;
    for e in all() {
        for c in &e.entries {
            let explained = explain_category(&c.name);
            let checked = match e.family.as_str() {
                "cuda" => Some(category_of(&GpuCallError {
                    call: "cuCtxCreate".into(),
                    code: c.num(),
                    name: c.name.clone(),
                    message: String::new(),
                })),
                "cudnn" => Some(category_of(&GpuCallError {
                    call: "cudnnCreate".into(),
                    code: c.num(),
                    name: c.name.clone(),
                    message: String::new(),
                })),
                "cublas" => Some(category_of(&GpuCallError {
                    call: "cublasGemmEx".into(),
                    code: c.num(),
                    name: String::new(),
                    message: String::new(),
                })),
                "nvml" => {
                    let probe = c
                        .name
                        .trim_start_matches("NVML_ERROR_")
                        .to_ascii_lowercase();
                    let probe = if probe == "gpu_is_lost" {
                        "gpu_lost".to_string()
                    } else {
                        probe
                    };
                    Some(nvml_failed::category_for(&probe))
                }
                _ => None,
            };
            assert_eq!(explained, c.category, "{}: explain", c.name);
            if let Some(checked) = checked {
                assert_eq!(checked, explained, "{}: check vs explain", c.name);
                compared += 1;
            }
        }
    }
    assert!(compared > 250, "{compared}");
    // The probe's own codes.
    assert_eq!(
        nvml_failed::category_for("gpu_lost"),
        Category::HardwareFault
    );
    assert_eq!(
        nvml_failed::category_for("no_permission"),
        Category::Configuration
    );
    assert_eq!(
        nvml_failed::category_for("nvml_error"),
        emitter("nvml").unwrap().default_category
    );
}

/// A code's printed message (cudaGetErrorString's, ncclGetErrorString's... text) pasted alone is
/// answered first with the code's own category: no catalog signature or enricher keeps a second,
/// different category for the same message (the PTX-toolchain signature said
/// cuda_runtime_mismatch where cudaErrorUnsupportedPtxVersion's documentation says the driver is
/// too old; NCCL's enricher demoted ncclUnhandledCudaError's category on its own).
#[test]
fn a_codes_own_message_is_answered_with_the_codes_category() {
    let m = Matrix::default();
    let mut compared = 0;
    let mut wrong = Vec::new();
    for e in all() {
        for c in &e.entries {
            // Texts of a word or two ("invalid argument", "out of memory") are shared by many
            // codes and emitters: only a message of three words or more names one code.
            if c.text.split_whitespace().count() < 3 {
                continue;
            }
            let v = crate::explain::explain_text(&c.text, &m);
            compared += 1;
            match v.first() {
                Some(x) if x.category == c.category => {}
                Some(x) => wrong.push(format!(
                    "{} {:?}: {:?} ({}) first",
                    c.name, c.category, x.category, x.code
                )),
                None => {}
            }
        }
    }
    assert!(compared > 30, "{compared}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn explain_names_the_library_and_a_fix_for_library_statuses() {
    let m = |s: &str| {
        ex::parse(s, &Matrix::default())
            .unwrap_or_default()
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("{s}"))
    };
    let c = m("CUDNN_STATUS_NOT_INITIALIZED");
    assert_eq!(c.kind, "library_status");
    assert!(c.name.contains("cuDNN"), "{}", c.name);
    assert!(c.meaning.contains("1001"), "{}", c.meaning);
    assert!(!c.fix.text.is_empty());
    let b = m("cublas_status_execution_failed");
    assert!(b.name.contains("cuBLAS") && !b.fix.text.is_empty());
    let n = m("ncclUnhandledCudaError");
    assert!(n.name.contains("NCCL") && n.fix.text.contains("NCCL_DEBUG"));
    // "A call to a CUDA function failed" names no call and no cause: not the driver by itself.
    assert_eq!(n.category, Category::ApplicationError);
    // By number after the library's name; a bare 13 is not read as a library status.
    let b13 = m("cublas 13");
    assert_eq!(b13.code, serde_json::json!(13));
    assert_eq!(b13.name, "CUBLAS_STATUS_EXECUTION_FAILED (cuBLAS)");
    // cuDNN 8's number for the status cuDNN 9 numbers 1001.
    let d1 = m("cudnn 1");
    assert_eq!(d1.code, serde_json::json!(1));
    assert_eq!(d1.name, "CUDNN_STATUS_NOT_INITIALIZED (cuDNN)");
    assert_eq!(
        m("CUDNN_STATUS_NOT_INITIALIZED").code,
        serde_json::json!(1001)
    );
    assert!(ex::parse("13", &Matrix::default())
        .unwrap_or_default()
        .iter()
        .all(|m| m.kind != "library_status"));
    let t = m("cudaErrorLaunchTimeout");
    let d = m("CUDA_ERROR_LAUNCH_TIMEOUT");
    assert_eq!(
        (t.code.clone(), t.category),
        (serde_json::json!(702), Category::Configuration)
    );
    assert_eq!(t.name, d.name);
    assert!(t.meaning.contains("runtime and driver"), "{}", t.meaning);
    // A code without hand-written facts still gets the header's words and a fix.
    let x = m("cudaErrorInvalidPitchValue");
    assert!(x.meaning.contains("pitch"), "{}", x.meaning);
    assert!(!x.fix.text.is_empty());
}

/// No second table of CUDA/NVML/library codes in the Rust: a `match` arm from a number to a
/// category or a code name, or several arms keyed by code names, is such a table.
#[test]
fn no_rust_table_of_codes_remains() {
    let names = regex::Regex::new(
        r#""(CUDA_ERROR_[A-Z_]+|cudaError[A-Za-z]+|NVML_ERROR_[A-Z_]+|CU[A-Z]+_STATUS_[A-Z_]+|nccl[A-Z][A-Za-z]+Error)""#,
    )
    .unwrap();
    let arm = regex::Regex::new(
        r#"^\s*(Some\()?\d+\)?\s*=>\s*(Category::|"(CUDA_ERROR|cudaError|NVML_ERROR|CU[A-Z]+_STATUS|nccl))"#,
    )
    .unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for ent in std::fs::read_dir(&d).unwrap() {
            let p = ent.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // A match over code names, each arm a name: a table keyed by name.
            let named_arms = text
                .lines()
                .filter(|l| l.contains("=>") && names.is_match(l.split("=>").next().unwrap_or("")))
                .count();
            if named_arms >= 3 {
                bad.push(format!(
                    "{}: {named_arms} arms keyed by a code name",
                    p.display()
                ));
            }
            for l in text.lines() {
                if arm.is_match(l) {
                    bad.push(format!("{}: {l}", p.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "tables of codes in the Rust: {bad:#?}");
    // The check itself catches the shape the old tables had.
    assert!(arm.is_match("        Some(222) => Category::DriverTooOld,"));
    assert!(arm.is_match("        1 => \"CUBLAS_STATUS_NOT_INITIALIZED\","));
}

/// The committed knowledge/*.yaml is what scripts/knowledge/codes.py makes of the pinned
/// headers (scripts/test-setup.sh fetches them): a hand edit, a changed mapping not regenerated,
/// or a generator change not run fails here with the diff.
/// On the Linux host only: the Windows build embeds the same files, and its tests run under Wine,
/// where the generators' Python is not.
#[cfg(unix)]
#[test]
fn the_committed_codes_are_the_generators_output() {
    // The codes, then the coverage table that counts them.
    for script in [
        "scripts/knowledge/codes.py",
        "scripts/knowledge/coverage.py",
    ] {
        crate::knowledge::assert_generator_check(script, &["--check"]);
    }
}
