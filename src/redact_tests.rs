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

#[test]
fn the_machine_terms_of_issue_31_lose_the_home_directory_too() {
    use crate::snapshot::{DriverInstall, PythonEnv};
    let mut snap = Snapshot::empty();
    snap.driver.install = Probed::found(DriverInstall {
        method: "runfile".into(),
        evidence: vec!["module file /home/al/build/nvidia.ko".into()],
        ..Default::default()
    });
    snap.python = Probed::found(vec![PythonEnv {
        prefix: "/home/al/proj/.venv".into(),
        kind: "uv".into(),
        tool: Some("uv".into()),
        origin: "VIRTUAL_ENV".into(),
        ..Default::default()
    }]);
    redact(&mut snap, Some("/home/al"));
    let text = serde_json::to_string(&snap).unwrap();
    assert!(!text.contains("/home/al"), "{text}");
    assert_eq!(
        snap.driver.install.get().unwrap().evidence,
        vec!["module file ~/build/nvidia.ko".to_string()]
    );
    assert_eq!(snap.python_envs()[0].prefix, "~/proj/.venv");
    assert_eq!(snap.python_envs()[0].tool.as_deref(), Some("uv"));
}
