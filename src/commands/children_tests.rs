//! Unit tests of `children`: the smoke child's time is what is left of the parent's deadline.
use super::*;

/// The request carries the time left of the run's deadline at spawn time, less the child's
/// margin, not a copy of the original `--timeout`; the child turns it back into a deadline that
/// falls no later than the parent's.
#[test]
fn the_smoke_child_gets_the_time_left_of_the_one_deadline() {
    let snap = Snapshot::empty();
    // A run whose --timeout was 10 s, 4 s of which the probes used: 6 s are left.
    let parent = Deadline::after(Duration::from_secs(6));
    let req = SmokeRequest::new(&snap, &None, parent);
    let left = Duration::from_millis(req.remaining_ms);
    assert!(left <= Duration::from_secs(6) - CHILD_MARGIN, "{left:?}");
    // Generous for a loaded machine: the request is made within a second of the deadline.
    assert!(left > Duration::from_secs(4), "{left:?}");
    // Through the JSON the child reads.
    let json = serde_json::to_string(&req).unwrap();
    assert!(json.contains("\"remaining_ms\":"), "{json}");
    assert!(!json.contains("timeout"), "{json}");
    let back: SmokeRequest = serde_json::from_str(&json).unwrap();
    let child = back.deadline();
    assert!(
        child.instant() <= parent.instant(),
        "{child:?} after {parent:?}"
    );
    assert!(child.remaining() > Duration::from_secs(3), "{child:?}");
}

/// Little left: the child gets its floor (100 ms), never a fresh budget.
#[test]
fn the_smoke_child_gets_its_floor_when_little_is_left() {
    let snap = Snapshot::empty();
    let req = SmokeRequest::new(&snap, &None, Deadline::after(Duration::from_millis(350)));
    assert!(
        req.remaining_ms <= CHILD_AT_LEAST.as_millis() as u64,
        "{}",
        req.remaining_ms
    );
    // Spent: without the floor the child would get 0 ms.
    let req = SmokeRequest::new(&snap, &None, Deadline::after(Duration::ZERO));
    assert!(req.remaining_ms > 0, "{}", req.remaining_ms);
    assert!(req.remaining_ms <= CHILD_AT_LEAST.as_millis() as u64);
}
