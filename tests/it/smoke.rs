//! The smoke runner through the backend trait, with a backend that keeps memory on the host,
//! runs the two kernels as the PTX defines them, and fails, hangs, panics or corrupts data at
//! the step a test names. Every failure is asserted down to the finding's category and text.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpudoctor::gpu::sim::SimDevice;
use gpudoctor::gpu::smoke::{self, SmokeOptions};
use gpudoctor::gpu::{Arg, Backend, Buf, Device, DeviceInfo, GemmType};
use gpudoctor::matrix::Matrix;
use gpudoctor::report::{Category, Finding, Severity};
use gpudoctor::rules::{self, Context, RuleOptions, Selection};
use gpudoctor::snapshot::{Gpu, GpuCallError, PcieLink, Probed, SmokeRun, Snapshot, StepStatus};

/// What the fake does wrong, and where.
#[derive(Clone, Default)]
struct Faults {
    /// Fail this backend call ("cuInit", "open", "alloc", "upload", "download", "copy",
    /// "load_module", "launch:KERNEL", "sgemm") with this CUDA error code.
    fail: Option<(&'static str, i64, &'static str)>,
    /// Sleep this long in that call instead.
    hang: Option<(&'static str, Duration)>,
    /// Panic in that call.
    panic: Option<&'static str>,
    /// Flip one bit of what this call produces ("download", "launch:smoke_arith",
    /// "launch:copy_v4", "sgemm").
    corrupt: Option<&'static str>,
    /// Pinned copy rate to report, GB/s.
    pcie_gbps: f64,
    /// No cuBLAS.
    no_blas: bool,
    /// Devices, as PCI bus ids.
    devices: Vec<&'static str>,
    /// Pinned copies in flight now and the most ever at once, across devices; each copy
    /// takes 30 ms when set.
    copies: Option<Arc<(AtomicU32, AtomicU32)>>,
    /// This device's `open` fails with CUDA_ERROR_DEVICE_UNAVAILABLE (46): a GPU in
    /// EXCLUSIVE_PROCESS mode whose context another process holds (cuda.h, CUresult 46).
    exclusive_elsewhere: Option<u32>,
    /// A file that exists while a device of this backend is open (its primary context held):
    /// a helper process can see it.
    held: Option<std::path::PathBuf>,
    /// Devices opened, over the run.
    opened: Option<Arc<AtomicU32>>,
}

struct Fake(Faults);

fn error(call: &str, code: i64, name: &str) -> GpuCallError {
    GpuCallError {
        call: call.into(),
        code: Some(code),
        name: name.into(),
        message: format!("{name} (from the fake backend)"),
    }
}

impl Faults {
    fn at(&self, call: &str) -> Result<(), GpuCallError> {
        if let Some((c, d)) = self.hang {
            if c == call {
                std::thread::sleep(d);
            }
        }
        if self.panic == Some(call) {
            panic!("Missing symbol {call}");
        }
        match self.fail {
            Some((c, code, name)) if c == call => Err(error(call, code, name)),
            _ => Ok(()),
        }
    }
}

impl Fake {
    fn info(&self, ordinal: u32) -> DeviceInfo {
        DeviceInfo {
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            total_bytes: 80 << 30,
            multiprocessors: 132,
            pci_bus_id: self.0.devices.get(ordinal as usize).map(|s| s.to_string()),
            uuid: Some(format!("GPU-fake-{ordinal}")),
        }
    }
}

impl Backend for Fake {
    fn init(&self) -> Result<i32, GpuCallError> {
        self.0.at("cuInit")?;
        Ok(12080)
    }
    fn device_count(&self) -> Result<u32, GpuCallError> {
        Ok(self.0.devices.len() as u32)
    }
    fn describe(&self, ordinal: u32) -> Result<DeviceInfo, GpuCallError> {
        self.0.at("describe")?;
        Ok(self.info(ordinal))
    }
    fn open(&self, ordinal: u32) -> Result<Box<dyn Device>, GpuCallError> {
        self.0.at("open")?;
        if self.0.exclusive_elsewhere == Some(ordinal) {
            return Err(error(
                "cuDevicePrimaryCtxRetain",
                46,
                "CUDA_ERROR_DEVICE_UNAVAILABLE",
            ));
        }
        if let Some(n) = &self.0.opened {
            n.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(h) = &self.0.held {
            std::fs::write(h, b"held").unwrap();
        }
        Ok(Box::new(FakeDevice {
            f: self.0.clone(),
            info: self.info(ordinal),
            inner: SimDevice::new(ordinal, 80 << 30, Default::default()),
        }))
    }
    fn cublas(&self) -> Result<String, String> {
        if self.0.no_blas {
            Err("no libcublas".into())
        } else {
            Ok("libcublas".into())
        }
    }
}

/// A simulated GPU (memory and kernels on the CPU) with the test's faults in front of it.
struct FakeDevice {
    f: Faults,
    info: DeviceInfo,
    inner: SimDevice,
}

impl Drop for FakeDevice {
    fn drop(&mut self) {
        if let Some(h) = &self.f.held {
            let _ = std::fs::remove_file(h);
        }
    }
}

impl FakeDevice {
    /// Flips one bit of `data` when `call` is the one to corrupt.
    fn flip(&self, call: &str, data: &mut [u8]) {
        if self.f.corrupt == Some(call) && !data.is_empty() {
            let i = data.len() / 3;
            data[i] ^= 0x10;
        }
    }
    /// Corrupts a device buffer in place (after a kernel wrote it).
    fn corrupt(&mut self, call: &str, b: Buf, at: Option<usize>, mask: u8) {
        if self.f.corrupt != Some(call) {
            return;
        }
        let mut data = vec![0u8; b.bytes];
        self.inner.download(b, &mut data).unwrap();
        let i = at.unwrap_or(data.len() / 3);
        data[i] ^= mask;
        self.inner.upload(b, &data).unwrap();
    }
}

fn ptr(a: &Arg) -> Buf {
    match a {
        Arg::Ptr(b) => *b,
        _ => panic!("not a pointer"),
    }
}

impl Device for FakeDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn mem_info(&mut self) -> Result<(u64, u64), GpuCallError> {
        self.inner.mem_info()
    }
    fn alloc(&mut self, bytes: usize) -> Result<Buf, GpuCallError> {
        self.f.at("alloc")?;
        self.inner.alloc(bytes)
    }
    fn free(&mut self, buf: Buf) -> Result<(), GpuCallError> {
        self.inner.free(buf)
    }
    fn upload(&mut self, dst: Buf, src: &[u8]) -> Result<(), GpuCallError> {
        self.f.at("upload")?;
        self.inner.upload(dst, src)
    }
    fn download(&mut self, src: Buf, dst: &mut [u8]) -> Result<(), GpuCallError> {
        self.f.at("download")?;
        self.inner.download(src, dst)?;
        self.flip("download", dst);
        Ok(())
    }
    fn pinned_copy_rate(&mut self, b: Buf, to: bool, r: u32) -> Result<f64, GpuCallError> {
        self.f.at("copy")?;
        if let Some(c) = &self.f.copies {
            let now = c.0.fetch_add(1, Ordering::SeqCst) + 1;
            c.1.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            c.0.fetch_sub(1, Ordering::SeqCst);
        }
        // The simulated GPU overwrites `b` on a host-to-device copy, as a real one does.
        self.inner.pinned_copy_rate(b, to, r)?;
        Ok(self.f.pcie_gbps)
    }
    fn load_module(&mut self, ptx: &str) -> Result<(), GpuCallError> {
        self.f.at("load_module")?;
        assert!(ptx.contains(".entry smoke_arith") && ptx.contains(".entry copy_v4"));
        self.inner.load_module(ptx)
    }
    fn launch(&mut self, kernel: &str, g: u32, b: u32, args: &[Arg]) -> Result<f64, GpuCallError> {
        let call: &'static str = Box::leak(format!("launch:{kernel}").into_boxed_str());
        self.f.at(call)?;
        self.inner.launch(kernel, g, b, args)?;
        // The output: the float buffer of smoke_arith, the destination of copy_v4.
        let out = if kernel == "smoke_arith" {
            ptr(&args[1])
        } else {
            ptr(&args[0])
        };
        self.corrupt(call, out, None, 0x10);
        Ok(0.05)
    }
    fn gemm(
        &mut self,
        ty: GemmType,
        dims: (u32, u32, u32),
        a: Buf,
        b: Buf,
        c: Buf,
        r: u32,
    ) -> Result<f64, GpuCallError> {
        self.f.at("sgemm")?;
        self.inner.gemm(ty, dims, a, b, c, r)?;
        self.corrupt("sgemm", c, Some(4 * 1000 + 3), 0x40); // the sign/exponent of C[488,1]
        Ok(0.1)
    }
}

fn faults() -> Faults {
    Faults {
        pcie_gbps: 52.0,
        devices: vec!["00000000:1B:00.0"],
        ..Default::default()
    }
}

fn opts() -> SmokeOptions {
    SmokeOptions {
        // Generous: the host references run in a debug build beside other tests on 2 cores;
        // only the hang test is about the deadline, and it sets its own.
        deadline: gpudoctor::probe::deadline::Deadline::after(Duration::from_secs(600)),
        nvml_gpus: vec![
            (0, Some("00000000:1B:00.0".into())),
            (1, Some("00000000:2B:00.0".into())),
        ],
        selected: None,
        cudnn: None,
    }
}

fn run(f: Faults) -> Probed<SmokeRun> {
    smoke::run(Arc::new(Fake(f)), &opts())
}

/// A snapshot of one H100 on gen5 x16 with these smoke results, through every rule.
fn findings(smoke: Probed<SmokeRun>) -> Vec<Finding> {
    let mut snap = Snapshot::empty();
    snap.gpus = Probed::found(vec![Gpu {
        index: 0,
        name: Probed::found("NVIDIA H100 80GB HBM3".into()),
        pci_bus_id: Probed::found("00000000:1B:00.0".into()),
        pcie: Probed::found(PcieLink {
            gen: Some(1),
            width: Some(16),
            max_gen: Some(5),
            max_width: Some(16),
        }),
        ..Default::default()
    }]);
    snap.smoke = smoke;
    let m = Matrix::embedded().unwrap();
    let ctx = Context {
        snap: &snap,
        matrix: &m,
        opts: &RuleOptions::default(),
    };
    rules::evaluate(
        &ctx,
        &Selection {
            only: vec!["smoke".into()],
            skip: vec![],
        },
    )
}

fn statuses(r: &Probed<SmokeRun>) -> Vec<(String, StepStatus)> {
    r.get().unwrap().gpus[0]
        .steps
        .iter()
        .map(|s| (s.name.clone(), s.status))
        .collect()
}

#[test]
fn a_healthy_gpu_passes_every_step() {
    let r = run(faults());
    let run = r.get().unwrap();
    assert_eq!(run.driver_cuda_version, Some(12080));
    let g = &run.gpus[0];
    let names: Vec<&str> = g.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, smoke::STEPS);
    for s in &g.steps[..7] {
        assert_eq!(s.status, StepStatus::Passed, "{s:?}");
    }
    assert_eq!(g.steps[7].status, StepStatus::Skipped, "no cuDNN given");
    assert_eq!(g.index, Some(0), "matched to NVML by PCI bus id");
    assert_eq!((g.h2d_gbps, g.d2h_gbps), (Some(52.0), Some(52.0)));
    // 2 x 64 MiB in 0.05 ms.
    assert_eq!(g.d2d_gbps, Some(2684.35));
    assert!(g.steps[4]
        .detail
        .contains("1048576 integer and 1048576 floating-point results match"));
    assert!(findings(r).is_empty());
}

