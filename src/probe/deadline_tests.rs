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

#[test]
fn sub_budgets_come_from_the_one_deadline() {
    let d = Deadline::after(Duration::from_secs(10));
    // A cap shorter than what is left: the cap, on the same clock.
    let capped = d.min(Duration::from_secs(3));
    assert!(capped.instant() < d.instant());
    assert!(capped.remaining() <= Duration::from_secs(3));
    // A cap longer than what is left: the deadline itself, never later.
    assert_eq!(d.min(Duration::from_secs(60)), d);
    // A margin kept back.
    let less = d.less(Duration::from_millis(500));
    assert_eq!(d.instant() - less.instant(), Duration::from_millis(500));
    // Budgets count from when the run's deadline was made, whenever they are read.
    assert_eq!(d.budget(), Duration::from_secs(10));
    assert_eq!(less.budget(), Duration::from_millis(9500));
    assert!(capped.budget() <= Duration::from_secs(10));
    // Gone is gone: nothing is left, and a cap does not revive it.
    let spent = Deadline::after(Duration::ZERO);
    assert!(spent.passed());
    assert_eq!(spent.remaining(), Duration::ZERO);
    assert_eq!(spent.min(Duration::from_secs(5)), spent);
    assert!(!d.passed());
    // --timeout is at most an hour; anything larger is held, not an overflow.
    assert!(Deadline::after(Duration::MAX).remaining() > Duration::from_secs(3600));
}

#[test]
fn a_child_gets_the_time_remaining_on_the_parents_clock() {
    let parent = Deadline::after(Duration::from_secs(8));
    let ms = parent.remaining_millis();
    assert!(ms <= 8000, "{ms}");
    // Generous for a loaded machine.
    assert!(ms > 5000, "{ms}");
    let child = Deadline::from_remaining_millis(ms);
    // Rounded down, so the child's deadline is never after the parent's.
    assert!(child.instant() <= parent.instant());
    assert_eq!(Deadline::after(Duration::ZERO).remaining_millis(), 0);
}

#[test]
fn a_probe_waits_for_the_deadline_it_is_given() {
    let d = Deadline::after(Duration::from_millis(100));
    let p = spawn("slow", || thread::sleep(Duration::from_secs(5)));
    let (o, _) = p.wait(d);
    assert!(matches!(o, Outcome::TimedOut));
    assert!(d.passed());
    let p = spawn("quick", || 7);
    let (o, _) = p.wait(Deadline::after(Duration::from_secs(30)));
    assert!(matches!(o, Outcome::Done(7)));
}
