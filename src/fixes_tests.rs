use super::*;

#[test]
fn the_embedded_data_parses() {
    check_data().unwrap();
    assert!(driver_data().families.len() >= 9);
    assert!(python_data().tools.contains_key("uv"));
}
