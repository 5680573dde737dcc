//! Unit tests of `probe::windows`: the TDR settings from what the registry reads gave.
use super::*;

#[test]
fn unset_values_mean_windows_defaults() {
    let w = tdr_from_reads(DwordRead::NotSet, DwordRead::NotSet);
    assert_eq!(w.tdr_delay_s, None);
    assert_eq!(w.tdr_level, None);
    assert_eq!(w.registry_error, None);
    assert_eq!(w.tdr_delay(), 2);
    assert_eq!(w.tdr_level(), 3);
}

#[test]
fn set_values_and_errors() {
    let w = tdr_from_reads(DwordRead::Value(60), DwordRead::Error(5));
    assert_eq!(w.tdr_delay(), 60);
    assert_eq!(w.tdr_level, None);
    assert_eq!(
        w.registry_error.as_deref(),
        Some(r"HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers: TdrLevel: Windows error 5")
    );
}

#[test]
fn an_old_snapshot_without_the_section_still_loads() {
    let h: crate::snapshot::Host =
        serde_json::from_str(r#"{"os":"windows","arch":"x86_64","wsl":false}"#).unwrap();
    assert_eq!(h.windows, None);
    let h: crate::snapshot::Host =
        serde_json::from_str(r#"{"os":"windows","arch":"x86_64","windows":{"tdr_delay_s":10}}"#)
            .unwrap();
    assert_eq!(h.windows.unwrap().tdr_delay(), 10);
    // Not written when absent.
    let linux = crate::snapshot::Host::default();
    assert!(!serde_json::to_string(&linux).unwrap().contains("windows"));
}
