//! The Linux kernel's own kernel-log messages (knowledge/linux-messages.yaml): the formats of the
//! oops and BUG reports, the hung-task and lockup detectors, the module loader, PCI power states,
//! PCIe bandwidth and AER, vfio, the OOM killer, CPU thermal throttling and machine checks, mined
//! from the kernel's source as Debian ships it (scripts/knowledge/linux_mine.py), each with its
//! family: category, role, scope and fix.
//!
//! A family's scope says when a line of it is a GPU problem: always (`any`); when the line names
//! an NVIDIA module (`nvidia_module`: "nvidia: Unknown symbol ..."; another module's failure is no
//! GPU problem); when it names a GPU's driver (`gpu_module`: NVIDIA's, amdgpu, radeon, i915, xe);
//! or when the report it heads names a GPU driver's code (`gpu_report`: an oops, a hung task, a
//! lockup; [`crate::faults::logparse::LogParser`] reads the report's lines together). A line that
//! is no GPU problem is known and no fault: it is never read as one.

use std::sync::OnceLock;

use serde::Deserialize;

use super::events::{in_order, Event, Role};
use crate::vocab::{Area, Category, Severity};

const LINUX_JSON: &str = knowledge_json!("linux-messages");

/// When a line of a family is a GPU problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Any,
    NvidiaModule,
    GpuModule,
    GpuReport,
}

impl Scope {
    /// Whether a line of a family of this scope is about the GPU's driver by itself (`Any`
    /// always); for `GpuReport`, whether the line names a GPU driver's code.
    pub fn names_its_driver(self, line: &str) -> bool {
        match self {
            Scope::Any => true,
            Scope::NvidiaModule => names_nvidia_module(line),
            Scope::GpuModule => names_gpu_module(line),
            Scope::GpuReport => names_gpu_code(line),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LinuxRole {
    Cause,
    Notice,
    Report,
}

#[derive(Debug, Deserialize)]
struct FamilySpec {
    id: String,
    title: String,
    text: String,
    category: Category,
    severity: Severity,
    area: Area,
    role: LinuxRole,
    scope: Scope,
    rank: u8,
    causes: Vec<String>,
    fix: String,
    commands: Vec<String>,
    sources: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct FileSpec {
    emitter: String,
    mined_formats: usize,
    families: Vec<FamilySpec>,
    entries: Vec<LinuxMessage>,
}

/// A family of the kernel's messages, described as a kernel-log event.
#[derive(Debug)]
pub struct LinuxFamily {
    pub event: Event,
    pub scope: Scope,
    /// Where its reading stands among the causes `explain` ranks.
    pub rank: u8,
    /// The head of a multi-line report (an oops, a hung task, a lockup).
    pub report: bool,
}

/// One mined format (or a cited wording of an older release) of the kernel.
#[derive(Debug, Deserialize)]
pub struct LinuxMessage {
    pub family: String,
    /// file:line (Linux release) in the pinned source, or the citation of an older release.
    pub source: Vec<String>,
    pub level: String,
    pub format: String,
    /// The format's literal pieces, in order.
    pub pieces: Vec<String>,
    pub versions: String,
}

impl LinuxMessage {
    fn literal_len(&self) -> usize {
        self.pieces.iter().map(String::len).sum()
    }
    /// The piece a line is first looked for by: the longest.
    pub fn anchor(&self) -> Option<&str> {
        self.pieces
            .iter()
            .max_by_key(|p| p.len())
            .map(String::as_str)
    }
}

/// The kernel's messages and their families, and the search index over their anchors.
pub struct LinuxKnowledge {
    pub emitter: String,
    pub mined_formats: usize,
    pub families: Vec<LinuxFamily>,
    pub entries: Vec<LinuxMessage>,
    index: aho_corasick::AhoCorasick,
    /// `owners[i]`: the entries whose anchor is pattern i.
    owners: Vec<Vec<usize>>,
}

impl std::fmt::Debug for LinuxKnowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinuxKnowledge")
            .field("families", &self.families.len())
            .field("entries", &self.entries.len())
            .finish()
    }
}

fn load() -> Option<LinuxKnowledge> {
    let spec: FileSpec = serde_json::from_str(LINUX_JSON).ok()?;
    let families = spec
        .families
        .into_iter()
        .map(|f| LinuxFamily {
            report: f.role == LinuxRole::Report,
            scope: f.scope,
            rank: f.rank,
            event: Event {
                id: f.id,
                title: f.title,
                text: f.text,
                category: f.category,
                severity: f.severity,
                area: f.area,
                causes: f.causes,
                fix: f.fix,
                commands: f.commands,
                sources: f.sources,
                families: Vec::new(),
                rank: Some(f.rank),
                role: match f.role {
                    LinuxRole::Notice => Role::Notice,
                    LinuxRole::Cause | LinuxRole::Report => Role::Cause,
                },
            },
        })
        .collect();
    let mut keys: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<usize>> = Vec::new();
    for (i, e) in spec.entries.iter().enumerate() {
        let Some(a) = e.anchor() else { continue };
        match keys.iter().position(|k| k == a) {
            Some(j) => {
                if let Some(o) = owners.get_mut(j) {
                    o.push(i);
                }
            }
            None => {
                keys.push(a.to_string());
                owners.push(vec![i]);
            }
        }
    }
    let index = aho_corasick::AhoCorasick::new(&keys).ok()?;
    Some(LinuxKnowledge {
        emitter: spec.emitter,
        mined_formats: spec.mined_formats,
        families,
        entries: spec.entries,
        index,
        owners,
    })
}

/// The built-in knowledge (None only if the built-in file is broken; a test loads it).
pub fn knowledge() -> Option<&'static LinuxKnowledge> {
    static K: OnceLock<Option<LinuxKnowledge>> = OnceLock::new();
    K.get_or_init(load).as_ref()
}

/// A family by its id.
pub fn family(id: &str) -> Option<&'static LinuxFamily> {
    knowledge()?.families.iter().find(|f| f.event.id == id)
}

