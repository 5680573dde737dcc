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

#[test]
fn a_windows_profile_folder_becomes_userprofile_whatever_its_case() {
    let home = r"C:\Users\alice";
    assert_eq!(
        replace_home(
            r"C:\Users\alice\AppData\Local\Programs\Python\Python311",
            home
        ),
        r"%USERPROFILE%\AppData\Local\Programs\Python\Python311"
    );
    assert_eq!(
        replace_home(r"c:\users\ALICE\miniconda3\envs\tf", home),
        r"%USERPROFILE%\miniconda3\envs\tf"
    );
    assert_eq!(
        replace_home(r"C:\Windows\system32;C:\Users\alice\bin;D:\x", home),
        r"C:\Windows\system32;%USERPROFILE%\bin;D:\x"
    );
    // Another user whose name starts the same stays.
    assert_eq!(
        replace_home(r"C:\Users\alice2\x", home),
        r"C:\Users\alice2\x"
    );
    assert_eq!(
        replace_home(r"C:\Users\alice", r"C:\Users\alice\"),
        "%USERPROFILE%"
    );
}