/// Each step failing in turn with the CUDA error the issue names: category and message.
#[test]
fn each_phase_fails_with_its_category() {
    let cases: [(&str, i64, &str, &str, Category); 8] = [
        (
            "open",
            802,
            "CUDA_ERROR_SYSTEM_NOT_READY",
            "context",
            Category::FabricManager,
        ),
        (
            "alloc",
            2,
            "CUDA_ERROR_OUT_OF_MEMORY",
            "memory",
            Category::GpuMemoryExhausted,
        ),
        (
            "download",
            214,
            "CUDA_ERROR_ECC_UNCORRECTABLE",
            "memory",
            Category::EccMemory,
        ),
        (
            "copy",
            999,
            "CUDA_ERROR_UNKNOWN",
            "pcie",
            Category::DriverFault,
        ),
        (
            "load_module",
            222,
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "module",
            Category::DriverTooOld,
        ),
        (
            "launch:smoke_arith",
            209,
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "kernel",
            Category::ArchUnsupported,
        ),
        (
            "launch:copy_v4",
            719,
            "CUDA_ERROR_LAUNCH_FAILED",
            "d2d",
            Category::SmokeFailure,
        ),
        (
            "sgemm",
            803,
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "sgemm",
            Category::DriverLibraryMismatch,
        ),
    ];
    for (call, code, name, step, category) in cases {
        let r = run(Faults {
            fail: Some((call, code, name)),
            ..faults()
        });
        let st = statuses(&r);
        let at = smoke::STEPS.iter().position(|s| *s == step).unwrap();
        assert_eq!(
            st[at],
            (step.to_string(), StepStatus::Failed),
            "{call}: {st:?}"
        );
        assert!(
            st[at + 1..].iter().all(|(_, s)| *s == StepStatus::Skipped),
            "{call}: {st:?}"
        );
        assert!(
            st[..at].iter().all(|(_, s)| *s == StepStatus::Passed),
            "{call}: {st:?}"
        );
        let f = findings(r);
        assert_eq!(f.len(), 1, "{call}: {f:#?}");
        assert_eq!(f[0].category, category, "{call}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].rule, "smoke.failed");
        // A device that cannot be opened was described first (issue 29 item 3): it is named
        // by its NVML index and model, like any other.
        let gpu = "GPU 0 (NVIDIA H100 80GB HBM3)";
        assert_eq!(
            f[0].title,
            format!("{gpu}: smoke test '{step}' failed: {name}")
        );
        assert!(
            f[0].detail.contains(&format!("({code})")),
            "{}",
            f[0].detail
        );
        assert!(!f[0].fix.commands.is_empty(), "{call}: a fix to paste");
    }
}

#[test]
fn wrong_results_are_caught_with_where_and_what() {
    let r = run(Faults {
        corrupt: Some("download"),
        ..faults()
    });
    let f = findings(r);
    assert_eq!(f[0].category, Category::SmokeFailure);
    assert!(
        f[0].title
            .ends_with("smoke test 'memory' gave a wrong result"),
        "{}",
        f[0].title
    );
    assert!(
        f[0].detail.contains("1 of 67108864 bytes differ"),
        "{}",
        f[0].detail
    );
    assert!(f[0].detail.contains("offset 0x1555555"), "{}", f[0].detail);

    let r = run(Faults {
        corrupt: Some("launch:smoke_arith"),
        ..faults()
    });
    let f = findings(r);
    assert!(
        f[0].title
            .ends_with("smoke test 'kernel' gave a wrong result"),
        "{}",
        f[0].title
    );
    // Byte 4/3 of the float buffer is in element 349525.
    assert!(
        f[0].detail
            .contains("1 of 1048576 elements are wrong; first: element 349525"),
        "{}",
        f[0].detail
    );

    let r = run(Faults {
        corrupt: Some("launch:copy_v4"),
        ..faults()
    });
    assert!(findings(r)[0]
        .title
        .ends_with("smoke test 'd2d' gave a wrong result"));

    let r = run(Faults {
        corrupt: Some("sgemm"),
        ..faults()
    });
    let f = findings(r);
    assert!(
        f[0].title
            .ends_with("smoke test 'sgemm' gave a wrong result"),
        "{}",
        f[0].title
    );
    assert!(
        f[0].detail
            .contains("1 of 262144 elements differ from the host reference; first C[488,1]"),
        "{}",
        f[0].detail
    );
}

#[test]
fn a_hung_gpu_is_reported_at_its_step_within_the_deadline() {
    let mut o = opts();
    o.deadline = gpudoctor::probe::deadline::Deadline::after(Duration::from_millis(1500));
    let f = Faults {
        hang: Some(("launch:smoke_arith", Duration::from_secs(30))),
        ..faults()
    };
    let t = Instant::now();
    let r = smoke::run(Arc::new(Fake(f)), &o);
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let st = statuses(&r);
    assert_eq!(
        st[4],
        ("kernel".to_string(), StepStatus::TimedOut),
        "{st:?}"
    );
    assert_eq!(st[5].1, StepStatus::Skipped);
    let f = findings(r);
    assert_eq!(f[0].category, Category::SmokeFailure);
    assert!(
        f[0].title.ends_with("smoke test 'kernel' hung"),
        "{}",
        f[0].title
    );
    assert!(f[0].detail.contains("may be hung"), "{}", f[0].detail);
}

#[test]
fn a_panicking_library_becomes_a_failure() {
    let r = run(Faults {
        panic: Some("load_module"),
        ..faults()
    });
    let st = statuses(&r);
    assert_eq!(st[3], ("module".to_string(), StepStatus::Failed), "{st:?}");
    let f = findings(r);
    assert!(
        f[0].detail.contains("Missing symbol load_module"),
        "{}",
        f[0].detail
    );
}

#[test]
fn init_failures() {
    // cuInit fails: no GPU step runs; the finding carries the driver's error.
    let r = run(Faults {
        fail: Some(("cuInit", 100, "CUDA_ERROR_NO_DEVICE")),
        ..faults()
    });
    let run_ = r.get().unwrap();
    assert!(run_.gpus.is_empty());
    let f = findings(r);
    assert_eq!(f.len(), 1);
    // One category per code (docs/decisions.md): 100 is configuration, 34 a library path.
    assert_eq!(f[0].category, Category::Configuration);
    assert_eq!(
        f[0].title,
        "The CUDA driver could not be initialised for the smoke tests (CUDA_ERROR_NO_DEVICE)"
    );
    let r = run(Faults {
        fail: Some(("cuInit", 34, "CUDA_ERROR_STUB_LIBRARY")),
        ..faults()
    });
    assert_eq!(findings(r)[0].category, Category::LibraryPathConflict);
}

#[test]
fn no_cublas_skips_the_gemm_with_why() {
    let r = run(Faults {
        no_blas: true,
        ..faults()
    });
    let g = &r.get().unwrap().gpus[0];
    assert_eq!(g.steps[6].status, StepStatus::Skipped);
    assert_eq!(g.steps[6].detail, "cuBLAS is not available");
    assert!(!r.get().unwrap().cublas.is_found());
    assert!(
        findings(r).is_empty(),
        "absence is information, not failure"
    );
}

#[test]
fn the_gpu_selection_and_nvml_indexes() {
    let f = Faults {
        devices: vec!["00000000:2B:00.0", "00000000:1B:00.0"],
        ..faults()
    };
    let mut o = opts();
    let r = smoke::run(Arc::new(Fake(f.clone())), &o);
    let idx: Vec<(u32, Option<u32>)> = r
        .get()
        .unwrap()
        .gpus
        .iter()
        .map(|g| (g.ordinal, g.index))
        .collect();
    assert_eq!(
        idx,
        [(0, Some(1)), (1, Some(0))],
        "CUDA order is not NVML order"
    );
    o.selected = Some(vec![0]);
    let r = smoke::run(Arc::new(Fake(f)), &o);
    let idx: Vec<(u32, Option<u32>)> = r
        .get()
        .unwrap()
        .gpus
        .iter()
        .map(|g| (g.ordinal, g.index))
        .collect();
    assert_eq!(idx, [(1, Some(0))]);
}

#[test]
fn slow_pcie_against_the_link() {
    // gen5 x16 carries 63.0 GB/s; half of it is the line.
    let f = findings(run(Faults {
        pcie_gbps: 31.4,
        ..faults()
    }));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, "smoke.pcie-bandwidth");
    assert_eq!(f[0].category, Category::PcieDegraded);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].title, "GPU 0 (NVIDIA H100 80GB HBM3): host-device copies at 31.4 GB/s on a gen5 x16 link (63.0 GB/s)");
    let f = findings(run(Faults {
        pcie_gbps: 31.6,
        ..faults()
    }));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn cudnn_in_the_helper_process_with_real_libraries() {
    // Real cuDNN 9.1 from PyPI: here, with no driver, cudnnCreate fails with cuDNN's own status
    // and text; the copy without libcudnn_graph aborts its process, which ends only the helper.
    let Some(venv) = common::test_venv() else {
        panic!("run scripts/test-setup.sh first");
    };
    let helper = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gpudoctor"));
    for (lib, want) in [
        (
            "cudnn9/lib/libcudnn.so.9",
            "cudnnCreate failed: CUDNN_STATUS_NOT_INITIALIZED (1001)",
        ),
        ("cudnn9-broken/lib/libcudnn.so.9", "signal 6"),
    ] {
        let mut o = opts();
        o.cudnn = Some((helper.clone(), venv.join(lib)));
        let r = smoke::run(Arc::new(Fake(faults())), &o);
        let s = &r.get().unwrap().gpus[0].steps[7];
        assert_eq!(s.status, StepStatus::Failed, "{s:?}");
        let e = s.error.as_ref().unwrap();
        eprintln!("{lib}: {e}");
        assert!(e.to_string().contains(want), "{lib}: {e}");
        let f = findings(r);
        assert_eq!(f[0].category, Category::CudnnMismatch);
        assert!(
            f[0].title.contains("smoke test 'cudnn' failed"),
            "{}",
            f[0].title
        );
    }
}