/// The anchors of every message (their longest literal piece), for the catalog's prefilter.
pub fn anchors() -> Vec<&'static str> {
    let Some(k) = knowledge() else {
        return Vec::new();
    };
    let mut v: Vec<&str> = k.entries.iter().filter_map(LinuxMessage::anchor).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The most specific message of the kernel that `line` holds (its pieces in order), with its
/// family.
pub fn match_line(line: &str) -> Option<(&'static LinuxMessage, &'static LinuxFamily)> {
    let k = knowledge()?;
    let mut best: Option<&LinuxMessage> = None;
    for hit in k.index.find_overlapping_iter(line) {
        for &i in k
            .owners
            .get(hit.pattern().as_usize())
            .map_or(&[][..], Vec::as_slice)
        {
            let Some(e) = k.entries.get(i) else { continue };
            if best.is_some_and(|b| b.literal_len() >= e.literal_len()) {
                continue;
            }
            if in_order(&e.pieces, line) {
                best = Some(e);
            }
        }
    }
    let m = best?;
    Some((m, family(&m.family)?))
}

/// Whether a line names an NVIDIA kernel module: a word that starts with "nvidia"
/// ("nvidia:", "nvidia_uvm:", "from proprietary module nvidia."), a module in brackets
/// ("[nvidia]", "[nvidia_drm]"), or nv_peer_mem, GPUDirect RDMA's peer-memory module before the
/// driver's own nvidia_peermem replaced it (Mellanox/nv_peer_memory, which links against
/// nvidia.ko's nvidia_p2p_* and the InfiniBand core).
pub fn names_nvidia_module(line: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(|w| w.starts_with("nvidia") || w.starts_with("NVIDIA") || w == "nv_peer_mem")
}

/// The kernel drivers of other GPUs than NVIDIA's whose lines and reports are GPU problems too
/// (drivers/gpu/drm/: AMD's, Intel's; nouveau is read apart, see [`printed_by_nouveau`]).
const OTHER_GPU_DRIVERS: [&str; 4] = ["amdgpu", "radeon", "i915", "xe"];

