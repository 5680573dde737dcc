//! The enrichers: the Rust that computes, named by the catalog's signatures
//! (explain-catalog/signatures.yaml, [`super::catalog`]). Each turns the numbers in a message into
//! facts when they are there: "found version 11040" → a driver for CUDA 11.4; "sm_120" →
//! Blackwell, which needs a cu128 build; a PyTorch out-of-memory message → whose memory it really
//! is; an exit code, an Xid or a kernel-log event → its own reading. None is ever required.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;
use serde_json::json;

use super::codes;
use super::logscan::MatrixSource;
use super::Match;
use crate::compat::{best_torch, DriverFacts};
use crate::faults::logparse::{LogEvent, LogParser};
use crate::matrix::{coverage, split_cc, Coverage, Matrix, Os};
use crate::version::{decode_cudnn, CudaVersion};
use crate::vocab::{Category, Severity};

/// What a signature's enricher found in one line: `None` when it found nothing to add (the
/// catalog's own text stands), else the matches to report instead (none: the line is not this
/// signature after all, as an NVRM line that is no event).
///
/// The matrix is loaded only by the enrichers that read it (`m.matrix()`): parsing the built-in
/// one was 37 M instructions at a log's first matched line.
pub fn enrich(
    name: &str,
    line: &str,
    m: &dyn MatrixSource,
    parser: &mut LogParser,
) -> Option<Vec<Match>> {
    let one = |x: Option<Match>| x.map(|x| vec![x]);
    match name {
        "torch_oom" => one(torch_oom(line)),
        "oom_bytes" => one(oom_bytes(line)),
        "driver_too_old" => one(driver_too_old(line, m)),
        "sm_incompatible" => one(sm_incompatible(line, m)),
        "cudnn_loaded" => one(cudnn_loaded(line)),
        "missing_library" => missing_library(line),
        "nccl" => one(nccl(line)),
        "exit_code" => one(exit_code(line)),
        "cuda_text" => one(cuda_text(line)),
        "library_status" => one(library_status(line)),
        "checked_status" => one(checked_status(line)),
        "cc_range" => cc_range(line),
        // A graphics or video API's status code, by name or by its number with the API's
        // context (src/explain/api_codes.rs).
        "api_code" => super::api_codes::in_line(line),
        // Not an NVML return code after all: the line only mentions NVML.
        "nvml_code" => Some(
            codes::nvml_in_line(line)
                .map(|m| {
                    let k = format!("nvml:{}", m.code);
                    m.key(k)
                })
                .into_iter()
                .collect(),
        ),
        "xid" => xid_readings(line),
        // The kernel-log knowledge's own lines (knowledge/linux-messages.yaml,
        // knowledge/kernel-messages.yaml): what the parser reads, and nothing else.
        "kernel_knowledge" => Some(
            parser
                .feed(line)
                .map(|ev| kernel_event(&ev, line))
                .unwrap_or_default(),
        ),
        "kernel_log" => match parser.feed(line) {
            // The signature that found the line places its reading (a Linux family's own rank is
            // for the lines only the knowledge finds).
            Some(ev) => {
                let own = crate::knowledge::kernel::event(ev.event_id()).is_some_and(|e| {
                    e.rank.is_some() && crate::knowledge::linux::family(&e.id).is_none()
                });
                Some(
                    kernel_event(&ev, line)
                        .into_iter()
                        .map(|mut m| {
                            if !own {
                                m.rank = 0;
                            }
                            m
                        })
                        .collect(),
                )
            }
            // A line the kernel knowledge knows to be no fault (a module tainting the kernel, a
            // driver notice) is not the fault whose words it shares.
            None if crate::knowledge::kernel::known_not_a_fault(line) => Some(Vec::new()),
            None => None,
        },
        _ => None,
    }
}

/// The first capture group of `pat` (compiled once) in `line`.
fn grab1(line: &str, pat: &str) -> Option<String> {
    cached_regex(pat)?
        .captures(line)?
        .get(1)
        .map(|x| x.as_str().to_string())
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
/// thousands of matching lines must not compile the same pattern thousands of times. Shared as an
/// `Arc`: a cloned `Regex` starts with empty match caches, which cost ~60 µs a line to rebuild.
fn cached_regex(pat: &str) -> Option<std::sync::Arc<Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, std::sync::Arc<Regex>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().ok()?;
    if let Some(re) = cache.get(pat) {
        return Some(std::sync::Arc::clone(re));
    }
    let re = std::sync::Arc::new(Regex::new(pat).ok()?);
    cache.insert(pat.to_string(), std::sync::Arc::clone(&re));
    Some(re)
}

const SIZE: &str = r"([\d.]+ (?:bytes|B|KiB|MiB|GiB|TiB))";

/// A figure of a message: its bytes and the text as the message printed it ("20.00 MiB" stays
/// "20.00 MiB", never "0.02 GiB").
#[derive(Debug, Clone)]
struct Fig {
    bytes: f64,
    text: String,
}

impl Fig {
    fn of(s: &str) -> Option<Fig> {
        Some(Fig {
            bytes: size(s)?,
            text: s.to_string(),
        })
    }
    /// A figure gpudoctor computed (a sum, a difference): in the unit that reads best.
    fn computed(bytes: f64) -> Fig {
        Fig {
            bytes,
            text: human(bytes),
        }
    }
}

impl std::fmt::Display for Fig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Bytes in GiB from 1 GiB up, else MiB (a computed figure; printed ones keep their unit).
fn human(b: f64) -> String {
    if b >= (1u64 << 30) as f64 {
        gib(b)
    } else {
        format!("{:.2} MiB", b / (1u64 << 20) as f64)
    }
}

