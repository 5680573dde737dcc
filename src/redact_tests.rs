//! Unit tests of `redact`.
use super::*;

#[test]
fn home_is_replaced_only_as_a_whole_path_prefix() {
    assert_eq!(replace_home("/root/venv/lib", "/root"), "~/venv/lib");
    assert_eq!(replace_home("/root", "/root"), "~");
    assert_eq!(replace_home("/rootfs/x", "/root"), "/rootfs/x");
    assert_eq!(replace_home("/a:/root/lib:/b", "/root"), "/a:~/lib:/b");
    assert_eq!(replace_home("/srv/root/x", "/root"), "/srv/root/x");
    assert_eq!(replace_home("/home/al/x", "/home/al/"), "~/x");
}
