use super::*;

#[test]
fn the_memory_rate_reads_as_a_share_of_the_copy_rate() {
    assert_eq!(
        memory_rate(2351.0, Some(2740.0)),
        "2351 GB/s (86 % of the 2740 GB/s copy rate)"
    );
    assert_eq!(memory_rate(5.0, None), "5.0 GB/s");
}

/// The simulated GPU's copy reference (2 GB/s) under an 18 GB/s pattern test used to read
/// "18 GB/s (8.60 of the 2 GB/s copy rate)".
#[test]
fn a_copy_reference_far_below_the_test_gives_no_ratio() {
    let s = memory_rate(18.0, Some(2.1));
    assert_eq!(
        s,
        "18 GB/s (the 2.1 GB/s copy rate measured as the reference is too low to compare with)"
    );
    assert!(!s.contains("8.6"), "{s}");
}
