//! Rules: pure functions from the snapshot (and the matrix) to findings. One rule per file; each
//! documents itself (what it checks, why, the fix: its prose in `rules-text/rules.yaml`), which
//! `gpudoctor rules` lists and `explain --rule` prints. Compatibility rules join from the matrix and health rules from the
//! fault detection, through the same [`Rule`] registry.

mod compat_arch;
mod compat_cudnn;
mod compat_driver;
mod compat_forward;
mod compat_runtime;
mod container_no_gpu;
mod cpu_only_build;
mod cuda_visible_devices;
mod debug_injection;
mod device_permissions;
mod driver_library_mismatch;
mod driver_missing;
mod driver_module_flavor;
mod expected_gpus;
mod fabric_manager;
mod faults_kernel_log;
mod faults_xid;
mod gpu_memory_held;
mod health_config;
mod health_lost;
mod health_memory;
mod health_nvlink;
mod health_pcie;
mod health_throttle;
mod host_tegra;
mod kernel_log_unreadable;
mod library_path_conflict;
mod matrix_stale;
pub(crate) mod nvml_failed;
mod policy_thresholds;
pub mod policy_waiver_expired;
mod probe_crashed;
mod probe_timeout;
mod smoke_failed;
mod smoke_pcie;
mod stress_compute;
mod stress_memory;
mod stress_run;
mod stress_watch;
mod stub_libcuda;
#[cfg(test)]
#[path = "testkit_tests.rs"]
mod testkit;
mod texts;
mod unloadable_library;
mod windows_adapter;
pub mod windows_fixes;
mod windows_tdr;

use crate::matrix::Matrix;
pub use crate::snapshot::unprobed;
use crate::snapshot::Snapshot;
pub use crate::vocab::{gib, RuleDoc};
use crate::vocab::{Finding, Fix, Severity};

/// The rule's prose, from `rules-text/rules.yaml` (empty where the file lacks the rule, which a
/// test forbids).
impl RuleDoc {
    /// What the rule checks.
    pub fn what(&self) -> &'static str {
        texts::of(self.id).map_or("", |t| t.what.as_str())
    }

    /// Why it matters: what a user sees when it fires.
    pub fn why(&self) -> &'static str {
        texts::of(self.id).map_or("", |t| t.why.as_str())
    }

    /// The fix, in general; each finding carries its own.
    pub fn fix(&self) -> &'static str {
        texts::of(self.id).map_or("", |t| t.fix.as_str())
    }
}

pub struct Rule {
    pub doc: RuleDoc,
    pub check: fn(&Context, &RuleDoc) -> Vec<Finding>,
}

/// Options that change what rules expect.
#[derive(Debug, Clone, Default)]
pub struct RuleOptions {
    /// `--expect-gpus N` (or the policy's).
    pub expect_gpus: Option<u32>,
    /// A `--policy` file's limits for this node.
    pub min_driver: Option<String>,
    pub max_temperature_c: Option<u32>,
    pub max_ecc_uncorrected: Option<u64>,
}

pub struct Context<'a> {
    pub snap: &'a Snapshot,
    pub matrix: &'a Matrix,
    pub opts: &'a RuleOptions,
}

impl Context<'_> {
    /// The driver version from the best source: kernel module, /sys, NVML, libcuda's file name.
    pub fn driver_version(&self) -> Option<String> {
        let d = &self.snap.driver;
        d.kernel_version()
            .map(str::to_string)
            .or_else(|| d.nvml.get().and_then(|n| n.driver_version.clone()))
            .or_else(|| d.libcuda.get().and_then(|l| l.file_version.clone()))
    }

    /// The CUDA version the driver supports (1000*major+10*minor), from NVML or libcuda.
    pub fn driver_cuda(&self) -> Option<i32> {
        self.snap.driver.cuda_version()
    }

    /// True when some source shows a working driver.
    pub fn driver_present(&self) -> bool {
        self.driver_version().is_some() || self.driver_cuda().is_some()
    }

    /// True when GPUs are known to exist: NVML listed some, the PCI bus shows NVIDIA GPUs, or
    /// one was assumed.
    pub fn gpus_exist(&self) -> bool {
        !self.snap.gpu_list().is_empty()
            || self
                .snap
                .driver
                .pci_devices
                .get()
                .is_some_and(|v| v.iter().any(|d| d.is_gpu()))
    }
}

impl RuleDoc {
    /// A finding of this rule.
    pub fn finding(
        &self,
        severity: Severity,
        title: impl Into<String>,
        detail: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: self.id.to_string(),
            severity,
            category: self.category,
            title: title.into(),
            detail: detail.into(),
            fix: Fix::default(),
            evidence: serde_json::Value::Object(Default::default()),
            gpu: None,
            links: Vec::new(),
            waived: None,
            area: self.area,
        }
    }
}

impl Finding {
    pub fn fix(mut self, text: impl Into<String>, commands: &[&str]) -> Self {
        self.fix =
            crate::fixes::make_fix(text, commands.iter().map(|c| c.to_string()).collect(), "sh");
        self
    }
    pub fn fix_owned(mut self, text: impl Into<String>, commands: Vec<String>) -> Self {
        self.fix = crate::fixes::make_fix(text, commands, "sh");
        self
    }
    /// A fix rendered from the data (crate::fixes), with its shell.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = fix;
        self
    }
    pub fn evidence(mut self, v: serde_json::Value) -> Self {
        self.evidence = v;
        self
    }
    pub fn on_gpu(mut self, index: u32) -> Self {
        self.gpu = Some(index);
        self
    }
    pub fn link(mut self, url: &str) -> Self {
        self.links.push(url.to_string());
        self
    }
}