/// Whether a line names a GPU's kernel driver: NVIDIA's module ([`names_nvidia_module`]) or
/// another GPU's ("amdgpu 0000:03:00.0: Direct firmware load for amdgpu/psp_13_0_7_ta.bin ...",
/// "i915 0000:00:02.0: ...").
pub fn names_gpu_module(line: &str) -> bool {
    names_nvidia_module(line)
        || line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .any(|w| OTHER_GPU_DRIVERS.contains(&w))
}

/// Whether a line of a kernel report names a GPU driver's code: NVIDIA's
/// ([`names_nvidia_code`]), another GPU driver's module in brackets ("[amdgpu]", "[i915]",
/// "[nouveau]"), the memory managers and scheduler GPU drivers share ("[ttm]", "[drm]",
/// "[drm_kms_helper]", "[gpu_sched]"), or a source path under drivers/gpu/. The module list does
/// not count.
pub fn names_gpu_code(line: &str) -> bool {
    if line.contains("Modules linked in") {
        return false;
    }
    names_nvidia_code(line)
        || line.contains("drivers/gpu/")
        || OTHER_GPU_DRIVERS
            .iter()
            .chain(&["nouveau", "ttm", "drm", "drm_kms_helper", "gpu_sched"])
            .any(|m| line.contains(&format!("[{m}]")))
}

/// Whether nouveau printed the line (its device prefix: "nouveau 0000:01:00.0: Direct firmware
/// load for nvidia/ga102/gsp/... failed"): such a line is nouveau's whatever path it names, and
/// nouveau holding the GPU is its reading (knowledge/kernel-events.yaml, catalog signature
/// nouveau-conflict), not a Linux family scoped to the NVIDIA module.
pub fn printed_by_nouveau(line: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(|w| w == "nouveau")
}

/// Whether a line of a kernel report names NVIDIA code: a module in brackets ("[nvidia]",
/// "[nvidia_uvm]", "[nvidia_drm]", "[nvidia_modeset]"), a source path or object of the driver
/// ("kernel-open/nvidia-uvm/uvm_mmu.c", "'nvidia_stack_cache'"), or a stack frame or RIP whose
/// symbol is the driver's ("nvkms_*", "_nv012345rm", "os_*", "rm_*", "nv_*", "uvm_*",
/// "nvUvm*" followed by "+0x"). Process names ("nvidia-smi") do not count.
pub fn names_nvidia_code(line: &str) -> bool {
    // The module list names every module loaded, not the one that failed.
    if line.contains("Modules linked in") {
        return false;
    }
    if line.contains("[nvidia")
        || line.contains("/nvidia")
        || line.contains("'nvidia")
        || line.contains("nvidia.ko")
        || line.contains("nvidia_")
    {
        return true;
    }
    nvidia_frame_symbol(line)
}

/// A frame "symbol+0x12/0x40" whose symbol is one of the driver's.
fn nvidia_frame_symbol(line: &str) -> bool {
    line.match_indices("+0x").any(|(i, _)| {
        let before = line.get(..i).unwrap_or("");
        let sym = before
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .next()
            .unwrap_or("");
        driver_symbol(sym)
    })
}

/// The driver's symbol names: nvkms_*, nvUvm*, _nvNNNNNNrm (the proprietary RM's obfuscated
/// symbols), and the RM's OS layer (os_*, rm_*, nv_*, uvm_*).
fn driver_symbol(sym: &str) -> bool {
    let obfuscated = sym
        .strip_prefix("_nv")
        .and_then(|r| r.strip_suffix("rm"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    obfuscated
        || [
            "nvkms_", "nvUvm", "nvidia_", "os_", "rm_", "nv_", "uvm_", "_nv_",
        ]
        .iter()
        .any(|p| sym.starts_with(p))
}

/// Whether a line is a line of a kernel report (a stack frame, the RIP line, the Call Trace
/// header, the registers): what a report's lines look like, so that the lines of another log
/// between are not read as its own.
pub fn is_report_line(line: &str) -> bool {
    line.contains("+0x")
        || line.contains("Call Trace")
        || line.contains("RIP:")
        || line.contains("RSP:")
        || line.contains("Modules linked in")
        || line.contains("Tainted:")
        || line.contains("Hardware name:")
        || line.contains("CPU:")
        || line.contains("task:")
}

#[cfg(test)]
#[path = "linux_tests.rs"]
mod tests;
