//! Unit tests of `deadline`.
use super::*;

#[test]
fn a_hanging_child_is_killed_at_its_deadline() {
    // ping waits a second between its echoes: a 30 s child on Windows, where there is no sleep.
    let cmd = if cfg!(windows) {
        let mut c = Command::new("ping");
        c.args(["-n", "30", "127.0.0.1"]);
        c
    } else {
        let mut c = Command::new("sleep");
        c.arg("30");
        c
    };
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
    let cmd = if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/c", "echo 0123456789& echo err 1>&2"]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", "printf 0123456789; printf err >&2"]);
        c
    };
    let out = run(cmd, Duration::from_secs(5), 4).unwrap();
    assert!(out.success());
    assert_eq!(out.stdout, b"0123");
    assert!(out.stderr.starts_with(b"err"), "{:?}", out.stderr);
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