/// The synthetic two-H100 snapshot with smoke results from the fake backend: GPU 1's kernel
/// gives a wrong result.
fn snapshot_with_smoke() -> (tempfile::TempDir, std::path::PathBuf) {
    let f = Faults {
        devices: vec!["00000000:18:00.0", "00000000:2A:00.0"],
        corrupt: None,
        ..faults()
    };
    let mut o = opts();
    o.nvml_gpus = vec![
        (0, Some("00000000:18:00.0".into())),
        (1, Some("00000000:2A:00.0".into())),
    ];
    let mut r = smoke::run(Arc::new(Fake(f)), &o);
    // GPU 1's kernel step: a wrong result, as the runner records it.
    let g = &mut r.get_mut().unwrap().gpus[1];
    g.steps[4].status = StepStatus::Failed;
    g.steps[4].error = Some(GpuCallError {
        call: "smoke_arith results".into(),
        code: None,
        name: "WRONG_RESULT".into(),
        message: "3 of 1048576 elements are wrong; first: element 77".into(),
    });
    let mut s = common::snapshot_json("synthetic-2xh100.json");
    s["smoke"] = serde_json::to_value(&r).unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.json");
    std::fs::write(&p, s.to_string()).unwrap();
    (d, p)
}

#[test]
fn check_shows_smoke_results_of_a_snapshot() {
    let (_d, p) = snapshot_with_smoke();
    let r = common::Run::new()
        .args(["check", "--color", "never", "--only", "smoke", "--snapshot"])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("[✗] GPU smoke tests: 1 of 2 GPU(s) failed"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("• GPU 1 (NVIDIA H100 80GB HBM3): failed at 'kernel' in"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("✗ GPU 1 (NVIDIA H100 80GB HBM3): smoke test 'kernel' gave a wrong result"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("smoke_arith results: 3 of 1048576 elements are wrong; first: element 77"),
        "{}",
        r.stdout
    );
    let v = common::Run::new()
        .args(["check", "--json", "--only", "smoke", "--snapshot"])
        .arg_path(&p)
        .run()
        .json();
    let f = common::finding(&v, "smoke.failed");
    assert_eq!(
        (f["category"].as_str(), f["gpu"].as_u64()),
        (Some("smoke_failure"), Some(1))
    );
    // --gpu 0 leaves the healthy GPU only.
    let r = common::Run::new()
        .args([
            "check",
            "--color",
            "never",
            "--only",
            "smoke",
            "--gpu",
            "0",
            "--snapshot",
        ])
        .arg_path(&p)
        .run();
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("[✓] GPU smoke tests: 1 GPU(s) passed in"),
        "{}",
        r.stdout
    );
}

#[test]
fn without_a_driver_the_report_says_smoke_did_not_run() {
    if common::has_driver() {
        eprintln!("skipping: this machine has an NVIDIA driver");
        return;
    }
    let t = Instant::now();
    let r = common::Run::new().args(["check", "--color", "never"]).run();
    assert_eq!(r.code, 1);
    assert!(t.elapsed() < Duration::from_secs(5));
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("GPU smoke tests"))
        .unwrap_or_default();
    assert!(
        // Not run is not checked ([-], issue 17), not "could not tell".
        line.starts_with("[-] GPU smoke tests: not run: libcuda.so.1 could not be loaded"),
        "{}",
        r.stdout
    );
    let v = common::Run::new().args(["check", "--json"]).run().json();
    assert_eq!(v["snapshot"]["smoke"]["status"], "absent");
    assert_eq!(v["snapshot"]["smoke"]["code"], "no_driver");
    let r = common::Run::new()
        .args(["check", "--no-smoke", "--color", "never"])
        .run();
    assert!(!r.stdout.contains("GPU smoke tests"), "{}", r.stdout);
}