const NVSMI_APPS: &str =
    "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv";
const EXPANDABLE: &str = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";

/// PyTorch's CUDA out-of-memory texts, every figure they give: each wording PyTorch has printed
/// is in knowledge/pytorch-oom.yaml (scripts/knowledge/torch_oom.py, from the allocator library
/// of every release), and the tests build every one of them from there. Up to 2.0 "Tried to
/// allocate X (GPU n; T total capacity; A already allocated; F free; [L allowed; ]R reserved in
/// total by PyTorch)" (up to 1.3 "...; C cached)"); from 2.1 "GPU n has a total capacity of T
/// of which F is free. Process P has M memory in use. [...] Including non-PyTorch memory, this
/// process has M memory in use. [L allowed; ]Of the allocated memory A is allocated by PyTorch,
/// [with G allocated in private pools (e.g., CUDA Graphs), ]and U is reserved by PyTorch but
/// unallocated."; backend:cudaMallocAsync's "Currently allocated : A / Requested : X / Device
/// limit : T / Free (according to CUDA): F / PyTorch limit (...) : L". Other processes the text
/// names lead when they hold a large share; a large reserved-but-unallocated share is
/// fragmentation; a memory-fraction cap the request would pass is named.
fn torch_oom(line: &str) -> Option<Match> {
    let o = TorchOom::read(line)?;
    let want = &o.want;
    let facts = o.facts();
    let mut causes: Vec<String> = Vec::new();
    let mut fix = "Make the job smaller: lower the batch size, use mixed precision (bf16/fp16), gradient checkpointing, or a smaller model.".to_string();
    let mut cmds = Vec::<String>::new();
    o.fraction_causes(&mut causes);
    o.holder_causes(&mut causes, &mut fix, &mut cmds);
    o.fragmentation_causes(&mut causes, &mut cmds);
    if causes.is_empty() {
        causes.push("The job needs more GPU memory than is free.".into());
    }
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
    .key(format!("torch-oom:{}", (want.bytes / 1e6).round()));
    let held = o
        .this_proc
        .as_ref()
        .or(o.self_proc.as_ref().map(|(_, f)| f))
        .map(|f| f.bytes);
    Some(Match {
        held_by_process_bytes: held,
        ..m
    })
}

/// The figures of a PyTorch OOM text (each None where its version does not print it), and the
/// other processes it names.
struct TorchOom {
    want: Fig,
    total: Option<Fig>,
    free: Option<Fig>,
    this_proc: Option<Fig>,
    by_torch: Option<Fig>,
    reserved_unalloc: Option<Fig>,
    reserved_total: Option<Fig>,
    /// "X allowed;": the cap torch.cuda.set_per_process_memory_fraction set (caching allocator).
    allowed: Option<Fig>,
    /// "PyTorch limit (set by user-supplied memory fraction): X" (backend:cudaMallocAsync).
    limit: Option<Fig>,
    /// "with X allocated in private pools (e.g., CUDA Graphs)".
    private_pools: Option<Fig>,
    /// The text says the request was refused for the memory fraction before any allocation.
    fraction_refused: bool,
    procs: Vec<(String, Fig)>,
    self_proc: Option<(String, Fig)>,
}

impl TorchOom {
    fn read(line: &str) -> Option<TorchOom> {
        let grab = |pat: &str| -> Option<Fig> {
            let re = cached_regex(pat)?;
            Fig::of(re.captures(line)?.get(1)?.as_str())
        };
        // Every wording of knowledge/pytorch-oom.yaml: the caching allocator's ("Tried to
        // allocate X"), backend:cudaMallocAsync's ("Requested               : X") and the
        // memory-fraction refusal ("Requested size: X").
        let want = grab(&format!(r"Tried to allocate {SIZE}"))
            .or_else(|| grab(&format!(r"Requested\s*:\s*{SIZE}")))
            .or_else(|| grab(&format!(r"Requested size:\s*{SIZE}")))?;
        // PyTorch 2.1 prints "total capacty" (sic).
        let total = grab(&format!(r"total capaci?ty of {SIZE}"))
            .or_else(|| grab(&format!(r"{SIZE} total capacity")))
            .or_else(|| grab(&format!(r"Device limit\s*:\s*{SIZE}")));
        let free = grab(&format!(r"of which {SIZE} is free"))
            .or_else(|| grab(&format!(r"{SIZE} free")))
            .or_else(|| grab(&format!(r"Free \(according to CUDA\)\s*:\s*{SIZE}")));
        let this_proc = grab(&format!(r"this process has {SIZE} memory in use"));
        let by_torch = grab(&format!(r"{SIZE} is allocated by PyTorch"))
            .or_else(|| grab(&format!(r"{SIZE} already allocated")))
            .or_else(|| grab(&format!(r"Currently allocated\s*:\s*{SIZE}")));
        // Up to 1.3 the last figure is "cached": held by the allocator, not allocated
        // (stats.amount_cached - stats.amount_allocated), what later texts call reserved but
        // unallocated.
        let reserved_unalloc = grab(&format!(r"{SIZE} is reserved by PyTorch but unallocated"))
            .or_else(|| grab(&format!(r"{SIZE} cached\)")));
        let reserved_total = grab(&format!(r"{SIZE} reserved in total by PyTorch"));
        let allowed = grab(&format!(r"{SIZE} allowed;"));
        let limit = grab(&format!(r"memory fraction\)\s*:\s*{SIZE}"));
        let private_pools = grab(&format!(r"{SIZE} allocated in private pools"));
        let fraction_refused = line.contains("exceed per_process_memory_fraction limit");
        // Every "Process N has M memory in use" (PyTorch >= 2.0 lists each process on the GPU).
        let mut procs: Vec<(String, Fig)> = Vec::new();
        if let Some(re) = cached_regex(&format!(r"Process (\d+) has {SIZE} memory in use")) {
            for c in re.captures_iter(line) {
                if let (Some(pid), Some(f)) = (c.get(1), c.get(2).and_then(|x| Fig::of(x.as_str())))
                {
                    procs.push((pid.as_str().to_string(), f));
                }
            }
        }
        // Without "this process has" (PyTorch 2.0), the process of the job itself may be among
        // them: the one holding at least 80 % of what PyTorch allocated.
        let mut self_proc: Option<(String, Fig)> = None;
        if this_proc.is_none() {
            if let Some(a) = &by_torch {
                if let Some(i) = procs.iter().position(|(_, f)| a.bytes >= 0.8 * f.bytes) {
                    self_proc = Some(procs.remove(i));
                }
            }
        }
        Some(TorchOom {
            want,
            total,
            free,
            this_proc,
            by_torch,
            reserved_unalloc,
            reserved_total,
            allowed,
            limit,
            private_pools,
            fraction_refused,
            procs,
            self_proc,
        })
    }

