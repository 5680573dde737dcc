//! `health.memory`: ECC errors, retired pages, row remapping, the driver's recovery action and
//! the InfoROM, judged with DCGM's and NVIDIA's thresholds (../shared/reference/faults.md §3).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::faults::xid::recovery_action;
use crate::vocab::{Area, Category, Finding, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "health.memory",
        category: Category::EccMemory,
        area: Area::Gpus,
        summary: "GPU memory errors: uncorrectable ECC, retired pages, row-remap pending or failed, recovery action, InfoROM",
    },
    check,
};

/// DCGM_LIMIT_MAX_RETIRED_PAGES (DCGM common/DcgmGPUHardwareLimits.h; faults.md §3c).
const MAX_RETIRED_PAGES: u64 = 63;
/// DCGM: uncorrectable row remaps at or above 512 warn (faults.md §3d; NV-MEM: up to 512).
const MAX_UNCORRECTABLE_REMAPS: u32 = 512;
const NV_MEM: &str = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html";

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in ctx.snap.gpu_list() {
        let Some(h) = g.health.get() else { continue };
        let label = g.label();
        let mut push = |sev: Severity,
                        cat: Category,
                        title: String,
                        detail: String,
                        fix: &str,
                        cmds: &[&str],
                        ev: serde_json::Value| {
            let mut f = doc
                .finding(sev, title, detail)
                .fix(fix, cmds)
                .evidence(ev)
                .on_gpu(g.index)
                .link(NV_MEM);
            f.category = cat;
            out.push(f);
        };
        let reset_cmds = [
            format!(
                "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER -i {}",
                g.index
            ),
            format!(
                "sudo nvidia-smi -r -i {}   # with no process on the GPU",
                g.index
            ),
        ];
        let reset: &[&str] = &[reset_cmds[0].as_str(), reset_cmds[1].as_str()];
        if let Some(e) = &h.ecc {
            if e.volatile_uncorrected.unwrap_or(0) > 0 {
                push(Severity::Error, Category::EccMemory, format!("{label}: {} uncorrectable ECC error(s) since the driver loaded", e.volatile_uncorrected.unwrap_or(0)),
                    "Volatile uncorrectable (double-bit) ECC errors: data on this GPU may be corrupt. DCGM fails the GPU on any (drain the GPU and reset it or reboot the node).".into(),
                    "Drain the GPU, then reset it or reboot; if errors return, run field diagnostics:", reset, json!({"ecc": e}));
            }
            if e.aggregate_uncorrected_sram.unwrap_or(0) > 0 {
                push(Severity::Error, Category::EccMemory, format!("{label}: uncorrectable SRAM ECC errors ({})", e.aggregate_uncorrected_sram.unwrap_or(0)),
                    "Uncorrectable errors in on-chip SRAM over the GPU's lifetime; Azure's health checks fail a GPU on any.".into(),
                    "Run NVIDIA field diagnostics and contact the vendor about an RMA.", &[], json!({"ecc": e}));
            }
        }
        if let Some(r) = &h.retired_pages {
            let total = r.single_bit + r.double_bit;
            if total >= MAX_RETIRED_PAGES {
                push(Severity::Error, Category::EccMemory, format!("{label}: {total} retired memory pages (limit {MAX_RETIRED_PAGES})"),
                    format!("{} pages retired for single-bit and {} for double-bit errors; DCGM fails a GPU at {MAX_RETIRED_PAGES} (at most 64 can be retired).", r.single_bit, r.double_bit),
                    "Run field diagnostics and start an RMA.", &[], json!({"retired_pages": r}));
            }
            if r.pending {
                push(Severity::Warning, Category::EccMemory, format!("{label}: a page retirement is pending until the GPU is reset"),
                    "A memory page was marked for retirement; it takes effect only after a driver reload or GPU reset (DCGM: monitor; drain and reset if double-bit errors are also pending).".into(),
                    "Reset the GPU when no job runs on it:", reset, json!({"retired_pages": r}));
            }
        }
        if let Some(r) = &h.remapped_rows {
            if r.failure {
                push(Severity::Error, Category::EccMemory, format!("{label}: row remapping failed"),
                    "The GPU could not remap a failing memory row (a bank ran out of spares, or the row was already remapped). NVIDIA treats this as an RMA criterion once field diagnostics confirm it; DCGM says: reset the GPU or reboot now.".into(),
                    "Reset the GPU or reboot now, run field diagnostics, and start an RMA:", reset, json!({"remapped_rows": r}));
            }
            if r.pending {
                push(Severity::Warning, Category::EccMemory, format!("{label}: a memory row remap is pending until the GPU is reset"),
                    "A row was marked for remapping after a memory error; it takes effect at the next GPU reset. Running jobs are unaffected (Azure's health check fails the node until then).".into(),
                    "Reset the GPU when convenient:", reset, json!({"remapped_rows": r}));
            }
            if r.uncorrectable >= MAX_UNCORRECTABLE_REMAPS {
                push(Severity::Warning, Category::EccMemory, format!("{label}: {} rows remapped for uncorrectable errors", r.uncorrectable),
                    format!("At or above DCGM's warning level of {MAX_UNCORRECTABLE_REMAPS} uncorrectable-error remaps."),
                    "Run field diagnostics.", &[], json!({"remapped_rows": r}));
            }
            if let Some(n) = r.banks_without_spares.filter(|n| *n > 0) {
                push(Severity::Warning, Category::EccMemory, format!("{label}: {n} memory bank(s) have no spare rows left"),
                    "Another uncorrectable error in these banks cannot be remapped and becomes a remap failure (NVIDIA GPU memory error management).".into(),
                    "Watch this GPU closely; run field diagnostics.", &[], json!({"remapped_rows": r}));
            }
        }
        if let Some(a) = h.recovery_action.filter(|a| *a != 0) {
            let (what, level) = recovery_action(a);
            push(level.severity(), Category::HardwareFault, format!("{label}: the driver asks for recovery: {what}"),
                format!("NVML's GPU recovery action is {a} ({what}); DCGM fails a GPU with any recovery action pending."),
                "Do what the driver asks (drain, then reset the GPU or reboot):", reset, json!({"recovery_action": a, "meaning": what}));
        }
        if h.inforom_valid == Some(false) {
            push(Severity::Warning, Category::HardwareFault, format!("{label}: the InfoROM is corrupt"),
                "NVML reports the InfoROM image invalid (NVML_ERROR_CORRUPTED_INFOROM); ECC and retirement history may be lost. DCGM warns: flash the InfoROM.".into(),
                "Contact the vendor to reflash the InfoROM.", &[], json!({"inforom_valid": false}));
        }
    }
    out
}

#[cfg(test)]
#[path = "health_memory_tests.rs"]
pub(super) mod tests;