/// GPUs' pinned copies are timed one GPU at a time: three GPUs, and never two copying at once
/// (GPUs behind one PCIe switch measured together each see a share of it and look degraded).
#[test]
fn pcie_copies_are_measured_one_gpu_at_a_time() {
    let copies = Arc::new((AtomicU32::new(0), AtomicU32::new(0)));
    let r = run(Faults {
        devices: vec!["00000000:1B:00.0", "00000000:2B:00.0", "00000000:3B:00.0"],
        copies: Some(copies.clone()),
        ..faults()
    });
    let gpus = &r.get().unwrap().gpus;
    assert_eq!(gpus.len(), 3);
    for g in gpus {
        let pcie = g.steps.iter().find(|s| s.name == "pcie").unwrap();
        assert_eq!(pcie.status, StepStatus::Passed, "{pcie:?}");
        assert!(!pcie.detail.contains("another GPU"), "{pcie:?}");
    }
    assert_eq!(copies.1.load(Ordering::SeqCst), 1, "copies overlapped");
}

/// `--gpu 0` on a node whose other GPU another job holds in EXCLUSIVE_PROCESS mode (its
/// context refused with CUDA_ERROR_DEVICE_UNAVAILABLE): the unselected GPU is described, not
/// opened, so it is neither reported failed nor given a context. Every GPU used to be opened
/// (its primary context retained, about 0.5 GB) before the selection was applied.
#[test]
fn an_unselected_gpu_is_never_opened() {
    let opened = Arc::new(AtomicU32::new(0));
    let f = Faults {
        devices: vec!["00000000:1B:00.0", "00000000:2B:00.0"],
        exclusive_elsewhere: Some(1),
        opened: Some(opened.clone()),
        ..faults()
    };
    let mut o = opts();
    o.selected = Some(vec![0]);
    let r = smoke::run(Arc::new(Fake(f.clone())), &o);
    let run = r.get().unwrap();
    assert_eq!(run.gpus.len(), 1, "{run:#?}");
    assert_eq!(run.gpus[0].index, Some(0));
    assert!(run.gpus[0].failure().is_none(), "{run:#?}");
    assert_eq!(
        opened.load(Ordering::SeqCst),
        1,
        "only the selected GPU is opened"
    );
    // Selected, the held GPU is a failure of its context step, with its NVML index.
    o.selected = Some(vec![1]);
    let r = smoke::run(Arc::new(Fake(f)), &o);
    let g = &r.get().unwrap().gpus[0];
    assert_eq!(g.index, Some(1));
    let step = g.failure().unwrap();
    assert_eq!(step.name, "context");
    assert_eq!(step.error.as_ref().unwrap().code, Some(46));
}

