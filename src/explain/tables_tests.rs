//! Unit tests of `tables`.
use super::*;

#[test]
fn the_built_in_tables_load_and_hold_the_known_codes() {
    let t = parse(EMBEDDED.0, EMBEDDED.1).unwrap_or_else(|e| panic!("{e:#?}"));
    let nt = t
        .ntstatus
        .codes
        .iter()
        .find(|c| c.code == 0xC000_0409)
        .unwrap();
    assert_eq!(nt.name, "STATUS_STACK_BUFFER_OVERRUN");
    let s = t.signals.codes.iter().find(|c| c.num == 9).unwrap();
    assert_eq!(s.category, Category::HostMemoryExhausted);
    assert!(tables().is_some());
}

#[test]
fn a_broken_table_says_where_and_what() {
    let good = EMBEDDED.1;
    // A duplicate signal number and an unknown category, one at a time.
    let dup = good.replacen("  - num: 9\n", "  - num: 15\n", 1);
    assert_ne!(dup, good);
    let e = parse("codes.yaml", &dup).unwrap_err();
    assert!(
        e.iter()
            .any(|m| m == "codes.yaml: signal 15 is listed twice"),
        "{e:?}"
    );

    let cat = good.replacen(
        "category: host_memory_exhausted",
        "category: hardware_faultt",
        1,
    );
    let e = parse("codes.yaml", &cat).unwrap_err();
    assert!(
        e[0].starts_with("codes.yaml:") && e[0].contains("hardware_faultt"),
        "{e:?}"
    );
    // The line of the bad value.
    let line = cat
        .lines()
        .position(|l| l.contains("hardware_faultt"))
        .unwrap()
        + 1;
    assert!(
        e[0].starts_with(&format!("codes.yaml:{line}:")),
        "{e:?} (line {line})"
    );

    let schema = good.replacen("gpudoctor.explain-codes/1", "gpudoctor.explain-codes/9", 1);
    let e = parse("codes.yaml", &schema).unwrap_err();
    assert!(
        e[0].contains("schema is \"gpudoctor.explain-codes/9\""),
        "{e:?}"
    );
}