    /// What the text says, in order: the request, the GPU, what is free and held.
    fn facts(&self) -> Vec<String> {
        let TorchOom {
            want,
            total,
            free,
            this_proc,
            by_torch,
            reserved_unalloc,
            reserved_total,
            allowed,
            limit,
            private_pools,
            procs,
            ..
        } = self;
        let mut facts: Vec<String> = vec![format!("it asked for {want}")];
        // Each figure the text gave, with the words around it.
        let optional: [(&Option<Fig>, &str, &str); 9] = [
            (total, "on a GPU of ", ""),
            (free, "with ", " free"),
            (this_proc, "this process held ", ""),
            (by_torch, "PyTorch had allocated ", ""),
            (reserved_unalloc, "", " reserved but unallocated"),
            (reserved_total, "", " reserved in total"),
            (private_pools, "", " of it in private pools (CUDA graphs)"),
            (allowed, "", " allowed by the memory fraction"),
            (limit, "a PyTorch limit of ", ""),
        ];
        for (fig, before, after) in optional {
            if let Some(f) = fig {
                facts.push(format!("{before}{f}{after}"));
            }
        }
        if !procs.is_empty() {
            facts.push(format!("other processes: {}", named(procs)));
        }
        facts
    }

    /// Who holds the memory: a request larger than the GPU, other processes, this process, or
    /// memory outside PyTorch's allocator.
    fn holder_causes(&self, causes: &mut Vec<String>, fix: &mut String, cmds: &mut Vec<String>) {
        let TorchOom {
            want,
            total,
            free,
            this_proc,
            by_torch,
            reserved_total,
            procs,
            self_proc,
            ..
        } = self;
        let others: f64 = procs.iter().map(|(_, f)| f.bytes).sum();
        // Another process holds a large share: a quarter of the GPU, or more than this job.
        let large_others = !procs.is_empty()
            && (total.as_ref().is_some_and(|t| others >= 0.25 * t.bytes)
                || this_proc.as_ref().is_some_and(|p| others >= p.bytes)
                || (total.is_none() && this_proc.is_none()));
        if let Some(t) = total.as_ref().filter(|t| want.bytes > t.bytes) {
            causes.push(format!("The single allocation ({want}) is larger than the whole GPU ({t}): an input, batch or tensor is far too large (often a wrong shape or resolution)."));
        } else if large_others {
            let mut biggest = procs.clone();
            biggest.sort_by(|a, b| b.1.bytes.total_cmp(&a.1.bytes));
            let held = if procs.len() == 1 {
                procs
                    .first()
                    .map(|(_, f)| f.clone())
                    .unwrap_or(Fig::computed(others))
            } else {
                Fig::computed(others)
            };
            let of = total
                .as_ref()
                .map(|t| format!(" of {t}"))
                .unwrap_or_default();
            let (who, it) = if procs.len() == 1 {
                ("Another process holds".to_string(), "it")
            } else {
                (format!("{} other processes hold", procs.len()), "them")
            };
            causes.push(format!("{who} {held}{of}: {}. Stop {it} or wait for {it}, or run on a free GPU (gpudoctor check names the processes on each GPU).", named(&biggest)));
            *fix = "Free the GPU: find and stop the other process(es) holding its memory, or run on a free GPU.".into();
            cmds.push(NVSMI_APPS.into());
        } else if let Some(p) = this_proc
            .as_ref()
            .filter(|p| total.as_ref().is_some_and(|t| p.bytes >= 0.6 * t.bytes))
        {
            let a = by_torch
                .as_ref()
                .map(|a| format!(" (PyTorch allocated {a})"))
                .unwrap_or_default();
            causes.push(format!(
                "This process itself holds {p}{a}: the job does not fit, no other process is to blame."
            ));
        } else if let (Some((pid, p)), Some(a)) = (&self_proc, &by_torch) {
            causes.push(format!("The process named (PID {pid}) holds {p} and PyTorch allocated {a} of it: it is this training process itself, not another one; the job does not fit."));
        } else if let (Some(t), Some(r), Some(f)) = (&total, &reserved_total, &free) {
            let outside = t.bytes - r.bytes - f.bytes;
            if outside > 0.25 * t.bytes {
                causes.push(format!("About {} is used outside this process's PyTorch allocator (other processes, or CUDA context and libraries): check nvidia-smi.", Fig::computed(outside)));
                cmds.push(NVSMI_APPS.into());
            } else if by_torch.as_ref().is_some_and(|a| a.bytes >= 0.6 * t.bytes) {
                if let Some(a) = &by_torch {
                    causes.push(format!(
                        "This process's PyTorch already holds {a} of {t}: the job does not fit."
                    ));
                }
            }
        } else if !procs.is_empty() {
            causes.push(format!(
                "Other processes on this GPU hold a small share: {}.",
                named(procs)
            ));
        }
    }

