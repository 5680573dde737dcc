use super::*;

/// A hardware-id list as SetupAPI returns it (REG_MULTI_SZ), with the id of a real RTX 3050
/// laptop GPU passed through to a VM (cyberus-technology/virtualbox-kvm#34).
#[test]
fn multi_strings_split_at_their_nuls() {
    let text = "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1\0PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043\0\0\0\0";
    let units: Vec<u16> = text.encode_utf16().collect();
    let v = multi_sz(&units);
    assert_eq!(
        v,
        [
            "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043&REV_A1",
            "PCI\\VEN_10DE&DEV_25A2&SUBSYS_13FC1043"
        ]
    );
    let a = DisplayAdapter {
        hardware_id: v.first().cloned(),
        ..Default::default()
    };
    assert!(a.is_nvidia());
    let basic = DisplayAdapter {
        hardware_id: Some("PCI\\VEN_8086&DEV_9A49".into()),
        ..Default::default()
    };
    assert!(!basic.is_nvidia());
    assert!(multi_sz(&[0, 0]).is_empty());
}
