//! Health rules on the synthetic H100 snapshot with a healthy NVML health baseline and one field
//! changed at a time, at and around each threshold (faults.md §3–§6, DCGM limits).

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{check_json, snapshot_json};
use serde_json::{json, Value};

fn healthy() -> Value {
    let mut s = snapshot_json("synthetic-2xh100.json");
    // GPU 1's memory holder would add a finding to every case; free it.
    s["gpus"]["value"][1]["processes"]["value"] = json!([]);
    s["uptime_seconds"] = json!(3600.0);
    for i in 0..2 {
        s["gpus"]["value"][i]["health"] = json!({"status": "found", "value": {
            "ecc": {"volatile_corrected": 0, "volatile_uncorrected": 0, "aggregate_corrected": 12, "aggregate_uncorrected": 0, "aggregate_uncorrected_sram": 0, "aggregate_uncorrected_dram": 0},
            "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": false, "failure": false, "banks_without_spares": 0},
            "recovery_action": 0, "inforom_valid": true, "clock_event_reasons": 1, "utilization_gpu": 0, "pstate": 0,
            "temperature_slowdown_c": 90, "temperature_shutdown_c": 95, "pcie_replays": 0,
            "nvlinks": (0..18).map(|l| json!({"link": l, "active": true, "replay_errors": 0, "recovery_errors": 0, "crc_errors": 0})).collect::<Vec<_>>(),
            "mig_devices": 0
        }});
    }
    s
}

fn set(v: &mut Value, ptr: &str, new: Value) {
    *v.pointer_mut(ptr).unwrap_or_else(|| panic!("no {ptr}")) = new;
}

const H: &str = "/gpus/value/0/health/value";