/// A helper standing in for `gpudoctor __probe-lib cudnn-handle`: it answers like cuDNN on a
/// GPU in EXCLUSIVE_PROCESS mode, where cudnnCreate cannot get a context while `held` exists
/// (another process, gpudoctor, holds one), and sleeps `sleep` seconds first.
#[cfg(unix)]
fn cudnn_helper(dir: &std::path::Path, held: &std::path::Path, sleep: u32) -> std::path::PathBuf {
    let p = dir.join("helper.sh");
    common::write_script(
        &p,
        &format!(
            "#!/bin/sh\nsleep {sleep}\nif [ -e '{}' ]; then\n  echo '{{\"path\":null,\"value\":null,\"status\":1001,\"error\":\"CUDNN_STATUS_NOT_INITIALIZED\"}}'\nelse\n  echo '{{\"path\":null,\"value\":1,\"status\":null,\"error\":null}}'\nfi\n",
            held.display()
        ),
    );
    p
}

/// EXCLUSIVE_PROCESS compute mode: the cuDNN helper runs after this process has released the
/// GPU's primary context, so its cudnnCreate gets one. It used to run while the context was
/// held: a false `cudnn_mismatch` on every GPU in that mode.
#[cfg(unix)]
#[test]
fn the_cudnn_helper_runs_after_the_gpu_is_released() {
    let d = tempfile::tempdir().unwrap();
    let held = d.path().join("held");
    let helper = cudnn_helper(d.path(), &held, 0);
    let f = Faults {
        held: Some(held.clone()),
        ..faults()
    };
    let mut o = opts();
    o.cudnn = Some((helper, d.path().join("libcudnn.so.9")));
    let r = smoke::run(Arc::new(Fake(f)), &o);
    let g = &r.get().unwrap().gpus[0];
    let s = &g.steps[7];
    assert_eq!(s.name, "cudnn");
    assert_eq!(s.status, StepStatus::Passed, "{g:#?}");
    assert!(!held.exists());
    assert!(findings(r).is_empty());
}