    /// A cap the program set (torch.cuda.set_per_process_memory_fraction) below the GPU's memory:
    /// the text says the request was refused for it, or what PyTorch holds plus the request
    /// reaches it.
    fn fraction_causes(&self, causes: &mut Vec<String>) {
        let TorchOom {
            want,
            total,
            by_torch,
            reserved_total,
            allowed,
            limit,
            fraction_refused,
            ..
        } = self;
        let cap = allowed.as_ref().or(limit.as_ref()).filter(|c| {
            total.as_ref().is_none_or(|t| c.bytes < t.bytes)
                && reserved_total
                    .as_ref()
                    .or(by_torch.as_ref())
                    .is_some_and(|h| h.bytes + want.bytes > c.bytes)
        });
        let of = total
            .as_ref()
            .map(|t| format!(" of the GPU's {t}"))
            .unwrap_or_default();
        if let Some(c) = cap {
            causes.push(format!("The program capped PyTorch at {c}{of} (torch.cuda.set_per_process_memory_fraction), and this request would pass the cap: raise the fraction or make the job smaller."));
        } else if *fraction_refused {
            causes.push("The request would pass the per-process memory fraction the program set (torch.cuda.set_per_process_memory_fraction): raise the fraction or make the job smaller.".into());
        }
    }

    /// Fragmentation: memory reserved by PyTorch but unallocated, or more free than asked for.
    fn fragmentation_causes(&self, causes: &mut Vec<String>, cmds: &mut Vec<String>) {
        let TorchOom {
            want,
            total,
            free,
            by_torch,
            reserved_unalloc,
            ..
        } = self;
        // Reserved but unallocated: at least the request, or a fifth of the GPU or of what this
        // process reserved (PyTorch's own hint: "If reserved but unallocated memory is large try
        // setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation").
        let reserved = by_torch.as_ref().map(|a| a.bytes).unwrap_or(0.0)
            + reserved_unalloc.as_ref().map(|u| u.bytes).unwrap_or(0.0);
        if let Some(u) = reserved_unalloc.as_ref().filter(|u| {
            u.bytes > 0.0
                && (u.bytes >= want.bytes
                    || total.as_ref().is_some_and(|t| u.bytes >= 0.2 * t.bytes)
                    || u.bytes >= 0.2 * reserved)
        }) {
            causes.push(format!(
                "{u} is reserved by PyTorch but unallocated: the caching allocator is fragmented; expandable segments let it reuse that memory."
            ));
            cmds.push(EXPANDABLE.into());
        } else if free.as_ref().is_some_and(|f| f.bytes >= want.bytes) {
            causes.push("More memory is free than was asked for, yet no single free block was large enough (fragmentation, or memory the driver reserves on Windows/WDDM).".into());
            cmds.push(EXPANDABLE.into());
        }
    }
}

