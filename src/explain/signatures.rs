//! Known message signatures (../shared/reference/faults.md §7 and more), each with a literal
//! needle for the log scanner's prefilter, an optional regex, and a builder that turns the
//! numbers in the message into facts: "found version 11040" → a driver for CUDA 11.4;
//! "sm_120" → Blackwell, which needs a cu128 build; a PyTorch out-of-memory message → whose
//! memory it really is.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::{Captures, Regex};
use serde_json::json;

use super::codes;
use super::Match;
use crate::compat::{best_torch, DriverFacts};
use crate::faults::logparse::{LogEvent, LogParser};
use crate::matrix::{coverage, split_cc, Coverage, Matrix, Os};
use crate::report::{Category, Severity};
use crate::version::{decode_cudnn, CudaVersion};

type Build = fn(&str, Option<&Captures>, &Matrix) -> Option<Match>;

pub struct Signature {
    pub id: &'static str,
    /// A literal every matching line contains (case-sensitive).
    pub needle: &'static str,
    pattern: Option<&'static str>,
    build: Build,
}

fn regexes() -> &'static Vec<Option<Regex>> {
    static R: OnceLock<Vec<Option<Regex>>> = OnceLock::new();
    R.get_or_init(|| {
        SIGNATURES
            .iter()
            .map(|s| s.pattern.and_then(|p| Regex::new(p).ok()))
            .collect()
    })
}

/// Every signature's needle, in order (the log scanner builds its automaton from these).
pub fn needles() -> Vec<&'static str> {
    SIGNATURES.iter().map(|s| s.needle).collect()
}

/// Matches of the signatures whose needles are in `ids` (or all), for one line.
pub fn match_signatures(
    line: &str,
    ids: Option<&[usize]>,
    m: &Matrix,
    parser: &mut LogParser,
) -> Vec<Match> {
    let mut out = Vec::new();
    let res = regexes();
    let all: Vec<usize> = (0..SIGNATURES.len()).collect();
    let ids = ids.unwrap_or(&all);
    for &i in ids {
        let Some(sig) = SIGNATURES.get(i) else {
            continue;
        };
        if !line.contains(sig.needle) {
            continue;
        }
        if sig.id == "kernel-log" {
            if let Some(ev) = parser.feed(line) {
                out.extend(kernel_event(&ev));
            }
            continue;
        }
        let caps = match res.get(i).and_then(|r| r.as_ref()) {
            Some(re) => match re.captures(line) {
                Some(c) => Some(c),
                None => continue,
            },
            None => None,
        };
        if let Some(mut x) = (sig.build)(line, caps.as_ref(), m) {
            x.text = Some(crate::sanitize::clean_line(line.trim(), 300));
            if !out.iter().any(|o: &Match| o.key == x.key) {
                out.push(x);
            }
        }
    }
    out
}

/// All matches for one line.
pub fn match_line(line: &str, m: &Matrix, parser: &mut LogParser) -> Vec<Match> {
    match_signatures(line, None, m, parser)
}

fn cap<'a>(c: Option<&'a Captures>, i: usize) -> Option<&'a str> {
    c?.get(i).map(|x| x.as_str())
}

/// "2.26 GiB", "496.00 MiB", "0 bytes" → bytes.
fn size(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let n: f64 = it.next()?.parse().ok()?;
    let mult = match it.next()? {
        "B" | "bytes" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        _ => return None,
    };
    Some(n * mult)
}

fn gib(b: f64) -> String {
    format!("{:.2} GiB", b / (1u64 << 30) as f64)
}

/// A compiled regex for a pattern built at run time, compiled once per process: a log with
/// thousands of matching lines must not compile the same pattern thousands of times.
fn cached_regex(pat: &str) -> Option<Regex> {
    static CACHE: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().ok()?;
    if let Some(re) = cache.get(pat) {
        return Some(re.clone());
    }
    let re = Regex::new(pat).ok()?;
    cache.insert(pat.to_string(), re.clone());
    Some(re)
}

const SIZE: &str = r"([\d.]+ (?:bytes|B|KiB|MiB|GiB|TiB))";

