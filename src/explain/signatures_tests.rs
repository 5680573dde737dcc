use serde_json::Value;

use crate::explain::{explain_text, Match};
use crate::matrix::Matrix;
use crate::vocab::Category;

/// knowledge/pytorch-oom.yaml: every wording of PyTorch's CUDA out-of-memory text, as its
/// source builds it, with the releases that print it (scripts/knowledge/torch_oom.py).
fn pytorch_oom() -> Value {
    serde_saphyr::from_str(include_str!("../../knowledge/pytorch-oom.yaml")).unwrap()
}

/// A byte count as PyTorch's format_size prints it, by the data's table.
fn format_size(table: &Value, bytes: u64) -> String {
    for u in table.as_array().unwrap() {
        if u["up_to"].as_u64().is_none_or(|up| bytes <= up) {
            let unit = u["unit"].as_str().unwrap();
            let div = u["divisor"].as_u64().unwrap();
            return match u["decimals"].as_u64().unwrap() {
                0 => format!("{} {unit}", bytes / div),
                d => format!("{:.*} {unit}", d as usize, bytes as f64 / div as f64),
            };
        }
    }
    panic!("format_size: no unit for {bytes}");
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// One instance of the values a text gives: a busy GPU shared with two other processes and
/// every optional part printed (`full`), or a bare one where the small figures print in bytes
/// and KiB. No two figures of one text print alike, so each must be read to be found.
fn value_of(name: &str, full: bool) -> u64 {
    if full {
        match name {
            "requested" => 20 * MIB,
            "total" => 25_436_356_608, // 23.69 GiB
            "free" => 4_257_218,       // 4.06 MiB
            "allocated" => 9_800 * MIB,
            "unallocated" | "cached" => 3 * GIB / 2,
            "reserved" => 11_336 * MIB,
            "allowed" => 13 * GIB,
            "private_pools" => 5 * GIB / 4,
            "this_process" => 11_468 * MIB,
            "limit" => 14 * GIB,
            _ => 0,
        }
    } else {
        match name {
            "requested" => 512,
            "total" => 16_934_109_184, // 15.77 GiB
            "free" => 0,
            "allocated" => 15_250 * MIB,
            "unallocated" | "cached" => 1_536, // 1.50 KiB
            "reserved" => 15_260 * MIB,
            "allowed" => 8 * GIB,
            "private_pools" => 300 * MIB,
            "this_process" => 15_600 * MIB,
            "limit" => 18_446_744_073_709_551_615, // no fraction set: SIZE_MAX
            _ => 0,
        }
    }
}

/// A text built from a wording's format, and the figures it gives (as printed) and the PIDs it
/// names.
struct Instance {
    text: String,
    figures: Vec<(String, String)>,
    pids: Vec<String>,
}

fn render(pieces: &Value, fs: &Value, full: bool, inst: &mut Instance, item: usize) {
    for p in pieces.as_array().unwrap() {
        if let Some(s) = p.as_str() {
            inst.text.push_str(s);
        } else if let Some(name) = p["size"].as_str() {
            // Per-process figures: each process its own.
            let bytes = match name {
                "used" => [25 * GIB / 4, 300 * MIB, 2 * GIB][item % 3],
                _ => value_of(name, full),
            };
            let s = format_size(fs, bytes);
            inst.text.push_str(&s);
            inst.figures.push((name.to_string(), s));
        } else if let Some(name) = p["int"].as_str() {
            if name == "pid" {
                let pid = ["4242", "777", "31337"][item % 3].to_string();
                inst.text.push_str(&pid);
                inst.pids.push(pid);
            } else {
                inst.text.push('0');
            }
        } else if p.get("text").is_some() {
            inst.text.push_str(p["value"].as_str().unwrap());
        } else if p.get("optional").is_some() {
            if full {
                render(&p["pieces"], fs, full, inst, item);
            }
        } else if p.get("repeat").is_some() {
            for i in 0..if full { 2 } else { 0 } {
                render(&p["pieces"], fs, full, inst, i);
            }
        } else {
            panic!("a piece of unknown kind: {p}");
        }
    }
}

fn minor(v: &str) -> (u64, u64) {
    let mut it = v.split('.').map(|x| x.parse::<u64>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// The class name Python prints before a wording's text in its first release.
fn class_for(data: &Value, first: &str) -> String {
    let v = minor(first);
    for c in data["exception_classes"].as_array().unwrap() {
        let from = minor(c["first"].as_str().unwrap());
        let to_ok = match (c["last"].as_str(), c["before"].as_str()) {
            (Some(last), _) => v <= minor(last),
            (None, Some(before)) => v < minor(before),
            (None, None) => true,
        };
        if v >= from && to_ok {
            return c["name"].as_str().unwrap().to_string();
        }
    }
    panic!("no exception class for {first}");
}

fn top(text: &str, m: &Matrix) -> Match {
    explain_text(text, m)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("nothing recognised in {text:?}"))
}

/// Every wording PyTorch has printed (knowledge/pytorch-oom.yaml, so a wording added there is
/// tested here): a realistic text built from its format is recognised as its signature, with
/// the category gpu_memory_exhausted, and the reading names every figure it gives in the unit it
/// was printed in ("20.00 MiB" never "0.02 GiB") and every other process it lists.
#[test]
fn every_pytorch_oom_wording_is_recognised_with_all_its_figures() {
    let m = Matrix::embedded().unwrap();
    let data = pytorch_oom();
    let fs = &data["format_size"];
    let wordings = data["wordings"].as_array().unwrap();
    assert!(wordings.len() >= 10, "{} wordings", wordings.len());
    let mut failures = Vec::new();
    for w in wordings {
        let id = w["id"].as_str().unwrap();
        let signature = w["signature"].as_str().unwrap();
        let first = w["first"].as_str().unwrap();
        for full in [true, false] {
            let mut inst = Instance {
                text: String::new(),
                figures: Vec::new(),
                pids: Vec::new(),
            };
            render(&w["format"], fs, full, &mut inst, 0);
            // As a traceback ends (the class Python prints for that release), and bare.
            let text = if full && w["raised_as"].as_str() == Some("OutOfMemoryError") {
                format!("{}: {}\n", class_for(&data, first), inst.text)
            } else {
                format!("{}\n", inst.text)
            };
            // Pasted from "Tried to allocate" on (the exception's first words cut or wrapped
            // away): the allocator's later pieces still say whose text it is, where the wording
            // goes on to the GPU's figures ("Tried to allocate more than 1EB memory." does not).
            if let Some(cut) = text
                .find("Tried to allocate")
                .map(|i| &text[i..])
                .filter(|c| c.contains("(GPU ") || c.contains(". GPU "))
            {
                let y = top(cut, &m);
                if y.code != serde_json::json!(signature) {
                    failures.push(format!("{id} cut: signature {} in {cut:?}", y.code));
                }
            }
            let x = top(&text, &m);
            let mut wrong = Vec::new();
            if x.code != serde_json::json!(signature) {
                wrong.push(format!("signature {} (want {signature})", x.code));
            }
            if x.category != Category::GpuMemoryExhausted {
                wrong.push(format!("category {:?}", x.category));
            }
            for (name, fig) in &inst.figures {
                if !x.meaning.contains(fig.as_str()) {
                    wrong.push(format!("{name} = {fig} not read"));
                }
            }
            for pid in &inst.pids {
                if !x.meaning.contains(&format!("PID {pid}")) {
                    wrong.push(format!("process {pid} not named"));
                }
            }
            if !wrong.is_empty() {
                failures.push(format!(
                    "{id} ({}): {}\n  text: {text:?}\n  meaning: {}",
                    if full { "full" } else { "bare" },
                    wrong.join("; "),
                    x.meaning
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The figures a reading quotes are the ones printed: format_size's units survive (checked on
/// the data's own table, which the test above builds its texts with).
#[test]
fn format_size_prints_as_pytorch_does() {
    let data = pytorch_oom();
    let fs = &data["format_size"];
    assert_eq!(format_size(fs, 0), "0 bytes");
    assert_eq!(format_size(fs, 512), "512 bytes");
    assert_eq!(format_size(fs, 1024), "1024 bytes");
    assert_eq!(format_size(fs, 1536), "1.50 KiB");
    assert_eq!(format_size(fs, 20 * MIB), "20.00 MiB");
    assert_eq!(format_size(fs, GIB), "1024.00 MiB");
    assert_eq!(format_size(fs, 3 * GIB / 2), "1.50 GiB");
}

/// A cap set with torch.cuda.set_per_process_memory_fraction is named as the cause when the
/// request would pass it.
#[test]
fn a_memory_fraction_cap_is_named() {
    let m = Matrix::embedded().unwrap();
    let x = top("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 9.50 GiB already allocated; 60.12 GiB free; 10.00 GiB allowed; 9.80 GiB reserved in total by PyTorch)\n", &m);
    assert!(
        x.likely_causes
            .iter()
            .any(|c| c.contains("capped PyTorch at 10.00 GiB")),
        "{:?}",
        x.likely_causes
    );
}

/// knowledge/pytorch-oom.yaml is what its generator makes of the pinned extract. On the Linux
/// host only, as the other generator checks: the Windows tests run under Wine, where the
/// generators' Python is not.
#[cfg(unix)]
#[test]
fn the_committed_pytorch_oom_data_is_the_generators_output() {
    crate::knowledge::assert_generator_check(
        "scripts/knowledge/torch_oom.py",
        &["build", "--check"],
    );
}

/// "XID" outside the NVIDIA driver's lines: a Realtek NIC names its chip's "XID 641" at boot
/// (r8169's probe line, as pasted in a public thread). A number NVIDIA's Xid catalog does not
/// have is no Xid there; in the driver's own "NVRM: Xid (PCI:...)" form an unknown number is
/// still an Xid (a newer driver's), and a catalogued number is read in any form.
#[test]
fn an_xid_outside_the_catalog_and_the_driver_s_lines_is_not_an_xid() {
    let m = Matrix::default();
    let nic =
        "[    0.942986] r8169 0000:03:00.0 eth0: RTL8125B, a8:a1:59:52:38:c5, XID 641, IRQ 129";
    assert!(
        explain_text(nic, &m).is_empty(),
        "{:?}",
        explain_text(nic, &m)
    );
    let new = top("NVRM: Xid (PCI:0000:01:00): 999, pid=1, something new", &m);
    assert_eq!(new.category, Category::HardwareFault);
    assert_eq!(new.code, serde_json::json!("xid"));
    let known = top("saw Xid 48 on the node", &m);
    assert_eq!(known.code, serde_json::json!(48));
    assert_eq!(known.category, Category::EccMemory);
}

/// PyTorch's capability-range warning is a fault when the GPU is outside the build's range in a
/// way its binaries cannot cover, and no fault for a newer minor of the newest major (a cubin for
/// X.y runs on X.z, z >= y) or a GPU inside the range.
#[test]
fn the_capability_range_warning_is_read_with_binary_compatibility() {
    let m = Matrix::default();
    let warn = |found: &str, lo: &str, hi: &str| {
        format!("Found GPU0 X which is of cuda capability {found}.\nMinimum and Maximum cuda capability supported by this version of PyTorch is\n({lo}) - ({hi})\n")
    };
    for (found, lo, hi, fault) in [
        ("12.1", "8.0", "12.0", false),
        ("8.9", "5.0", "8.6", false),
        ("8.6", "5.0", "9.0", false),
        ("3.7", "5.0", "9.0", true),
        ("10.0", "5.0", "9.0", true),
        ("12.0", "5.0", "9.0", true),
    ] {
        let v = explain_text(&warn(found, lo, hi), &m);
        let blamed = v.iter().any(|x| x.category == Category::ArchUnsupported);
        assert_eq!(blamed, fault, "{found} in ({lo}) - ({hi}): {v:#?}");
    }
}

/// A missing library is the one dlerror names before "cannot open shared object file", not the
/// library that needed it; a Jetson host library missing in a container is the container's lack
/// of the NVIDIA runtime.
#[test]
fn the_missing_library_is_the_one_dlerror_names() {
    let m = Matrix::default();
    let v = explain_text("Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: No such file or directory", &m);
    assert!(v.iter().any(|x| x.code == "libcublasLt.so.11"), "{v:#?}");
    assert!(
        !v.iter()
            .any(|x| x.code == "libonnxruntime_providers_cuda.so"),
        "{v:#?}"
    );
    let v = explain_text("Error importing detector runtime: libnvdla_compiler.so: cannot open shared object file: No such file or directory", &m);
    assert_eq!(
        v.first().map(|x| x.category),
        Some(Category::ContainerNoGpu),
        "{v:#?}"
    );
}

/// A library the loader did not find: a CUDA library whose name carries its major leads with the
/// version reading; cuDNN and unversioned names lead with the library path; the driver's own
/// libcuda.so.1 is the container's or the driver's, its unversioned link the library path's.
#[test]
fn a_missing_library_is_read_by_what_its_name_says() {
    let m = Matrix::default();
    let first = |t: &str| -> Vec<Category> {
        let mut out = Vec::new();
        for x in explain_text(t, &m) {
            if !out.contains(&x.category) {
                out.push(x.category);
            }
        }
        out.truncate(2);
        out
    };
    use Category::*;
    for (text, want) in [
        ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory", [CudaRuntimeMismatch, LibraryPathConflict]),
        ("Could not load dynamic library 'cublas64_12.dll'; dlerror: cublas64_12.dll not found", [CudaRuntimeMismatch, LibraryPathConflict]),
        ("OSError: libnvrtc.so: cannot open shared object file: No such file or directory", [LibraryPathConflict, CudaRuntimeMismatch]),
        ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory", [LibraryPathConflict, CudnnMismatch]),
        ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", [ContainerNoGpu, DriverMissing]),
        ("OSError: libcuda.so: cannot open shared object file: No such file or directory", [LibraryPathConflict, DriverMissing]),
    ] {
        assert_eq!(first(text), want, "{text}");
    }
    assert!(super::names_a_major("libcublas.so.12") && super::names_a_major("cudart64_110.dll"));
    assert!(!super::names_a_major("libnvrtc.so") && !super::names_a_major("caffe2_nvrtc.dll"));
}

/// DeepSpeed's launcher prints the worker's status with spaces around "=": -9 is SIGKILL, the
/// OOM killer's signal, read as exit 137 is.
#[test]
fn a_launcher_status_with_spaces_is_read() {
    let m = Matrix::default();
    let v = explain_text("[ERROR] [launch.py:341:sigkill_handler] ['python', 'train.py'] exits with return code = -9", &m);
    assert_eq!(
        v.first().map(|x| x.category),
        Some(Category::HostMemoryExhausted),
        "{v:#?}"
    );
}

/// glog's CHECK_EQ on a CUDA or library status, by number: read as that code's one home says.
#[test]
fn a_status_checked_by_number_is_that_code() {
    let r =
        |line: &str| super::checked_status(line).map(|m| (m.kind, m.code.to_string(), m.category));
    assert_eq!(
        r("Check failed: error == cudaSuccess (700 vs. 0)"),
        Some(("cuda_error", "700".to_string(), Category::ApplicationError))
    );
    let blas =
        r("Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs. 0) : Create cublas handle failed");
    assert_eq!(
        blas.as_ref().map(|b| (b.0, b.1.as_str())),
        Some(("library_status", "1"))
    );
    // Caffe's old numbering: its text decides (invalid device function is 98 today, 8 then).
    assert_eq!(
        r("Check failed: error == cudaSuccess (8 vs. 0)  invalid device function").map(|x| x.1),
        Some("98".to_string())
    );
    assert_eq!(r("Check failed: a == b (1 vs. 0)"), None);
    assert_eq!(r("Check failed: error == cudaSuccess (700 vs. 1)"), None);
}
