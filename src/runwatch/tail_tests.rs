use super::*;

/// What the ring must hold: the last `cap` bytes of everything pushed.
fn expected(all: &[u8], cap: usize) -> Vec<u8> {
    all[all.len().saturating_sub(cap)..].to_vec()
}

#[test]
fn keeps_the_newest_bytes_across_wraps() {
    let mut t = Tail::new(10);
    let mut all = Vec::new();
    for chunk in [
        &b"abc"[..],
        b"defgh",
        b"ijklmn",
        b"o",
        b"pqrstuvwx",
        b"yz0123456789AB",
        b"C",
    ] {
        t.push(chunk);
        all.extend_from_slice(chunk);
        assert_eq!(
            t.bytes(),
            expected(&all, 10),
            "after {:?}",
            String::from_utf8_lossy(chunk)
        );
    }
    assert_eq!(t.total(), all.len() as u64);
}

#[test]
fn a_chunk_larger_than_the_ring_leaves_its_end() {
    let mut t = Tail::new(4);
    t.push(b"xy");
    t.push(b"0123456789");
    assert_eq!(t.bytes(), b"6789");
    t.push(b"a");
    assert_eq!(t.bytes(), b"789a");
}

proptest::proptest! {
    #[test]
    fn any_sequence_of_pushes(chunks in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..40), 0..30), cap in 1usize..64) {
        let mut t = Tail::new(cap);
        let mut all = Vec::new();
        for c in &chunks {
            t.push(c);
            all.extend_from_slice(c);
        }
        proptest::prop_assert_eq!(t.bytes(), expected(&all, cap));
    }
}
