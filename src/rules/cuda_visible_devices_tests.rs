//! Unit tests of `cuda_visible_devices`.
use super::*;

#[test]
fn cuda_rules_for_the_variable() {
    assert!(apply("", Some(4), &[]).visible.is_empty());
    let v = apply("0,2,-1,1", Some(4), &[]);
    assert_eq!(v.visible, vec!["0", "2"]);
    assert_eq!(v.hidden_from, Some(2));
    let v = apply("1,5", Some(2), &[]);
    assert_eq!(v.visible, vec!["1"]);
    let uuids = vec!["GPU-1234abcd-0000".to_string()];
    assert_eq!(apply("GPU-1234", Some(1), &uuids).visible, vec!["GPU-1234"]);
    assert!(apply("GPU-9999", Some(1), &uuids).visible.is_empty());
    assert_eq!(apply("NoDevFiles", Some(1), &[]).hidden_from, Some(0));
}
