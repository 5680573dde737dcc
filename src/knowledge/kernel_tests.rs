//! Unit tests of `kernel`.
use super::*;
use crate::faults::logparse::LogEvent;
use crate::vocab::Severity;

#[test]
fn the_built_in_files_load_and_hold_every_xid_the_driver_defines() {
    let x = xid_file().expect("knowledge/xid.yaml loads");
    let ev = events_file().expect("knowledge/kernel-events.yaml loads");
    assert_eq!(x.source.version, ev.source.version);
    // nverror.h 595.45.04 defines Xids 13 to 176 (with gaps); all are here, each once.
    let mut seen = std::collections::HashSet::new();
    for e in &x.entries {
        assert!(seen.insert(e.xid), "Xid {} twice", e.xid);
    }
    for n in [13, 48, 63, 79, 119, 159, 167, 174, 176] {
        let e = xid(n).unwrap_or_else(|| panic!("Xid {n}"));
        assert!(e.header_line.is_some(), "Xid {n} has its nverror.h line");
    }
    assert_eq!(
        xid(63).map(|e| (e.category, e.level)),
        Some((Category::EccMemory, Level::Info))
    );
    assert_eq!(
        xid(79).map(|e| (e.category, e.level)),
        Some((Category::HardwareFault, Level::Crit))
    );
    // Legacy numbers only NVIDIA's catalog lists; a range of the catalog covers each.
    assert_eq!(
        xid(15).map(|e| e.name.as_str()),
        Some("LEGACY_DRIVER_ERROR")
    );
    assert!(xid(15).is_some_and(|e| e.header_line.is_none()));
    // In both: the catalog's reading, the driver's own name kept beside it.
    let e = xid(20).unwrap();
    assert_eq!(e.name, "LEGACY_DRIVER_ERROR");
    assert_eq!(
        e.driver_name.as_deref(),
        Some("ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD")
    );
    // The driver names 167 PCIE_FATAL_TIMEOUT; the catalog as transcribed gives no action, and
    // the data says so.
    let e = xid(167).unwrap();
    assert_eq!(e.driver_name.as_deref(), Some("PCIE_FATAL_TIMEOUT"));
    assert!(!e.in_catalog());
    assert!(e.action.contains("no action is published"), "{}", e.action);
    assert!(xid(177).is_none());
}

#[test]
fn every_event_has_a_source_and_families_that_find_their_own_text() {
    let ev = events_file().unwrap();
    assert!(
        ev.mined_formats >= 800 && ev.mapped_formats >= 40,
        "{} {}",
        ev.mined_formats,
        ev.mapped_formats
    );
    for e in &ev.entries {
        assert!(!e.sources.is_empty(), "{}", e.id);
        assert!(!e.families.is_empty(), "{}", e.id);
        for f in &e.families {
            let line = format!("[  12.345678] x: {}", f.pieces.join(" 1 "));
            assert!(f.matches(&line), "{}: {line}", e.id);
            assert!(!f.source.is_empty(), "{}", e.id);
        }
    }
}

#[test]
fn family_pieces_must_come_in_order() {
    let f = Family {
        pieces: vec!["API mismatch".into(), "kernel module has".into()],
        emitter: "x".into(),
        source: vec![],
        format: None,
    };
    assert!(f.matches("NVRM: API mismatch: the client has 1, but this kernel module has 2"));
    assert!(!f.matches("this kernel module has 2 ... API mismatch"));
}

#[test]
fn describe_fills_the_fields_of_the_event() {
    let (e, title, text) = describe(&LogEvent::OomKill {
        pid: Some(4242),
        process: Some("python".into()),
    })
    .unwrap();
    assert_eq!(e.category, Category::HostMemoryExhausted);
    assert_eq!(title, "The OOM killer killed python");
    assert!(text.contains("(PID 4242)"), "{text}");
    let (_, _, text) = describe(&LogEvent::ApiMismatch {
        client_version: Some("535.54.03".into()),
        module_version: Some("530.30.02".into()),
    })
    .unwrap();
    assert!(
        text.contains("driver 535.54.03 talked to kernel module 530.30.02"),
        "{text}"
    );
    assert!(describe(&LogEvent::Xid {
        xid: 79,
        bus_id: None,
        gpu_instance: None,
        compute_instance: None,
        pid: None,
        process: None,
        message: String::new(),
        caused_by: None,
        fatal: None,
        recovery_action: None
    })
    .is_none());
}

#[test]
fn every_mined_message_has_a_family_a_category_and_a_fix() {
    let m = messages_file().expect("knowledge/kernel-messages.yaml loads");
    let ev = events_file().unwrap();
    assert_eq!(m.entries.len(), ev.mined_formats);
    assert_eq!(m.mined_formats, ev.mined_formats);
    for e in &m.entries {
        let fam = event(&e.family).unwrap_or_else(|| panic!("{}: family {}", e.source, e.family));
        assert!(!e.fix.is_empty(), "{}", e.source);
        match &e.event {
            // An event's own lines take its category.
            Some(id) => assert_eq!(event(id).map(|x| x.category), Some(e.category)),
            None => assert_eq!(
                (fam.category, fam.role),
                (e.category, e.role),
                "{}",
                e.source
            ),
        }
    }
    // Families are weaker readings than events: never an error on their own.
    assert!(m.families.iter().all(|f| f.severity != Severity::Error));
}

#[test]
fn a_line_of_a_mined_format_finds_its_message() {
    let m = messages_file().unwrap();
    let mut found = 0;
    for e in &m.entries {
        // The line as the driver prints it: its prefix ("NVRM:", "[nvidia-drm]",
        // "nvidia-nvswitch:" or none) first.
        let line = format!(
            "[ 7.1] {} GPU0 fn: {}",
            e.pieces[0],
            e.pieces[1..].join(" 1 ")
        );
        let Some(got) = match_message(&line) else {
            continue;
        };
        found += 1;
        // The most specific format the line holds: its own, or one that says more.
        assert!(
            got.literal_len() >= e.literal_len(),
            "{line}: {}",
            got.source
        );
    }
    // Only formats with too few literal characters to name a line are left out.
    let specific = m
        .entries
        .iter()
        .filter(|e| e.literal_len() >= MIN_LITERAL)
        .count();
    assert!(found >= specific && specific > 750, "{found} of {specific}");
    // No NVRM, no driver message.
    assert!(match_message("Can't find an IRQ for your NVIDIA card!").is_none());
}

#[test]
fn a_cause_family_is_an_event_and_a_notice_is_none() {
    use crate::faults::logparse::parse_all;
    // nv-pci.c: no event names it; its family does.
    let v = parse_all("[  177.642523] NVRM: Can't find an IRQ for your NVIDIA card!");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].event_id(), "nvrm_irq_setup");
    let (k, _, text) = describe(&v[0]).unwrap();
    assert_eq!(k.category, Category::Configuration);
    assert!(text.contains("Can't find an IRQ"), "{text}");
    // Notices and report details: known, and no event.
    for line in [
        "[    2.846803] nvidia: module verification failed: signature and/or required key missing - tainting kernel",
        "[    2.829501] nvidia: module license 'NVIDIA' taints kernel.",
        "[    3.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build",
        "[    9.9] NVRM: GPU0 krcRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.",
    ] {
        assert!(parse_all(line).is_empty(), "{line}");
        assert!(known_not_a_fault(line), "{line}");
    }
    // An event's line is not "known to be no fault".
    assert!(!known_not_a_fault(
        "NVRM: GPU 0000:01:00.0: GPU has fallen off the bus."
    ));
    assert!(!known_not_a_fault("an ordinary line"));
}
