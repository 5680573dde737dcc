//! `faults.fabric-manager`: NVSwitch systems (HGX/DGX A100, H100, H200) need nvidia-fabricmanager
//! running at exactly the driver's version (../shared/reference/faults.md §6).

use serde_json::json;

use super::{Context, Rule, RuleDoc};
use crate::fixes::{driver_fix, DriverAction, Terms, Values};
use crate::vocab::{Area, Category, Finding, Fix, Severity};

pub const RULE: Rule = Rule {
    doc: RuleDoc {
        id: "faults.fabric-manager",
        category: Category::FabricManager,
        area: Area::Driver,
        summary: "An NVSwitch system without nvidia-fabricmanager running at the driver's version",
    },
    check,
};

fn check(ctx: &Context, doc: &RuleDoc) -> Vec<Finding> {
    let d = &ctx.snap.driver;
    let Some(pci) = d.pci_devices.get() else {
        return Vec::new();
    };
    let switches = pci.iter().filter(|p| p.is_nvswitch()).count();
    if switches == 0 {
        return Vec::new();
    }
    let fm = d
        .daemons
        .get()
        .and_then(|ds| ds.iter().find(|x| x.name == "nv-fabricmanager").cloned());
    let driver = d.kernel_version().map(str::to_string);
    let branch = driver
        .as_deref()
        .and_then(|v| v.split('.').next())
        .map(str::to_string);
    let install = |text: &str| -> Fix {
        let Some(branch) = branch.as_deref() else {
            return crate::fixes::make_fix(
                format!("{text} (the driver's version is unknown: read it with nvidia-smi first)"),
                vec!["nvidia-smi --query-gpu=driver_version --format=csv,noheader".into()],
                "sh",
            );
        };
        let mut f = driver_fix(
            &Terms::of(ctx.snap),
            DriverAction::FabricManager,
            &Values {
                branch,
                version: driver.as_deref(),
            },
        );
        f.text = format!("{text} {}", f.text);
        f
    };
    match fm {
        Some(f) if f.running => match (&f.version, &driver) {
            (Some(fv), Some(dv)) if fv != dv => vec![doc
                .finding(Severity::Error, format!("Fabric Manager {fv} does not match driver {dv}"),
                    format!("nv-fabricmanager must be the driver's exact version; {fv} against kernel module {dv} leaves the {switches} NVSwitch(es) uninitialised."))
                .with_fix(install("Fabric Manager must be the driver's exact version."))
                .evidence(json!({"nvswitches": switches, "fabric_manager": fv, "driver": dv}))],
            _ => Vec::new(),
        },
        _ => vec![doc
            .finding(Severity::Error, format!("{switches} NVSwitch(es) but nvidia-fabricmanager is not running"),
                "On NVSwitch systems CUDA needs the Fabric Manager to initialise the fabric; without it programs fail with 'system not yet initialized' (802) while nvidia-smi looks fine.".to_string())
            .with_fix(install("The Fabric Manager is not running."))
            .evidence(json!({"nvswitches": switches, "driver": driver}))
            .link("https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html")],
    }
}

#[cfg(test)]
#[path = "fabric_manager_tests.rs"]
pub(super) mod tests;