/// The processes, as "PID n (figure)".
fn named(v: &[(String, Fig)]) -> String {
    v.iter()
        .map(|(pid, f)| format!("PID {pid} ({f})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The figures of the other allocators' OOM texts, as printed: XLA's "RESOURCE_EXHAUSTED: Out of
/// memory while trying to allocate 33762398024 bytes." / "… allocate 16.00GiB"
/// (xla/service/gpu, openxla/xla), TensorFlow's BFC allocator "Allocator (GPU_0_bfc) ran out of
/// memory trying to allocate 1.17GiB" (tensorflow/core/common_runtime/bfc_allocator.cc), CuPy's
/// "Out of memory allocating 1,073,741,824 bytes (allocated so far: 4,294,967,296 bytes)"
/// (cupy/cuda/memory.pyx, OutOfMemoryError). The signature's name and id stand (code null).
fn oom_bytes(line: &str) -> Option<Match> {
    if let Some(x) = host_allocator_oom(line) {
        return Some(x);
    }
    const N: &str = r"([\d,]+(?:\.\d+)?) ?(bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|K|M|G)\b";
    let fig = |c: &regex::Captures, i: usize| -> Option<Fig> {
        let n = c.get(i)?.as_str();
        let unit = c.get(i + 1)?.as_str();
        let value: f64 = n.replace(',', "").parse().ok()?;
        let mult = match unit {
            "bytes" | "B" => 1.0,
            "KiB" | "KB" | "K" => 1024.0,
            "MiB" | "MB" | "M" => 1024.0 * 1024.0,
            "GiB" | "GB" | "G" => (1u64 << 30) as f64,
            "TiB" => 1024.0f64.powi(4),
            _ => return None,
        };
        let text = if unit == "bytes" || unit == "B" {
            format!("{n} bytes ({})", human(value))
        } else {
            format!("{n} {unit}")
        };
        Some(Fig {
            bytes: value * mult,
            text,
        })
    };
    let want = cached_regex(&format!(
        r"(?i)(?:trying to allocate|memory allocating) {N}"
    ))
    .and_then(|re| re.captures(line).and_then(|c| fig(&c, 1)))?;
    let so_far = cached_regex(&format!(r"(?i)allocated so far: {N}"))
        .and_then(|re| re.captures(line).and_then(|c| fig(&c, 1)));
    let limit = cached_regex(&format!(r"(?i)limit set to: {N}"))
        .and_then(|re| re.captures(line).and_then(|c| fig(&c, 1)));
    let mut facts = vec![format!("it asked for {want}")];
    let mut causes = Vec::new();
    if let Some(s) = &so_far {
        facts.push(format!("{s} were allocated so far"));
    }
    if let Some(l) = &limit {
        facts.push(format!("under a limit of {l}"));
        causes.push(format!("The allocator's own limit ({l}) is reached: raise it (CuPy: cupy.get_default_memory_pool().set_limit) or use less memory."));
    }
    let mut x = Match::new(
        "signature",
        serde_json::Value::Null,
        "",
        Category::GpuMemoryExhausted,
        format!(
            "The allocator could not get GPU memory: {}.",
            facts.join(", ")
        ),
    )
    .causes_owned(causes);
    x.key = format!("oom-bytes:{}", (want.bytes / 1e6).round());
    Some(x)
}

/// TensorFlow's "OOM when allocating tensor with shape[…] and type float on
/// /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu" and the BFC allocator's "Allocator
/// (cpu) ran out of memory" (tensorflow/core/framework/op_kernel.cc, common_runtime/bfc_allocator.cc):
/// the allocator named is the host's, so host memory ran out, not the GPU's.
fn host_allocator_oom(line: &str) -> Option<Match> {
    let dev = grab1(line, r"(?i)\bon /\S*device:(cpu):\d")
        .or_else(|| grab1(line, r"(?i)by allocator (cpu)\b"))
        .or_else(|| grab1(line, r"(?i)allocator \((cpu)\) ran out"))?;
    let x = Match::new(
        "signature",
        json!("tf-oom-host"),
        "Host memory exhausted (TensorFlow's CPU allocator)",
        Category::HostMemoryExhausted,
        "TensorFlow could not allocate a tensor on the CPU device: the allocator named is the host's (cpu), so the machine's RAM (or the container's memory limit) ran out, not the GPU's memory.",
    )
    .causes(&[
        "a tensor placed on the CPU (input pipeline, preprocessing, a model or op without a GPU kernel) larger than the free RAM",
        "the container's or job's memory limit (cgroup) below what the job needs",
    ])
    .fix(
        "Make the host-side tensors smaller (batch size, image size, dataset caching), or give the job more RAM:",
        &["free -h", "gpudoctor check"],
    )
    .key(format!("tf-oom-host:{}", dev.to_ascii_lowercase()));
    Some(x)
}

fn driver_too_old(line: &str, m: &dyn MatrixSource) -> Option<Match> {
    let raw = grab1(line, r"(?i)found version (\d+)")?;
    let n: i32 = raw.parse().ok()?;
    let v = CudaVersion::from_api(n)?;
    let d = DriverFacts {
        version: None,
        cuda: Some(v),
        os: Os::Linux,
    };
    let alt = best_torch(m.matrix()?, &d, &[]);
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

fn sm_incompatible(line: &str, m: &dyn MatrixSource) -> Option<Match> {
    let sm = grab1(line, r"(?i)capability (sm_\d+[af]?)")?.to_ascii_lowercase();
    let sm = sm.as_str();
    let (maj, min) = split_cc(sm)?;
    let m = m.matrix()?;
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

fn cudnn_loaded(line: &str) -> Option<Match> {
    let re = cached_regex(
        r"(?i)loaded runtime cudnn library:? ([\d.]+)(?: \(compatibility version \d+\))? but source was compiled with:? ([\d.]+)",
    )?;
    let c = re.captures(line)?;
    let loaded = cudnn_version_text(c.get(1)?.as_str())?;
    let built = cudnn_version_text(c.get(2)?.as_str())?;
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

fn missing_library(line: &str) -> Option<Vec<Match>> {
    // glibc's dlerror() names the file it could not open first ("%s: cannot open shared object
    // file: %s", dlfcn/dlerror.c): that one is missing, not the library that needed it
    // ("Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11:
    // cannot open shared object file").
    let lib = grab1(line, r"([\w.+-]+\.so[\d.]*): cannot open shared object file")
        .or_else(|| grab1(line, r"(?i)could not (?:load dynamic library|find|load library) '?([\w./+-]+?\.(?:so[\d.]*|dll))'?"))
        .or_else(|| grab1(line, r"(?i)error loading (?:shared library|\x22)?([\w./+-]+?\.(?:so[\d.]*|dll))"))
        .or_else(|| grab1(line, r"([\w./+-]*?(?:lib|cudnn|cudart|cublas|nvcuda|nvrtc|cufft|curand|cusolver|cusparse)[\w.+-]*?\.(?:so[\d.]*|dll))"))?;
    let lib = lib.trim();
    let base = lib.rsplit('/').next().unwrap_or(lib);
    // The driver's own libraries, and a Jetson host library the NVIDIA runtime mounts: one reading.
    let owner = if base.starts_with("libcuda.so")
        || base.starts_with("nvcuda")
        || base.starts_with("libnvidia-ml")
    {
        Some(("the NVIDIA driver's user-space library", Category::DriverMissing, "Install the NVIDIA driver (in a container: start it with GPU access, e.g. docker run --gpus all):", "gpudoctor check"))
    } else if is_l4t_host_library(base) {
        Some(("a Jetson (L4T) driver library that the NVIDIA Container Runtime mounts from the host", Category::ContainerNoGpu, "Start the container with the NVIDIA runtime, which mounts the host's L4T libraries (csv mode):", "docker run --runtime=nvidia ..."))
    } else {
        None
    };
    if let Some((what, cat, fix, cmd)) = owner {
        return Some(vec![not_found(base, what, cat, fix, vec![cmd.into()])]);
    }
    // A CUDA, cuDNN or TensorRT library the loader did not find: a library-path reading (the
    // file is not where the loader looks) and a version reading (installed only for another major
    // than the one the file name asks for). A CUDA library whose name carries its major
    // (libcudart.so.11.0, cublas64_12.dll) asks for that version: the version reading leads; for
    // cuDNN, TensorRT and unversioned names the path reading does (the joined sealed sets'
    // collectors, who had not read the catalog: cuDNN 12 path to 3 version, unversioned 6 to 1;
    // docs/decisions.md).
    let optional = base.starts_with("libnvinfer");
    let (version_cat, what, fix): (Category, &str, &str) = if base.starts_with("libcudnn")
        || base.starts_with("cudnn64")
    {
        (Category::CudnnMismatch, "cuDNN", "Install the cuDNN major the framework needs (pip: the nvidia-cudnn-cu12 wheel, or tensorflow[and-cuda]; Debian/Ubuntu: libcudnn8 / libcudnn9), or put its directory on the library path:")
    } else if optional {
        (
            Category::CudaRuntimeMismatch,
            "TensorRT (optional for TensorFlow)",
            "Only needed for TensorRT: pip install tensorrt, or ignore the warning.",
        )
    } else {
        (Category::CudaRuntimeMismatch, "a CUDA library", "Install the CUDA libraries of the version the framework was built for (pip: the nvidia-*-cu12 wheels / tensorflow[and-cuda]; or the CUDA toolkit), or add their directory to LD_LIBRARY_PATH:")
    };
    let (sev, cmds): (Severity, Vec<String>) = if optional {
        (Severity::Info, vec![])
    } else {
        (Severity::Error, vec!["gpudoctor check".into()])
    };
    let mut path =
        not_found(base, what, Category::LibraryPathConflict, fix, cmds.clone()).severity(sev);
    path.name = format!("{base} not found (not where the loader looks)");
    path.likely_causes = vec![format!("{base} is installed, but its directory is not on LD_LIBRARY_PATH / PATH or in the loader's cache.")];
    let mut version = not_found(base, what, version_cat, fix, cmds)
        .severity(sev)
        .key(format!("missing-lib-version:{base}"));
    version.name = format!("{base} not found (only another major version installed)");
    version.likely_causes = vec![format!("{base} is installed only for another major version than the one asked for (the number in its name says which).")];
    let version_first =
        version_cat == Category::CudaRuntimeMismatch && !optional && names_a_major(base);
    let (first, mut second) = if version_first {
        (version, path)
    } else {
        (path, version)
    };
    second.rank = 60;
    second.confidence = "low";
    Some(vec![first, second])
}

/// Whether a library file name carries the major version it asks for: "libcudart.so.11.0",
/// "libcublas.so.12", "cudart64_110.dll", "cublas64_12.dll" (not "libnvrtc.so", "cudart.dll").
fn names_a_major(base: &str) -> bool {
    if let Some((_, after)) = base.split_once(".so.") {
        return after.starts_with(|c: char| c.is_ascii_digit());
    }
    base.strip_suffix(".dll")
        .and_then(|stem| stem.rsplit_once('_'))
        .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The reading of a library the loader could not open: `base` (`what`) under `cat`.
fn not_found(base: &str, what: &str, cat: Category, fix: &str, cmds: Vec<String>) -> Match {
    Match::new("signature", json!(base), format!("{base} not found"), cat, format!("{base} ({what}) could not be loaded: it is not installed, or not on the library search path."))
        .causes_owned(vec![format!("{base} is missing, or is installed for another major version than the one asked for.")])
        .fix_owned(fix, cmds)
        .key(format!("missing-lib:{base}"))
}

/// PyTorch's warning that a GPU's compute capability is outside its build's range
/// (torch/cuda/__init__.py, `_check_capability`: "Found GPU%d %s which is of cuda capability
/// %d.%d. Minimum and Maximum cuda capability supported by this version of PyTorch is (%d.%d) -
/// (%d.%d)"). A GPU of the newest major with a higher minor runs that major's binaries (CUDA's
/// binary compatibility: a cubin for X.y runs on X.z, z >= y; CUDA C++ Programming Guide,
/// "Binary Compatibility"), so that warning is no fault: `Some(empty)`. Otherwise the catalog's
/// text stands (`None`).
fn cc_range(line: &str) -> Option<Vec<Match>> {
    let found = grab1(line, r"(?i)cuda capability (\d+\.\d+)")?;
    let max = grab1(line, r"\(\d+\.\d+\)\s*-\s*\((\d+\.\d+)\)")?;
    let min = grab1(line, r"\((\d+\.\d+)\)\s*-\s*\(\d+\.\d+\)")?;
    let (f, lo, hi) = (split_cc(&found)?, split_cc(&min)?, split_cc(&max)?);
    let inside = f >= lo && f <= hi;
    let same_major_newer = f.0 == hi.0 && f.1 > hi.1;
    (inside || same_major_newer).then(Vec::new)
}

/// A Jetson driver library that lives only on the L4T host, which the NVIDIA Container Runtime
/// mounts into a container in csv mode (nvidia-container-toolkit's host-files-for-container.d
/// drivers.csv at d34b304: libnvdla_compiler.so, libnvrm_gpu.so, libnvos.so, ...): missing in a
/// container, the container was started without that runtime.
fn is_l4t_host_library(base: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "libnvdla_",
        "libnvrm_",
        "libnvos.so",
        "libnvcudla",
        "libnvidia-rmapi-tegra",
        "libnvmedia",
        "libnvsci",
        "libnvtegrahv",
        "libnvsocsys",
        "libnvbufsurf",
        "libnvbuf_fdmap",
        "libnvdc.so",
        "libnvimp.so",
        "libnvvic.so",
        "libnvtvmr",
        "libnvpva",
    ];
    PREFIXES.iter().any(|p| base.starts_with(p))
}

fn nccl(line: &str) -> Option<Match> {
    // The ncclResult_t's name ("ncclSystemError: System call ... failed") names its text as
    // ncclGetErrorString prints it (knowledge/nccl.yaml).
    let by_name = grab1(line, r"\b(nccl[A-Z][A-Za-z]+(?:Error|Argument|Usage))\b").and_then(|n| {
        crate::knowledge::codes::emitter("nccl")?
            .entries
            .iter()
            .find(|c| c.name == n && !c.text.is_empty())
            .map(|c| c.text.to_ascii_lowercase())
    });
    let what = match by_name {
        Some(w) => w,
        None => grab1(line, r"(?i)nccl.*?(unhandled cuda error|unhandled system error|internal error|invalid argument|invalid usage|remote process exited or there was a network error)")?.to_ascii_lowercase(),
    };
    let (causes, fix, cmds): (&[&str], &str, &[&str]) = match what.as_str() {
        "unhandled cuda error" => (&["a CUDA call inside NCCL failed: a GPU fault (check the kernel log for Xids), out of GPU memory, or an NCCL built for another CUDA than the driver supports"], "Rerun with NCCL_DEBUG=INFO to see the CUDA error; run gpudoctor check on each node:", &["export NCCL_DEBUG=INFO", "gpudoctor check"]),
        "unhandled system error" => (&["shared memory too small in a container (/dev/shm): start it with --ipc=host or a larger --shm-size", "a network interface problem (set NCCL_SOCKET_IFNAME)", "InfiniBand/RDMA misconfiguration"], "Rerun with NCCL_DEBUG=INFO; in Docker use --ipc=host (or --shm-size):", &["export NCCL_DEBUG=INFO", "docker run --ipc=host ..."]),
        "remote process exited or there was a network error" => (&["another rank died (look at its log first)", "a network or interface problem between nodes"], "Find the first rank that failed; check the network (NCCL_SOCKET_IFNAME):", &["export NCCL_DEBUG=INFO"]),
        _ => (&["an NCCL internal or usage error"], "Rerun with NCCL_DEBUG=INFO for details:", &["export NCCL_DEBUG=INFO"]),
    };
    // The category is the ncclResult_t's whose ncclGetErrorString text this is, from its one
    // home (knowledge/nccl.yaml: ncclSystemError is an OS or network call failing, a setting of
    // the machine; ncclUnhandledCudaError does not say which CUDA call failed or why).
    let category = crate::knowledge::codes::emitter("nccl")
        .and_then(|e| {
            e.entries
                .iter()
                .find(|c| c.text.eq_ignore_ascii_case(&what))
        })
        .map(|c| c.category)
        .unwrap_or(Category::ApplicationError);
    Some(
        Match::new(
            "signature",
            json!(what),
            format!("NCCL error: {what}"),
            category,
            format!("NCCL (the multi-GPU communication library) failed: {what}."),
        )
        .causes(causes)
        .fix(fix, cmds)
        .key(format!("nccl:{what}")),
    )
}

fn exit_code(line: &str) -> Option<Match> {
    // DeepSpeed's launcher puts spaces around its "=" (deepspeed/launcher/launch.py at edaa722,
    // line 341: "{cmd} exits with return code = {last_return_code}").
    let raw = grab1(line, r"(?i)(?:exit(?:ed)? (?:with )?(?:code|status)|return code|returned|exit_code) ?[:=]? ?\(?(-?\d+|0x[0-9a-f]+)")
        .or_else(|| grab1(line, r"\((0[xX][cC][0-9A-Fa-f]{7})\)"))
        .or_else(|| grab1(line, r"(?i)exception code: (0x[0-9a-f]{8})"))?;
    let raw = raw.as_str();
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

/// The Xid of a line, and the earlier Xid it names ("Xid 45 ... caused by previous Xid 149"),
/// which is the one to act on.
fn xid_readings(line: &str) -> Option<Vec<Match>> {
    let mut v: Vec<Match> = xid(line).into_iter().collect();
    // A number NVIDIA's Xid catalog does not have, outside the driver's own "NVRM: Xid (PCI:...)"
    // form, is some other "XID" (a Realtek NIC prints its chip's "XID 641" at boot), not an Xid.
    if v.is_empty()
        && !line.contains("NVRM")
        && !line.to_ascii_lowercase().contains("xid (pci")
        && xid_number(line).is_some_and(|n| crate::faults::xid::lookup(n).is_none())
    {
        return Some(Vec::new());
    }
    if let Some(n) = grab1(line, r"(?i)previous xid (\d+)").and_then(|n| n.parse::<u32>().ok()) {
        if let Some(mut m) = codes::xid_match(n, "high") {
            m = m.key(format!("xid:{n}"));
            m.rank = 0;
            v.insert(0, m);
        }
    }
    // Xids whose cause is as often the power, the heat or the firmware as the GPU itself.
    let alt = |x: u32, cat: Category, why: &str| {
        let mut m = Match::new(
            "signature",
            json!(format!("xid-{x}")),
            format!("Xid {x} (less often: {})", cat.as_str()),
            cat,
            format!("Xid {x} can also come from {}: {why}", cat.as_str()),
        )
        .key(format!("alt:xid{x}:{}", cat.as_str()))
        .fix(
            "Read the GPU's power, temperature and throttle state, and the kernel log before the Xid:",
            &[
                "nvidia-smi -q -d POWER,TEMPERATURE,PERFORMANCE",
                "sudo dmesg -T | grep -E 'NVRM|Xid' | tail -40",
            ],
        );
        m.rank = 40;
        m.confidence = "low";
        m
    };
    for n in v.iter().filter_map(|m| m.code.as_u64()).collect::<Vec<_>>() {
        match n {
            79 => v.push(alt(79, Category::ThermalPower, "a GPU at its power limit or too hot drops off the bus; check the power cabling, the PSU and the temperatures before it fell (nvidia-smi -q -d POWER,TEMPERATURE)")),
            62 => v.push(alt(62, Category::DriverFault, "a GSP or PMU firmware fault in the driver; if it follows a driver upgrade, try another driver branch")),
            _ => {}
        }
    }
    (!v.is_empty()).then_some(v)
}

/// The number after "Xid" in a line ("Xid 79", "Xid (PCI:0000:01:00): 79", "xid=13").
fn xid_number(line: &str) -> Option<u32> {
    grab1(line, r"(?i)\bxid\b\s*(?:\([^)]*\))?\s*[:=]?\s*(\d+)")?
        .parse()
        .ok()
}

fn xid(line: &str) -> Option<Match> {
    let n = xid_number(line)?;
    let mut m = codes::xid_match(n, "high")?.key(format!("xid:{n}"));
    // An Xid that follows another (45: preemptive cleanup) or that an application causes ranks
    // below the faults that cause them.
    m.rank = match crate::faults::xid::lookup(n).map(|i| i.level) {
        Some(crate::faults::xid::Level::Info) => 45,
        Some(crate::faults::xid::Level::App) => 68,
        _ => 0,
    };
    Some(m)
}

/// A library's status name in the line (CUDNN_STATUS_ALLOC_FAILED, CUSOLVER_STATUS_INTERNAL_ERROR,
/// CUFFT_ALLOC_FAILED), read as that status's one home says (knowledge/cudnn.yaml, cusolver.yaml,
/// cusparse.yaml, curand.yaml, cufft.yaml: its category, causes and fix), not as the signature's
/// generic reading.
fn library_status(line: &str) -> Option<Match> {
    let name = grab1(
        line,
        r"(?i)\b((?:cudnn|cusolver|cusparse|curand)_status_[a-z0-9_]+|cufft_[a-z0-9_]+)",
    )?
    .to_ascii_uppercase();
    codes::parse(&name, &Matrix::default())?
        .into_iter()
        .find(|m| m.kind == "library_status")
        .map(|m| m.key(format!("status:{name}")))
}

/// A CUDA or CUDA-library status checked against its success value by glog's `CHECK_EQ`
/// ("Check failed: error == cudaSuccess (700 vs. 0)"), read as that code's one home says.
fn checked_status(line: &str) -> Option<Match> {
    let caps = cached_regex(
        r"(?i)==\s*(cudasuccess|cublas_status_success|cudnn_status_success)\s*\(\s*(-?\d+)\s+vs\.\s*0\s*\)",
    )?
    .captures(line)?;
    let lib = caps.get(1)?.as_str().to_ascii_lowercase();
    let n: i64 = caps.get(2)?.as_str().parse().ok()?;
    let m = codes::checked_status(&lib, n, line)?;
    let k = format!("checked:{lib}:{}", m.code);
    Some(m.key(k))
}

fn cuda_text(line: &str) -> Option<Match> {
    codes::cuda_by_text(line).map(|m| {
        let k = format!("cuda:{}", m.code);
        m.key(k)
    })
}

/// A kernel-log event as knowledge/kernel-events.yaml says it (an Xid as knowledge/xid.yaml
/// says it), named by its emitter and the source of its message family.
fn kernel_event(ev: &LogEvent, line: &str) -> Vec<Match> {
    if let LogEvent::Xid { xid, bus_id, .. } = ev {
        return xid_event(*xid, bus_id.as_deref());
    }
    let Some((k, title, text)) = crate::knowledge::kernel::describe(ev) else {
        return Vec::new();
    };
    let mut m = Match::new("signature", json!(k.id), title, k.category, text)
        .causes(&k.causes)
        .fix(&k.fix, &k.commands)
        .severity(k.severity)
        .key(ev.key());
    if let Some(r) = k.rank {
        m.rank = r;
    }
    if let Some(f) = crate::knowledge::linux::family(&k.id) {
        // A family of the Linux kernel's messages: its rank, and where its format is.
        m.rank = f.rank;
        m.emitter = Some(match crate::knowledge::linux::match_line(line) {
            Some((msg, _)) => format!("linux ({})", msg.source.join(", ")),
            None => format!("linux ({})", k.sources.join("; ")),
        });
    } else if let Some((_, f)) = crate::knowledge::kernel::match_line(line) {
        m.emitter = Some(format!("{} ({})", f.emitter, f.source.join(", ")));
    } else if let Some(f) = k.families.first() {
        m.emitter = Some(f.emitter.clone());
    } else if let Some(msg) = crate::knowledge::kernel::match_message(line) {
        // A message family of the driver (knowledge/kernel-messages.yaml): known by its family
        // only, so less sure than an event's own text.
        m.emitter = Some(format!("nvidia-kernel-driver ({})", msg.source));
        m.confidence = "low";
    }
    vec![m]
}

/// An Xid the kernel-log parser read: reported under its own number.
fn xid_event(xid: u32, bus_id: Option<&str>) -> Vec<Match> {
    codes::xid_match(xid, "high")
        .map(|m| m.key(format!("xid:{xid}:{}", bus_id.unwrap_or("?"))))
        .into_iter()
        .collect()
}

#[cfg(test)]
#[path = "signatures_tests.rs"]
mod tests;