/// The cuDNN helper gets the time left before the deadline, not the whole --timeout (capped
/// at 5 s): a helper that hangs is stopped, and the step recorded as hung, before the smoke
/// deadline. It used to run past the deadline, which then abandoned the GPU's thread.
#[cfg(unix)]
#[test]
fn the_cudnn_helper_gets_the_time_left() {
    let d = tempfile::tempdir().unwrap();
    let helper = cudnn_helper(d.path(), &d.path().join("never"), 30);
    let mut o = opts();
    // Room for the steps before it (without cuBLAS: no host SGEMM reference) on a busy CI
    // machine; the helper would sleep 30 s.
    o.deadline = gpudoctor::probe::deadline::Deadline::after(Duration::from_secs(5));
    o.cudnn = Some((helper, d.path().join("libcudnn.so.9")));
    let t = Instant::now();
    let f = Faults {
        no_blas: true,
        ..faults()
    };
    let r = smoke::run(Arc::new(Fake(f)), &o);
    let took = t.elapsed();
    assert!(took < Duration::from_millis(5500), "took {took:?}");
    let g = &r.get().unwrap().gpus[0];
    let s = &g.steps[7];
    assert_eq!(s.name, "cudnn");
    assert_eq!(s.status, StepStatus::TimedOut, "{g:#?}");
    let e = s.error.as_ref().unwrap();
    assert!(
        e.message.contains("left before the smoke tests' deadline"),
        "{e}"
    );
    // The helper took the time that was left, not the whole 5 s.
    assert!(s.millis < 5000, "{s:?}");
    assert!(
        g.steps[..7]
            .iter()
            .all(|s| s.status != StepStatus::TimedOut),
        "{g:#?}"
    );
    let f = findings(r);
    assert_eq!(
        f[0].category,
        Category::SmokeFailure,
        "a hang, not a cuDNN mismatch"
    );
    // The limit itself.
    let now = Instant::now();
    assert_eq!(
        smoke::cudnn_limit(now + Duration::from_secs(2), now),
        Some(Duration::from_millis(1750))
    );
    assert_eq!(
        smoke::cudnn_limit(now + Duration::from_millis(300), now),
        None
    );
    assert_eq!(smoke::cudnn_limit(now, now + Duration::from_secs(1)), None);
}