/// (rule, severity, category) of each finding.
fn found(s: &Value) -> Vec<(String, String, String)> {
    check_json(s, &[]).json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().into(),
                f["severity"].as_str().unwrap().into(),
                f["category"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn one(s: &Value) -> (String, String, String) {
    let f = found(s);
    assert_eq!(f.len(), 1, "{f:?}");
    f.into_iter().next().unwrap()
}

fn with(ptr: &str, v: Value) -> Value {
    let mut s = healthy();
    set(&mut s, &format!("{H}{ptr}"), v);
    s
}

#[test]
fn the_healthy_baseline_has_no_finding() {
    assert_eq!(found(&healthy()), vec![]);
}

#[test]
fn uncorrectable_ecc() {
    assert_eq!(found(&with("/ecc/volatile_uncorrected", json!(0))), vec![]);
    assert_eq!(
        one(&with("/ecc/volatile_uncorrected", json!(1))),
        ("health.memory".into(), "error".into(), "ecc_memory".into())
    );
    assert_eq!(
        one(&with("/ecc/aggregate_uncorrected_sram", json!(1))).1,
        "error"
    );
    // Corrected errors alone are no finding (DCGM does not fail on single-bit counts).
    assert_eq!(
        found(&with("/ecc/volatile_corrected", json!(100_000))),
        vec![]
    );
}

#[test]
fn retired_pages_at_and_around_63() {
    let retired = |sbe: u64, dbe: u64, pending: bool| {
        let mut s = healthy();
        s["gpus"]["value"][0]["health"]["value"]["retired_pages"] =
            json!({"single_bit": sbe, "double_bit": dbe, "pending": pending});
        s
    };
    assert_eq!(found(&retired(40, 22, false)), vec![]);
    assert_eq!(one(&retired(40, 23, false)).1, "error");
    assert_eq!(one(&retired(1, 0, true)).1, "warning");
}

#[test]
fn row_remapping() {
    assert_eq!(
        one(&with("/remapped_rows/pending", json!(true))).1,
        "warning"
    );
    assert_eq!(one(&with("/remapped_rows/failure", json!(true))).1, "error");
    assert_eq!(
        found(&with("/remapped_rows/uncorrectable", json!(511))),
        vec![]
    );
    assert_eq!(
        one(&with("/remapped_rows/uncorrectable", json!(512))).1,
        "warning"
    );
    assert_eq!(
        one(&with("/remapped_rows/banks_without_spares", json!(2))).1,
        "warning"
    );
}

#[test]
fn recovery_action_and_inforom() {
    assert_eq!(
        one(&with("/recovery_action", json!(4))),
        (
            "health.memory".into(),
            "error".into(),
            "hardware_fault".into()
        )
    );
    assert_eq!(one(&with("/recovery_action", json!(3))).1, "warning");
    assert_eq!(one(&with("/inforom_valid", json!(false))).1, "warning");
}

#[test]
fn hw_slowdown_under_load_but_not_at_idle() {
    // Idle (reason bit 0x1 set, 0 % busy) with HW slowdown: normal during P-state changes.
    assert_eq!(found(&with("/clock_event_reasons", json!(0x9))), vec![]);
    let mut s = with("/clock_event_reasons", json!(0x8));
    set(&mut s, &format!("{H}/utilization_gpu"), json!(97));
    assert_eq!(
        one(&s),
        (
            "health.throttle".into(),
            "error".into(),
            "thermal_power".into()
        )
    );
    let mut s = with("/clock_event_reasons", json!(0x20));
    set(&mut s, &format!("{H}/utilization_gpu"), json!(97));
    assert_eq!(one(&s).1, "warning");
    // The software power cap under load is normal.
    let mut s = with("/clock_event_reasons", json!(0x4));
    set(&mut s, &format!("{H}/utilization_gpu"), json!(97));
    assert_eq!(found(&s), vec![]);
}

#[test]
fn temperature_at_the_slowdown_threshold() {
    let mut s = healthy();
    set(&mut s, "/gpus/value/0/temperature_c/value", json!(89));
    assert_eq!(found(&s), vec![]);
    set(&mut s, "/gpus/value/0/temperature_c/value", json!(90));
    assert_eq!(one(&s).0, "health.throttle");
}

#[test]
fn a_x8_link_under_load_but_not_at_idle() {
    let mut s = healthy();
    set(&mut s, "/gpus/value/0/pcie/value/width", json!(8));
    assert_eq!(found(&s), vec![], "links train down at idle");
    set(&mut s, &format!("{H}/utilization_gpu"), json!(80));
    assert_eq!(
        one(&s),
        ("health.pcie".into(), "error".into(), "pcie_degraded".into())
    );
    let mut s = healthy();
    set(&mut s, "/gpus/value/0/pcie/value/gen", json!(4));
    set(&mut s, &format!("{H}/utilization_gpu"), json!(80));
    assert_eq!(one(&s).1, "warning");
}

#[test]
fn replay_counter_rates() {
    // gen5 x16: DCGM allows ceil(1.92 x 16) = 31 a minute; 60 minutes since boot.
    assert_eq!(found(&with("/pcie_replays", json!(1860))), vec![], "31/min");
    assert_eq!(
        one(&with("/pcie_replays", json!(1920))).0,
        "health.pcie",
        "32/min"
    );
}

#[test]
fn nvlink_links_down() {
    assert_eq!(
        one(&with("/nvlinks/3/active", json!(false))),
        (
            "health.nvlink".into(),
            "warning".into(),
            "hardware_fault".into()
        )
    );
}

#[test]
fn configuration() {
    let mut s = healthy();
    set(&mut s, "/gpus/value/0/persistence_mode/value", json!(false));
    assert_eq!(found(&s), vec![], "nvidia-persistenced runs");
    set(&mut s, "/driver/daemons/value/0/running", json!(false));
    assert_eq!(
        one(&s),
        (
            "health.config".into(),
            "warning".into(),
            "configuration".into()
        )
    );
    let mut s = healthy();
    set(
        &mut s,
        "/gpus/value/0/compute_mode/value",
        json!("prohibited"),
    );
    assert_eq!(one(&s).1, "error");
    let mut s = healthy();
    set(
        &mut s,
        "/gpus/value/0/mig_mode/value",
        json!({"current": true, "pending": true}),
    );
    assert_eq!(one(&s).1, "error", "MIG with no instance");
    set(&mut s, &format!("{H}/mig_devices"), json!(2));
    assert_eq!(found(&s), vec![]);
}

#[test]
fn lost_gpus_and_gpus_missing_from_nvml() {
    let mut s = healthy();
    set(
        &mut s,
        "/gpus/value/1/name",
        json!({"status": "failed", "error": "the GPU has fallen off the bus", "code": "gpu_lost"}),
    );
    assert_eq!(
        one(&s),
        (
            "health.gpu-lost".into(),
            "error".into(),
            "hardware_fault".into()
        )
    );
    let mut s = healthy();
    s["driver"]["pci_devices"]["value"].as_array_mut().unwrap().push(json!({"bus_id": "0000:3a:00.0", "device_id": "0x2330", "class": "0x030200", "driver": "nvidia"}));
    let v = check_json(&s, &[]).json();
    assert!(v["findings"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("0000:3a:00.0"));
}

#[test]
fn fabric_manager_on_nvswitch_systems() {
    let mut s = healthy();
    for i in 0..4 {
        s["driver"]["pci_devices"]["value"].as_array_mut().unwrap().push(json!({"bus_id": format!("0000:0{i}:00.0"), "device_id": "0x22a3", "class": "0x068000", "driver": "nvidia-nvswitch"}));
    }
    let (rule, sev, cat) = one(&s);
    assert_eq!(
        (rule.as_str(), sev.as_str(), cat.as_str()),
        ("faults.fabric-manager", "error", "fabric_manager")
    );
    set(
        &mut s,
        "/driver/daemons/value/1",
        json!({"name": "nv-fabricmanager", "running": true, "pid": 2001, "version": "580.82.07"}),
    );
    let v = check_json(&s, &[]).json();
    assert_eq!(
        v["findings"][0]["title"],
        "Fabric Manager 580.82.07 does not match driver 580.95.05"
    );
    set(
        &mut s,
        "/driver/daemons/value/1/version",
        json!("580.95.05"),
    );
    assert_eq!(found(&s), vec![]);
}