/// Every rule, in display order.
pub fn all() -> Vec<Rule> {
    vec![
        driver_missing::RULE,
        windows_adapter::RULE,
        host_tegra::RULE,
        driver_library_mismatch::RULE,
        driver_module_flavor::RULE,
        device_permissions::RULE,
        stub_libcuda::RULE,
        container_no_gpu::RULE,
        expected_gpus::RULE,
        health_lost::RULE,
        smoke_failed::RULE,
        smoke_pcie::RULE,
        stress_run::RULE,
        stress_memory::RULE,
        stress_compute::RULE,
        stress_watch::RULE,
        health_memory::RULE,
        health_throttle::RULE,
        health_pcie::RULE,
        health_nvlink::RULE,
        health_config::RULE,
        fabric_manager::RULE,
        faults_xid::RULE,
        faults_kernel_log::RULE,
        kernel_log_unreadable::RULE,
        windows_tdr::RULE,
        gpu_memory_held::RULE,
        library_path_conflict::RULE,
        unloadable_library::RULE,
        compat_driver::RULE,
        compat_forward::RULE,
        compat_arch::RULE,
        compat_runtime::RULE,
        compat_cudnn::RULE,
        cpu_only_build::RULE,
        matrix_stale::RULE,
        cuda_visible_devices::RULE,
        debug_injection::RULE,
        policy_thresholds::RULE,
        policy_waiver_expired::RULE,
        probe_timeout::RULE,
        probe_crashed::RULE,
        nvml_failed::RULE,
    ]
}

/// The documentation of one rule.
pub fn doc(id: &str) -> Option<RuleDoc> {
    all().into_iter().map(|r| r.doc).find(|d| d.id == id)
}

/// Which rules run: `--only` / `--skip` prefixes of rule ids (or category names).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub only: Vec<String>,
    pub skip: Vec<String>,
}

impl Selection {
    pub fn selects(&self, d: &RuleDoc) -> bool {
        let hit = |p: &String| d.id.starts_with(p.as_str()) || d.category.as_str() == p;
        (self.only.is_empty() || self.only.iter().any(hit)) && !self.skip.iter().any(hit)
    }
}

impl Selection {
    /// Checks the selection before anything runs: every `--only` / `--skip` prefix must match a
    /// rule id or name a category, and some rule must be left to run. A typo in a gate
    /// (`--only drvier.`) is an error (exit 2) listing what exists, never a silent pass.
    pub fn validate(&self) -> Result<(), String> {
        let docs: Vec<RuleDoc> = all().into_iter().map(|r| r.doc).collect();
        for (flag, list) in [("--only", &self.only), ("--skip", &self.skip)] {
            for p in list {
                let hit = docs
                    .iter()
                    .any(|d| d.id.starts_with(p.as_str()) || d.category.as_str() == p);
                if !hit {
                    return Err(format!(
                        "{flag} {}: no rule id starts with it and no category is called that.\n{}",
                        crate::sanitize::clean_line(p, 80),
                        known(&docs)
                    ));
                }
            }
        }
        if !docs.iter().any(|d| self.selects(d)) {
            return Err(format!(
                "--only and --skip together leave no rule to run.\n{}",
                known(&docs)
            ));
        }
        Ok(())
    }
}

/// The rule-id prefixes (`driver.`, `libs.`, ...), sorted, each once.
pub(crate) fn prefixes(docs: &[RuleDoc]) -> Vec<String> {
    let mut prefixes: Vec<String> = docs
        .iter()
        .filter_map(|d| d.id.split_once('.').map(|(p, _)| format!("{p}.")))
        .collect();
    prefixes.sort();
    prefixes.dedup();
    prefixes
}

/// What `--only` / `--skip` accept: the rule-id prefixes, the rule ids, the categories.
fn known(docs: &[RuleDoc]) -> String {
    let prefixes = prefixes(docs);
    let ids: Vec<&str> = docs.iter().map(|d| d.id).collect();
    let mut cats: Vec<&str> = docs.iter().map(|d| d.category.as_str()).collect();
    cats.sort();
    cats.dedup();
    format!(
        "Rule prefixes: {}\nRule ids: {}\nCategories: {}\n(`gpudoctor rules` lists every rule with what it checks.)",
        prefixes.join(" "),
        ids.join(" "),
        cats.join(" ")
    )
}

/// Runs the selected rules.
pub fn evaluate(ctx: &Context, sel: &Selection) -> Vec<Finding> {
    let windows = windows_fixes::on_windows(ctx.snap);
    all()
        .into_iter()
        .filter(|r| sel.selects(&r.doc) && windows_fixes::applies(ctx.snap, r.doc.id))
        .flat_map(|r| (r.check)(ctx, &r.doc))
        .map(|f| {
            if windows {
                windows_fixes::for_windows(f)
            } else {
                f
            }
        })
        .collect()
}
