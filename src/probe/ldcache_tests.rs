//! Unit tests of `ldcache`.
use super::*;

#[test]
fn this_machines_cache_matches_ldconfig() {
    let Ok(data) = std::fs::read("/etc/ld.so.cache") else {
        return;
    };
    let ours = parse(&data);
    assert!(!ours.is_empty(), "parsed no entry from /etc/ld.so.cache");
    let Ok(out) = std::process::Command::new("ldconfig").arg("-p").output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // ldconfig -p prints "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6".
    let theirs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let (lhs, path) = l.split_once(" => ")?;
            let name = lhs.trim().split(' ').next()?;
            Some((name.to_string(), path.trim().to_string()))
        })
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn truncated_or_foreign_data_gives_nothing() {
    assert!(parse(b"").is_empty());
    assert!(parse(b"not a cache").is_empty());
    assert!(parse(&NEW_MAGIC[..10]).is_empty());
    let mut d = NEW_MAGIC.to_vec();
    d.extend_from_slice(&[0xff; 8]);
    assert!(parse(&d).is_empty());
}
