use super::*;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let owned: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| owned.get(k).cloned()
}

// What `cargo run` (cargo 1.95) set on this machine (a crate in /tmp/g/envcheck, moved to /work/wt here): the
// target directory, its deps, and the toolchain's libraries, in front of the user's own value.
const CARGO_RUN: &str = "/work/wt/target/debug:/work/wt/target/debug/deps:/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/x86_64-unknown-linux-gnu/lib:/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib";

#[test]
fn under_cargo_its_own_library_path_is_not_a_gpu_setting() {
    let env = vars(&[
        ("CARGO", "/root/.cargo/bin/cargo"),
        ("CARGO_MANIFEST_DIR", "/work/wt"),
        ("LD_LIBRARY_PATH", CARGO_RUN),
    ]);
    assert_eq!(probe(&env).get("LD_LIBRARY_PATH"), None);
}

#[test]
fn under_cargo_the_users_own_entries_are_kept() {
    let value = format!("{CARGO_RUN}:/usr/local/cuda-12.4/lib64");
    let env = vars(&[
        ("CARGO", "/root/.cargo/bin/cargo"),
        ("CARGO_TARGET_DIR", "/tmp/tgt"),
        ("LD_LIBRARY_PATH", &value),
    ]);
    assert_eq!(
        probe(&env).get("LD_LIBRARY_PATH").map(String::as_str),
        Some("/usr/local/cuda-12.4/lib64")
    );
    // A custom target directory is cargo's too.
    let env = vars(&[
        ("CARGO", "/root/.cargo/bin/cargo"),
        ("CARGO_TARGET_DIR", "/tmp/tgt"),
        ("LD_LIBRARY_PATH", "/tmp/tgt/debug/deps:/opt/cuda/lib64"),
    ]);
    assert_eq!(
        probe(&env).get("LD_LIBRARY_PATH").map(String::as_str),
        Some("/opt/cuda/lib64")
    );
}

#[test]
fn outside_cargo_the_value_is_reported_as_it_is() {
    let env = vars(&[("LD_LIBRARY_PATH", CARGO_RUN)]);
    assert_eq!(
        probe(&env).get("LD_LIBRARY_PATH").map(String::as_str),
        Some(CARGO_RUN)
    );
}
