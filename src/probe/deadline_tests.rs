//! Unit tests of `deadline`.
use super::*;

#[test]
fn a_hanging_child_is_killed_at_its_deadline() {
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    let t = Instant::now();
    let out = run(cmd, Duration::from_millis(200), 1024).unwrap();
    assert!(out.timed_out);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(out
        .describe(Duration::from_millis(200))
        .contains("timed out"));
}

#[test]
fn output_is_collected_and_capped() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "printf 0123456789; printf err >&2"]);
    let out = run(cmd, Duration::from_secs(5), 4).unwrap();
    assert!(out.success());
    assert_eq!(out.stdout, b"0123");
    assert_eq!(out.stderr, b"err");
}

#[test]
fn a_slow_probe_times_out_and_a_panicking_one_is_caught() {
    let p = spawn("slow", || thread::sleep(Duration::from_secs(5)));
    let (o, _) = p.wait(Instant::now() + Duration::from_millis(50));
    assert!(matches!(o, Outcome::TimedOut));
    let p = spawn("boom", || -> u32 { panic!("kaboom") });
    let (o, _) = p.wait(Instant::now() + Duration::from_secs(5));
    match o {
        Outcome::Panicked(m) => assert!(m.contains("kaboom")),
        other => panic!("expected a caught panic, got {other:?}"),
    }
}
