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
    let x = t.xid.codes.iter().find(|x| x.covers(79)).unwrap();
    assert_eq!(
        (x.level, x.category),
        (Level::Crit, Category::HardwareFault)
    );
    // A range: 14-24 is LEGACY_DRIVER_ERROR, 25 is not.
    let legacy = t.xid.codes.iter().find(|x| x.covers(20)).unwrap();
    assert_eq!(legacy.name, "LEGACY_DRIVER_ERROR");
    assert!(!legacy.covers(25));
    assert!(tables().is_some());
}

#[test]
fn a_broken_table_says_where_and_what() {
    let good = EMBEDDED.1;
    // A duplicate signal number, an unknown category and a bad Xid range, one at a time.
    let dup = good.replacen("  - num: 9\n", "  - num: 15\n", 1);
    assert_ne!(dup, good);
    let e = parse("codes.yaml", &dup).unwrap_err();
    assert!(
        e.iter()
            .any(|m| m == "codes.yaml: signal 15 is listed twice"),
        "{e:?}"
    );

    let cat = good.replacen("category: hardware_fault", "category: hardware_faultt", 1);
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

    let range = good.replacen("xids: [1-7,", "xids: [7-1,", 1);
    assert_ne!(range, good);
    let e = parse("codes.yaml", &range).unwrap_err();
    assert!(
        e.iter()
            .any(|m| m.contains("\"7-1\"") && m.contains("LEGACY_DRIVER_ERROR")),
        "{e:?}"
    );

    let schema = good.replacen("gpudoctor.explain-codes/1", "gpudoctor.explain-codes/9", 1);
    let e = parse("codes.yaml", &schema).unwrap_err();
    assert!(
        e[0].contains("schema is \"gpudoctor.explain-codes/9\""),
        "{e:?}"
    );
}
