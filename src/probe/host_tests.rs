//! Unit tests of `host`.
use super::*;

#[test]
fn os_release_pretty_name_or_name_and_version() {
    let t = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
    assert_eq!(
        os_release_name(t).unwrap(),
        "Debian GNU/Linux 12 (bookworm)"
    );
    assert_eq!(
        os_release_name("NAME=Ubuntu\nVERSION_ID=22.04\n").unwrap(),
        "Ubuntu 22.04"
    );
    assert_eq!(os_release_name("nothing"), None);
}

#[test]
fn container_markers_from_a_tree_and_the_environment() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(".dockerenv"), "").unwrap();
    let h = probe(d.path(), &|_| None);
    assert_eq!(h.container.as_deref(), Some("docker"));
    let h = probe(d.path(), &|k| {
        (k == "KUBERNETES_SERVICE_HOST").then(|| "10.0.0.1".into())
    });
    assert_eq!(h.container.as_deref(), Some("kubernetes"));
    let e = tempfile::tempdir().unwrap();
    assert_eq!(probe(e.path(), &|_| None).container, None);
}