fn torch_oom(line: &str, _c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    let grab = |pat: &str| -> Option<f64> {
        let re = cached_regex(pat)?;
        size(re.captures(line)?.get(1)?.as_str())
    };
    let want = grab(&format!(r"Tried to allocate {SIZE}"))?;
    // PyTorch 2.1-2.3 print "total capacty" (sic).
    let total = grab(&format!(r"total capaci?ty of {SIZE}"))
        .or_else(|| grab(&format!(r"{SIZE} total capacity")));
    let free =
        grab(&format!(r"of which {SIZE} is free")).or_else(|| grab(&format!(r"{SIZE} free")));
    let this_proc = grab(&format!(r"this process has {SIZE} memory in use"));
    let other_proc = grab(&format!(r"Process \d+ has {SIZE} memory in use"));
    let by_torch = grab(&format!(r"{SIZE} is allocated by PyTorch"))
        .or_else(|| grab(&format!(r"{SIZE} already allocated")));
    let reserved_unalloc = grab(&format!(r"{SIZE} is reserved by PyTorch but unallocated"));
    let reserved_total = grab(&format!(r"{SIZE} reserved in total by PyTorch"));
    let mut facts: Vec<String> = Vec::new();
    let mut causes: Vec<String> = Vec::new();
    let (mut fix, mut cmds) = ("Make the job smaller: lower the batch size, use mixed precision (bf16/fp16), gradient checkpointing, or a smaller model.".to_string(), Vec::<String>::new());
    facts.push(format!("it asked for {}", gib(want)));
    if let Some(t) = total {
        facts.push(format!("on a GPU of {}", gib(t)));
    }
    if let Some(f) = free {
        facts.push(format!("with {} free", gib(f)));
    }
    let own = by_torch.unwrap_or(0.0) + reserved_unalloc.unwrap_or(0.0);
    if let Some(t) = total.filter(|t| want > *t) {
        causes.push(format!("The single allocation ({}) is larger than the whole GPU ({}): an input, batch or tensor is far too large (often a wrong shape or resolution).", gib(want), gib(t)));
    } else if let Some(p) = this_proc.filter(|p| total.is_some_and(|t| *p >= 0.6 * t)) {
        causes.push(format!("This process itself holds {} (PyTorch allocated {}): the job does not fit, no other process is to blame.", gib(p), gib(by_torch.unwrap_or(0.0))));
    } else if let Some(p) = other_proc {
        if by_torch.is_some_and(|a| a >= 0.8 * p) {
            causes.push(format!("The process named holds {} and PyTorch allocated {} of it: it is this training process itself, not another one.", gib(p), gib(by_torch.unwrap_or(0.0))));
        } else {
            causes.push(format!("Another process holds {}: stop it or wait for it (gpudoctor check names the processes on each GPU).", gib(p)));
            fix = "Free the GPU: find and stop the other process, or run on a free GPU.".into();
            cmds.push(
                "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv".into(),
            );
        }
    } else if let (Some(t), Some(r), Some(f)) = (total, reserved_total, free) {
        let others = t - r - f;
        if others > 0.25 * t {
            causes.push(format!("About {} is used outside this process's PyTorch allocator (other processes, or CUDA context and libraries): check nvidia-smi.", gib(others)));
            cmds.push(
                "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv".into(),
            );
        } else if by_torch.is_some_and(|a| a >= 0.6 * t) {
            causes.push(format!(
                "This process's PyTorch already holds {} of {}: the job does not fit.",
                gib(by_torch.unwrap_or(0.0)),
                gib(t)
            ));
        }
    }
    if let Some(r) = reserved_unalloc.filter(|r| *r >= want || total.is_some_and(|t| *r >= 0.2 * t))
    {
        causes.push(format!(
            "{} is reserved by PyTorch but unallocated: the caching allocator is fragmented.",
            gib(r)
        ));
        cmds.push("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    } else if free.is_some_and(|f| f >= want) {
        causes.push("More memory is free than was asked for, yet no single free block was large enough (fragmentation, or memory the driver reserves on Windows/WDDM).".into());
        cmds.push("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    if causes.is_empty() {
        causes.push("The job needs more GPU memory than is free.".into());
    }
    let _ = own;
    let m = Match::new(
        "signature",
        json!("torch-oom"),
        "PyTorch CUDA out of memory",
        Category::GpuMemoryExhausted,
        format!(
            "PyTorch could not allocate GPU memory: {}.",
            facts.join(", ")
        ),
    )
    .causes_owned(causes)
    .fix_owned(fix, cmds)
    .key(format!("torch-oom:{}", (want / 1e6).round()));
    Some(m)
}

fn driver_too_old(_line: &str, c: Option<&Captures>, m: &Matrix) -> Option<Match> {
    let raw = cap(c, 1)?;
    let n: i32 = raw.parse().ok()?;
    let v = CudaVersion::from_api(n)?;
    let d = DriverFacts {
        version: None,
        cuda: Some(v),
        os: Os::Linux,
    };
    let alt = best_torch(m, &d, &[]);
    let mut cmds = vec![];
    let mut fix = format!("Install a driver for the CUDA your PyTorch build uses (gpudoctor check names it), or a PyTorch built for CUDA {v} or older");
    if let Some((row, var)) = alt {
        fix.push_str(&format!(
            ": PyTorch {} +{} runs on this driver",
            row.torch, var.tag
        ));
        cmds.push(format!(
            "python -m pip install 'torch=={}.*' --index-url https://download.pytorch.org/whl/{}",
            row.torch, var.tag
        ));
    }
    cmds.push("gpudoctor check".into());
    Some(
        Match::new("signature", json!(n), format!("driver too old (found version {n})"), Category::DriverTooOld, format!("PyTorch found a driver that supports CUDA {v} (found version {n} = 1000 × {} + 10 × {}), older than the CUDA it was built with.", v.major, v.minor))
            .causes_owned(vec![format!("The installed NVIDIA driver supports CUDA {v}; the PyTorch wheel needs a newer one (e.g. a +cu121 wheel needs CUDA 12.x: driver >= 525.60.13).")])
            .fix_owned(fix, cmds)
            .key(format!("driver-too-old:{n}")),
    )
}

fn sm_incompatible(line: &str, c: Option<&Captures>, m: &Matrix) -> Option<Match> {
    let sm = cap(c, 1)?;
    let (maj, min) = split_cc(sm)?;
    let cc = format!("{maj}.{min}");
    let arch = m.arch_of_cc(&cc).unwrap_or("this");
    let supported: Vec<String> = line
        .split("supports CUDA capabilities")
        .nth(1)
        .map(|r| {
            r.split_whitespace()
                .filter(|w| w.starts_with("sm_") || w.starts_with("compute_"))
                .map(|w| w.trim_end_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default();
    // The first PyTorch build in the matrix with kernels for this GPU, and the newest one.
    let first = m.pytorch.iter().find_map(|r| {
        r.variants
            .iter()
            .find(|v| matches!(coverage(&v.sass, &v.ptx, &cc), Coverage::Sass(_)))
            .map(|v| (r, v))
    });
    // The newest release that covers it, preferring its PyPI default variant.
    let covers = |v: &&crate::matrix::TorchVariant| {
        !matches!(coverage(&v.sass, &v.ptx, &cc), Coverage::None)
    };
    let newest = m.pytorch.iter().rev().find_map(|r| {
        r.variant(&r.pypi_default)
            .filter(covers)
            .or_else(|| {
                r.variants
                    .iter()
                    .filter(covers)
                    .max_by_key(|v| CudaVersion::parse(&v.cuda))
            })
            .map(|v| (r, v))
    });
    let too_old = supported
        .iter()
        .filter_map(|s| split_cc(s))
        .all(|(a, b)| (a, b) > (maj, min))
        && !supported.is_empty();
    let (fix, cmds) = if too_old {
        match newest {
            Some((r, v)) => (format!("This GPU ({arch}, compute {cc}) is older than every architecture of this build; PyTorch {} +{} still has kernels for it:", r.torch, v.tag), vec![format!("python -m pip install 'torch=={}.*' --index-url https://download.pytorch.org/whl/{}", r.torch, v.tag)]),
            None => (format!("No PyTorch build in the matrix supports compute {cc} any more."), vec![]),
        }
    } else {
        match first {
            Some((r, v)) => (format!("{arch} GPUs (compute {cc}) need PyTorch {} +{} or newer (a {} build):", r.torch, v.tag, v.tag), vec![format!("python -m pip install --upgrade torch --index-url https://download.pytorch.org/whl/{}", newest.map(|(_, v)| v.tag.as_str()).unwrap_or(v.tag.as_str()))]),
            None => (format!("No PyTorch build in the matrix has kernels for compute {cc} yet: update gpudoctor's matrix or use a nightly build."), vec![]),
        }
    };
    Some(
        Match::new("signature", json!(sm), format!("{sm} not supported by this PyTorch build"), Category::ArchUnsupported, format!("The GPU is {arch} (compute {cc}, {sm}); this PyTorch build has kernels only for {}.", if supported.is_empty() { "other architectures".to_string() } else { supported.join(" ") }))
            .causes(&["A PyTorch wheel built without this GPU's architecture: a new GPU with an old build, or an old GPU with a build that dropped it."])
            .fix_owned(fix, cmds)
            .key(format!("sm:{sm}")),
    )
}

fn cudnn_version_text(s: &str) -> Option<String> {
    if s.contains('.') {
        return Some(s.trim_end_matches('.').to_string());
    }
    decode_cudnn(s.parse().ok()?)
}

fn cudnn_loaded(_line: &str, c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    let loaded = cudnn_version_text(cap(c, 1)?)?;
    let built = cudnn_version_text(cap(c, 2)?)?;
    let lmaj = loaded.split('.').next().unwrap_or("");
    let bmaj = built.split('.').next().unwrap_or("");
    let cause = if lmaj != bmaj {
        format!("cuDNN {loaded} was loaded but the framework was built with cuDNN {built}: a different major version cannot work.")
    } else {
        format!("cuDNN {loaded} was loaded but the framework was built with {built}: TensorFlow needs the same major version and an equal or newer minor.")
    };
    Some(
        Match::new("signature", json!(format!("{loaded}/{built}")), "cuDNN version mismatch", Category::CudnnMismatch, format!("The cuDNN found at run time ({loaded}) is older than (or a different major from) the one the framework was compiled with ({built})."))
            .causes_owned(vec![cause, "An older cuDNN earlier on the library path (system /usr/lib, a conda env, LD_LIBRARY_PATH) than the one the framework's pip wheels bring.".into()])
            .fix("Install the cuDNN the framework was built with (for TensorFlow 2.14+: pip install 'tensorflow[and-cuda]'), and remove older cuDNN directories from LD_LIBRARY_PATH:", &["gpudoctor check", "echo $LD_LIBRARY_PATH | tr ':' '\\n'"])
            .key(format!("cudnn-loaded:{loaded}:{built}")),
    )
}

fn missing_library(_line: &str, c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    let lib = cap(c, 1)?.trim();
    let base = lib.rsplit('/').next().unwrap_or(lib);
    let (cat, what, fix, cmds): (Category, &str, &str, Vec<String>) = if base
        .starts_with("libcudnn")
        || base.starts_with("cudnn64")
    {
        (Category::CudnnMismatch, "cuDNN", "Install the cuDNN major the framework needs (pip: the nvidia-cudnn-cu12 wheel, or tensorflow[and-cuda]; Debian/Ubuntu: libcudnn8 / libcudnn9), or put its directory on the library path:", vec!["gpudoctor check".into()])
    } else if base.starts_with("libcuda.so")
        || base.starts_with("nvcuda")
        || base.starts_with("libnvidia-ml")
    {
        (Category::DriverMissing, "the NVIDIA driver's user-space library", "Install the NVIDIA driver (in a container: start it with GPU access, e.g. docker run --gpus all):", vec!["gpudoctor check".into()])
    } else if base.starts_with("libnvinfer") {
        (
            Category::CudaRuntimeMismatch,
            "TensorRT (optional for TensorFlow)",
            "Only needed for TensorRT: pip install tensorrt, or ignore the warning.",
            vec![],
        )
    } else {
        (Category::CudaRuntimeMismatch, "a CUDA library", "Install the CUDA libraries of the version the framework was built for (pip: the nvidia-*-cu12 wheels / tensorflow[and-cuda]; or the CUDA toolkit), or add their directory to LD_LIBRARY_PATH:", vec!["gpudoctor check".into()])
    };
    let sev = if base.starts_with("libnvinfer") {
        Severity::Info
    } else {
        Severity::Error
    };
    Some(
        Match::new("signature", json!(base), format!("{base} not found"), cat, format!("{base} ({what}) could not be loaded: it is not installed, or not on the library search path."))
            .causes_owned(vec![format!("{base} is missing, or is installed for another major version than the one asked for.")])
            .fix_owned(fix, cmds)
            .severity(sev)
            .key(format!("missing-lib:{base}")),
    )
}

fn nccl(_line: &str, c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    let what = cap(c, 1)?.to_ascii_lowercase();
    let (causes, fix, cmds): (&[&str], &str, &[&str]) = match what.as_str() {
        "unhandled cuda error" => (&["a CUDA call inside NCCL failed: a GPU fault (check the kernel log for Xids), out of GPU memory, or an NCCL built for another CUDA than the driver supports"], "Rerun with NCCL_DEBUG=INFO to see the CUDA error; run gpudoctor check on each node:", &["export NCCL_DEBUG=INFO", "gpudoctor check"]),
        "unhandled system error" => (&["shared memory too small in a container (/dev/shm): start it with --ipc=host or a larger --shm-size", "a network interface problem (set NCCL_SOCKET_IFNAME)", "InfiniBand/RDMA misconfiguration"], "Rerun with NCCL_DEBUG=INFO; in Docker use --ipc=host (or --shm-size):", &["export NCCL_DEBUG=INFO", "docker run --ipc=host ..."]),
        "remote process exited or there was a network error" => (&["another rank died (look at its log first)", "a network or interface problem between nodes"], "Find the first rank that failed; check the network (NCCL_SOCKET_IFNAME):", &["export NCCL_DEBUG=INFO"]),
        _ => (&["an NCCL internal or usage error"], "Rerun with NCCL_DEBUG=INFO for details:", &["export NCCL_DEBUG=INFO"]),
    };
    Some(
        Match::new(
            "signature",
            json!(what),
            format!("NCCL error: {what}"),
            Category::ApplicationError,
            format!("NCCL (the multi-GPU communication library) failed: {what}."),
        )
        .causes(causes)
        .fix(fix, cmds)
        .key(format!("nccl:{what}")),
    )
}

fn exit_code(line: &str, c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    let raw = cap(c, 1)?;
    let n: i64 = if let Some(h) = raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else {
        raw.parse().ok()?
    };
    if n == 0 {
        return None;
    }
    // nvidia-smi's exit status is an NVML return code.
    if line.contains("nvidia-smi") && (1..=999).contains(&n) {
        if let Some(x) = codes::parse(&format!("{n}"), &Matrix::default())
            .and_then(|v| v.into_iter().find(|m| m.kind == "nvml_error"))
        {
            return Some(x.key(format!("nvml:{n}")));
        }
    }
    let mut v = codes::readings(n);
    if v.is_empty() {
        return None;
    }
    let mut first = v.remove(0);
    first.key = format!("code:{n}");
    Some(first)
}

/// A fixed explanation (the signature table's rows read best with every field spelled out).
#[allow(clippy::too_many_arguments)]
fn simple(
    id: &'static str,
    name: &'static str,
    cat: Category,
    meaning: &'static str,
    causes: &'static [&'static str],
    fix: &'static str,
    cmds: &'static [&'static str],
    sev: Severity,
) -> Match {
    Match::new("signature", json!(id), name, cat, meaning)
        .causes(causes)
        .fix(fix, cmds)
        .severity(sev)
        .key(id)
}

fn cuda_text(line: &str, _c: Option<&Captures>, _m: &Matrix) -> Option<Match> {
    codes::cuda_by_text(line).map(|m| {
        let k = format!("cuda:{}", m.code);
        m.key(k)
    })
}

fn kernel_event(ev: &LogEvent) -> Vec<Match> {
    match ev {
        LogEvent::Xid { xid, bus_id, .. } => codes::xid_match(*xid, "high")
            .map(|m| {
                let k = format!("xid:{xid}:{}", bus_id.as_deref().unwrap_or("?"));
                m.key(k)
            })
            .into_iter()
            .collect(),
        LogEvent::FallenOffBus { .. } => vec![simple("fallen-off-bus", "GPU has fallen off the bus", Category::HardwareFault, "The driver can no longer reach the GPU over PCIe.", &["power, overheating, a failing riser or slot, or the GPU itself"], "Reboot, then check power, cooling and seating; RMA if it repeats.", &["sudo dmesg -T | grep -i 'fallen off'"], Severity::Error)],
        LogEvent::RmInitAdapterFailed { .. } => vec![simple("rm-init-adapter", "RmInitAdapter failed", Category::HardwareFault, "The driver could not initialise a GPU.", &["hardware, GSP firmware, power, or an unsupported configuration"], "Reboot; update the driver; check power and seating.", &[], Severity::Error)],
        LogEvent::ApiMismatch { client_version, module_version } => vec![Match::new("signature", json!("api-mismatch"), "NVRM API mismatch", Category::DriverLibraryMismatch, format!("A driver client of version {} met kernel module {}.", client_version.as_deref().unwrap_or("?"), module_version.as_deref().unwrap_or("?"))).causes(&["the driver was upgraded without a reboot"]).fix("Reboot.", &["sudo reboot"]).key("api-mismatch")],
        LogEvent::ProbeNotCalled => vec![simple("probe-not-called", "NVIDIA probe routine not called", Category::DriverMissing, "Another driver (usually nouveau) claimed the GPU before the NVIDIA module.", &["nouveau is loaded"], "Blacklist nouveau and reboot.", &["echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf", "sudo update-initramfs -u && sudo reboot"], Severity::Error)],
        LogEvent::NoDevicesProbed => vec![simple("no-devices-probed", "No NVIDIA devices probed", Category::DriverMissing, "The NVIDIA driver found no GPU it could use.", &["the GPU is bound to another driver", "the GPU is not supported by this driver branch"], "Check which driver owns the GPU:", &["lspci -nnk -d 10de:"], Severity::Error)],
        LogEvent::UnsupportedGpu { .. } | LogEvent::OpenModuleNeedsGsp => vec![simple("unsupported-gpu", "GPU not supported by this driver", Category::ArchUnsupported, "The loaded driver does not support this GPU.", &["a driver branch that dropped the architecture, or the open kernel module on a pre-Turing GPU"], "Install a driver branch that supports the GPU.", &["gpudoctor check"], Severity::Error)],
        LogEvent::UnsignedModule => vec![simple("unsigned-module", "Unsigned module rejected", Category::DriverMissing, "Secure Boot refused to load an unsigned kernel module.", &["Secure Boot with a DKMS-built NVIDIA module whose key is not enrolled"], "Enroll the MOK key or use signed driver packages.", &["mokutil --sb-state"], Severity::Error)],
        LogEvent::PcieAer { severity, .. } => vec![Match::new("signature", json!("pcie-aer"), format!("PCIe {severity} error"), Category::PcieDegraded, format!("The kernel logged a PCIe {severity} error.")).causes(&["a marginal PCIe link: riser, slot, cable"]).fix("Reseat the card; check the link with lspci -vv.", &[]).severity(if severity.starts_with("Uncorrected") { Severity::Error } else { Severity::Info }).key(format!("aer:{severity}"))],
        LogEvent::OomKill { process, .. } => vec![Match::new("signature", json!("oom-kill"), "OOM killer", Category::GpuMemoryExhausted, format!("The kernel's OOM killer killed {} because host memory ran out: the process exits with 137.", process.as_deref().unwrap_or("a process"))).causes(&["host RAM (not GPU memory) exhausted: too many DataLoader workers, large in-memory datasets, a container memory limit"]).fix("Use less host memory or raise the limit.", &["sudo dmesg -T | grep -i 'killed process'"]).key("oom-kill")],
        LogEvent::NvswitchSxid { code } => vec![Match::new("signature", json!(code), format!("NVSwitch SXid {code}"), Category::HardwareFault, "An NVSwitch reported an error.").fix("Check the Fabric Manager log and reset the GPUs/NVSwitches if it repeats.", &[]).key(format!("sxid:{code}"))],
    }
}

fn nothing(_: &str, _: Option<&Captures>, _: &Matrix) -> Option<Match> {
    None
}

pub static SIGNATURES: &[Signature] = &[
    Signature {
        id: "container-cli",
        needle: "nvidia-container-cli: initialization error",
        pattern: None,
        build: |_, _, _| {
            Some(simple(
                "container-cli",
                "nvidia-container-cli initialization error",
                Category::ContainerNoGpu,
                "The NVIDIA container runtime could not set up GPU access.",
                &[
                    "the host has no working NVIDIA driver (libnvidia-ml.so.1 missing on the host)",
                    "a driver/library mismatch on the host",
                ],
                "Fix the host first: run gpudoctor check on the host.",
                &["gpudoctor check"],
                Severity::Error,
            ))
        },
    },
    Signature {
        id: "driver-too-old",
        needle: "too old (found version",
        pattern: Some(r"too old \(found version (\d+)\)"),
        build: driver_too_old,
    },
    Signature {
        id: "sm-incompatible",
        needle: "is not compatible with the current PyTorch installation",
        pattern: Some(r"CUDA capability (sm_\d+[af]?) is not compatible"),
        build: sm_incompatible,
    },
    Signature {
        id: "cudnn-loaded",
        needle: "Loaded runtime CuDNN library",
        pattern: Some(
            r"Loaded runtime CuDNN library:? ([\d.]+)(?: \(compatibility version \d+\))? but source was compiled with:? ([\d.]+)",
        ),
        build: cudnn_loaded,
    },
    Signature {
        id: "dlopen",
        needle: "Could not load dynamic library",
        pattern: Some(r"Could not load dynamic library '([^']+)'"),
        build: missing_library,
    },
    Signature {
        id: "shared-object",
        needle: ": cannot open shared object file",
        pattern: Some(
            r"([\w./+-]*?(?:lib|cudnn|cudart|cublas)[\w.+-]*?\.so[\d.]*): cannot open shared object file",
        ),
        build: missing_library,
    },
    Signature {
        id: "torch-oom",
        needle: "CUDA out of memory",
        pattern: None,
        build: torch_oom,
    },
    Signature {
        id: "cuda-oom",
        needle: "CUDA error: out of memory",
        pattern: None,
        build: |_, _, _| {
            Some(simple("cuda-oom", "CUDA error: out of memory", Category::GpuMemoryExhausted, "A CUDA allocation failed: the GPU has no memory left for it.", &["the job needs more memory than the GPU has free", "another process holds GPU memory"], "Lower the batch size; stop other processes on the GPU (gpudoctor check names them).", &["gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "tf-oom",
        needle: "OOM when allocating tensor",
        pattern: None,
        build: |_, _, _| {
            Some(simple("tf-oom", "TensorFlow OOM when allocating tensor", Category::GpuMemoryExhausted, "TensorFlow could not allocate a tensor on the GPU.", &["the batch or model is too large for the GPU", "TensorFlow (or another process) already reserved the memory; by default TensorFlow maps nearly all of it"], "Lower the batch size; set TF_FORCE_GPU_ALLOW_GROWTH=true so TensorFlow does not take all memory up front.", &["export TF_FORCE_GPU_ALLOW_GROWTH=true"], Severity::Error))
        },
    },
    Signature {
        id: "jax-oom",
        needle: "RESOURCE_EXHAUSTED: Out of memory",
        pattern: None,
        build: |_, _, _| {
            Some(simple("jax-oom", "JAX/XLA out of memory", Category::GpuMemoryExhausted, "XLA could not allocate GPU memory.", &["JAX preallocates 75% of the GPU by default; another process holding memory leaves too little", "the computation is too large for the GPU"], "Free the GPU, or change JAX's preallocation:", &["export XLA_PYTHON_CLIENT_PREALLOCATE=false", "export XLA_PYTHON_CLIENT_MEM_FRACTION=.5"], Severity::Error))
        },
    },
    Signature {
        id: "cublas-init",
        needle: "CUBLAS_STATUS_NOT_INITIALIZED",
        pattern: None,
        build: |_, _, _| {
            Some(simple("cublas-init", "CUBLAS_STATUS_NOT_INITIALIZED", Category::GpuMemoryExhausted, "cuBLAS could not create its handle.", &["no GPU memory left for cuBLAS's workspace (the most common cause)", "a CUDA runtime error earlier in the process", "a driver/library version mismatch"], "Free GPU memory (smaller batch, stop other processes); run gpudoctor check for driver and library versions.", &["gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "cublas-other",
        needle: "CUBLAS_STATUS_EXECUTION_FAILED",
        pattern: None,
        build: |_, _, _| {
            Some(simple("cublas-exec", "CUBLAS_STATUS_EXECUTION_FAILED", Category::ApplicationError, "A cuBLAS kernel failed to run.", &["no kernel for this GPU in the library build", "invalid inputs (shapes, NaNs) or an earlier CUDA error"], "Rerun with CUDA_LAUNCH_BLOCKING=1; check the build covers this GPU (gpudoctor check).", &["gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "cudnn-status",
        needle: "CUDNN_STATUS_",
        pattern: Some(r"(CUDNN_STATUS_[A-Z_]+)"),
        build: |_, c, _| {
            let s = cap(c, 1)?.to_string();
            let (causes, cat): (&[&str], Category) = match s.as_str() {
                "CUDNN_STATUS_NOT_INITIALIZED"
                | "CUDNN_STATUS_INTERNAL_ERROR"
                | "CUDNN_STATUS_ALLOC_FAILED" => (
                    &[
                        "out of GPU memory when cuDNN initialises",
                        "a cuDNN that does not match the CUDA runtime or the framework build",
                    ],
                    Category::CudnnMismatch,
                ),
                "CUDNN_STATUS_ARCH_MISMATCH" => (
                    &["this cuDNN has no kernels for the GPU's architecture"],
                    Category::ArchUnsupported,
                ),
                _ => (
                    &["a cuDNN call failed; often out of memory or a version mismatch"],
                    Category::CudnnMismatch,
                ),
            };
            Some(
                Match::new(
                    "signature",
                    json!(s.clone()),
                    s.clone(),
                    cat,
                    format!("cuDNN returned {s}."),
                )
                .causes(causes)
                .fix(
                    "Free GPU memory and check cuDNN against the framework (gpudoctor check).",
                    &["gpudoctor check"],
                )
                .key(format!("cudnn-status:{s}")),
            )
        },
    },
    Signature {
        id: "system-not-ready",
        needle: "system not yet initialized",
        pattern: None,
        build: |_, _, _| {
            codes::parse("802", &Matrix::default())
                .and_then(|v| v.into_iter().next())
                .map(|m| m.key("cuda:802"))
        },
    },
    Signature {
        id: "nccl",
        needle: "NCCL",
        pattern: Some(
            r"(?i)nccl.*?(unhandled cuda error|unhandled system error|internal error|invalid argument|invalid usage|remote process exited or there was a network error)",
        ),
        build: nccl,
    },
    Signature {
        id: "nccl-watchdog",
        needle: "Watchdog caught collective operation timeout",
        pattern: None,
        build: |_, _, _| {
            Some(simple("nccl-watchdog", "NCCL watchdog timeout", Category::ApplicationError, "A collective (all-reduce, broadcast…) did not finish within the timeout, so PyTorch's watchdog aborted it.", &["one rank died or is stuck (look at the first rank that failed)", "ranks running different code paths (a collective not called on every rank)", "an NVLink or network fault"], "Find the first failing rank; run gpudoctor check on each node; raise the timeout only after ruling out a hang.", &["export NCCL_DEBUG=INFO", "gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "nvml-mismatch",
        needle: "version mismatch",
        pattern: Some(r"(?i)driver/library version mismatch"),
        build: |_, _, _| {
            codes::parse("NVML_ERROR_LIB_RM_VERSION_MISMATCH", &Matrix::default()).and_then(|v| v.into_iter().next()).map(|m| m.fix("Reboot so the upgraded kernel module loads (or reload the NVIDIA modules with no process on the GPUs).", &["sudo reboot"]).key("nvml:18"))
        },
    },
    Signature {
        id: "smi-no-driver",
        needle: "communicate with the NVIDIA driver",
        pattern: None,
        build: |_, _, _| {
            Some(simple("smi-no-driver", "nvidia-smi cannot talk to the driver", Category::DriverMissing, "nvidia-smi found no loaded NVIDIA kernel driver (NVML_ERROR_DRIVER_NOT_LOADED).", &["the module was not built for the running kernel (a kernel update without DKMS rebuild)", "Secure Boot rejected the module", "nouveau owns the GPU", "inside a container: started without GPU access"], "Run gpudoctor check; rebuild the module for this kernel or reinstall the driver:", &["gpudoctor check", "sudo dkms autoinstall", "sudo modprobe nvidia"], Severity::Error))
        },
    },
    Signature {
        id: "torch-no-driver",
        needle: "Found no NVIDIA driver on your system",
        pattern: None,
        build: |_, _, _| {
            Some(simple("torch-no-driver", "PyTorch found no NVIDIA driver", Category::DriverMissing, "PyTorch could not find an NVIDIA driver.", &["no driver installed", "a container without GPU access"], "Install the NVIDIA driver, or start the container with GPU access; run gpudoctor check.", &["gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "torch-cpu",
        needle: "Torch not compiled with CUDA enabled",
        pattern: None,
        build: |_, _, _| {
            Some(simple("torch-cpu", "Torch not compiled with CUDA enabled", Category::CpuOnlyBuild, "A CPU-only PyTorch is installed.", &["pip installed the +cpu wheel (Windows PyPI wheels are CPU-only)"], "Install a CUDA build from PyTorch's index (gpudoctor recommend gives the right one):", &["gpudoctor recommend --framework torch"], Severity::Error))
        },
    },
    Signature {
        id: "dnn-not-found",
        needle: "DNN library is not found",
        pattern: None,
        build: |_, _, _| {
            Some(simple("dnn-not-found", "DNN library is not found", Category::CudnnMismatch, "TensorFlow/XLA could not load a usable cuDNN.", &["cuDNN missing, or a version the build cannot use"], "Install TensorFlow's CUDA libraries (pip install 'tensorflow[and-cuda]') and check with gpudoctor check.", &["gpudoctor check"], Severity::Error))
        },
    },
    Signature {
        id: "tf-dlopen",
        needle: "Cannot dlopen some GPU libraries",
        pattern: None,
        build: |_, _, _| {
            Some(simple(
                "tf-dlopen",
                "Cannot dlopen some GPU libraries",
                Category::CudaRuntimeMismatch,
                "TensorFlow could not load its CUDA libraries and falls back to the CPU.",
                &["CUDA/cuDNN libraries of the wrong version or not on the library path"],
                "pip install 'tensorflow[and-cuda]' (Linux/WSL2), then gpudoctor check.",
                &["gpudoctor check"],
                Severity::Error,
            ))
        },
    },
    Signature {
        id: "docker-gpus",
        needle: "could not select device driver",
        pattern: None,
        build: |_, _, _| {
            Some(simple("docker-gpus", "Docker has no GPU device driver", Category::ContainerNoGpu, "Docker has no runtime for --gpus: the NVIDIA Container Toolkit is missing or not configured.", &["nvidia-container-toolkit not installed or Docker not restarted after configuring it"], "Install and configure the NVIDIA Container Toolkit:", &["sudo nvidia-ctk runtime configure --runtime=docker", "sudo systemctl restart docker"], Severity::Error))
        },
    },
    Signature {
        id: "dso-mismatch",
        needle: "does not match DSO version",
        pattern: None,
        build: |_, _, _| {
            Some(simple(
                "dso-mismatch",
                "kernel version does not match DSO version",
                Category::DriverLibraryMismatch,
                "TensorFlow found a libcuda whose version differs from the kernel module.",
                &[
                    "a driver upgrade without reboot",
                    "a stale libcuda from another driver on the library path",
                ],
                "Reboot; remove stale libcuda copies from the library path.",
                &["sudo reboot"],
                Severity::Error,
            ))
        },
    },
    Signature {
        id: "cuda-unknown",
        needle: "unknown error",
        pattern: Some(r"CUDA (?:error: )?unknown error"),
        build: |_, _, _| {
            codes::parse("999", &Matrix::default())
                .and_then(|v| v.into_iter().next())
                .map(|m| m.key("cuda:999"))
        },
    },
    Signature {
        id: "kernel-image",
        needle: "no kernel image is available",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "illegal-address",
        needle: "an illegal memory access was encountered",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "device-assert",
        needle: "device-side assert triggered",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "launch-failure",
        needle: "unspecified launch failure",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "no-device",
        needle: "no CUDA-capable device is detected",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "busy",
        needle: "is/are busy or unavailable",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "ptx",
        needle: "compiled with an unsupported toolchain",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "stub",
        needle: "CUDA driver is a stub library",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "compat-hw",
        needle: "forward compatibility was attempted",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "display-driver",
        needle: "unsupported display driver / cuda driver combination",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "ecc",
        needle: "uncorrectable ECC error encountered",
        pattern: None,
        build: cuda_text,
    },
    Signature {
        id: "insufficient-driver",
        needle: "CUDA driver version is insufficient",
        pattern: None,
        build: |_, _, _| {
            codes::parse("35", &Matrix::default())
                .and_then(|v| v.into_iter().find(|m| m.kind == "cuda_error"))
                .map(|m| m.key("cuda:35"))
        },
    },
    Signature {
        id: "exit-code",
        needle: "exit code",
        pattern: Some(r"exit code:? \(?(-?\d+|0[xX][0-9A-Fa-f]+)"),
        build: exit_code,
    },
    Signature {
        id: "exit-status",
        needle: "exit status",
        pattern: Some(r"exit status:? (-?\d+)"),
        build: exit_code,
    },
    Signature {
        id: "return-code",
        needle: "return code",
        pattern: Some(r"return code:? (-?\d+)"),
        build: exit_code,
    },
    Signature {
        id: "ntstatus-hex",
        needle: "(0xC",
        pattern: Some(r"\((0xC[0-9A-Fa-f]{7})\)"),
        build: exit_code,
    },
    Signature {
        id: "segfault",
        needle: "Segmentation fault",
        pattern: None,
        build: |_, _, _| {
            codes::parse("139", &Matrix::default())
                .and_then(|v| v.into_iter().next())
                .map(|m| m.key("code:139"))
        },
    },
    Signature {
        id: "aborted",
        needle: "Aborted (core dumped)",
        pattern: None,
        build: |_, _, _| {
            codes::parse("134", &Matrix::default())
                .and_then(|v| v.into_iter().next())
                .map(|m| m.key("code:134"))
        },
    },
    Signature {
        id: "kernel-log",
        needle: "NVRM",
        pattern: None,
        build: nothing,
    },
    Signature {
        id: "kernel-log-oom",
        needle: "Killed process",
        pattern: None,
        build: |line, _, _| {
            let mut p = LogParser::new();
            p.feed(line)
                .map(|e| kernel_event(&e))
                .and_then(|v| v.into_iter().next())
        },
    },
    Signature {
        id: "sxid",
        needle: "SXid",
        pattern: None,
        build: |line, _, _| {
            let mut p = LogParser::new();
            p.feed(line)
                .map(|e| kernel_event(&e))
                .and_then(|v| v.into_iter().next())
        },
    },
    Signature {
        id: "aer",
        needle: "PCIe Bus Error",
        pattern: None,
        build: |line, _, _| {
            let mut p = LogParser::new();
            p.feed(line)
                .map(|e| kernel_event(&e))
                .and_then(|v| v.into_iter().next())
        },
    },
];
