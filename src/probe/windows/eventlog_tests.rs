//! Unit tests of `eventlog` on the records of tests/fixtures/windows/eventlog (their sources are
//! in that folder's README).
use super::*;

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/windows/eventlog")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Everything, as one `wevtutil qe` stream would hold it (no root element).
fn all() -> String {
    [
        "display-4101.xml",
        "nvlddmkm-153.xml",
        "nvlddmkm-153-restarting.xml",
        "nvlddmkm-13.xml",
        "nvlddmkm-0.xml",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect()
}

#[test]
fn parses_the_fields_of_a_153_record() {
    let r = parse_records(&fixture("nvlddmkm-153.xml"));
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!(r.provider, "nvlddmkm");
    assert_eq!(r.event_id, 153);
    assert_eq!(r.time.as_deref(), Some("2024-11-14T15:02:11.5930000Z"));
    // 2024-11-14T15:02:11.593Z = 1731596531.593 (date -d … +%s).
    assert!((r.unix_time.unwrap() - 1_731_596_531.593).abs() < 1e-3);
    assert_eq!(r.data, ["\\Device\\Video3", "Error occurred on GPUID: 100"]);
    assert_eq!(
        r.line(),
        "nvlddmkm 153: \\Device\\Video3 Error occurred on GPUID: 100"
    );
    assert_eq!(
        r.event(),
        Some(LogEvent::DisplayDriverReset {
            device: Some("\\Device\\Video3".into())
        })
    );
}

#[test]
fn display_4101_is_a_reset_of_the_driver_it_names() {
    let r = parse_records(&fixture("display-4101.xml"));
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].provider, "Display");
    assert_eq!(r[0].event_id, 4101);
    assert_eq!(r[0].data, ["nvlddmkm", ""]);
    assert_eq!(
        r[0].event(),
        Some(LogEvent::DisplayDriverReset {
            device: Some("nvlddmkm".into())
        })
    );
}

#[test]
fn nvlddmkm_13_is_xid_13_with_its_text() {
    let r = parse_records(&fixture("nvlddmkm-13.xml"));
    assert_eq!(r.len(), 3);
    let evs: Vec<LogEvent> = r.iter().filter_map(EventRecord::event).collect();
    assert_eq!(evs.len(), 3);
    match &evs[0] {
        LogEvent::Xid {
            xid,
            bus_id,
            message,
            ..
        } => {
            assert_eq!(*xid, 13);
            assert_eq!(*bus_id, None);
            assert_eq!(
                message,
                "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"
            );
        }
        e => panic!("{e:?}"),
    }
    // The ESR record keeps its register dump.
    assert!(
        matches!(&evs[2], LogEvent::Xid { xid: 13, message, .. } if message.starts_with("Graphics Exception: ESR 0x57c730=0xc04000b"))
    );
}

#[test]
fn other_nvlddmkm_ids_are_counted_but_not_events() {
    let r = parse_records(&fixture("nvlddmkm-0.xml"));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].event_id, 0);
    assert_eq!(r[0].event(), None);
    // A 13 without an exception text is not taken for an Xid.
    let mut odd = r[0].clone();
    odd.event_id = 13;
    assert_eq!(odd.event(), None);
}

#[test]
fn an_xid_line_inside_the_driver_text_is_read_as_that_xid() {
    // Not seen in a public paste: the Linux parser reads it should a driver write one.
    let rec = EventRecord {
        provider: "nvlddmkm".into(),
        event_id: 13,
        data: vec![
            "\\Device\\Video3".into(),
            "NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.".into(),
        ],
        ..Default::default()
    };
    assert!(matches!(
        rec.event(),
        Some(LogEvent::Xid { xid: 79, bus_id: Some(b), .. }) if b == "0000:01:00"
    ));
}

#[test]
fn collect_counts_within_the_window_oldest_first() {
    let records = parse_records(&all());
    assert_eq!(records.len(), 8);
    // Everything (no clock): 8 records, 4 resets (2× 4101, 2× 153) under one key, Xid 13 ×3.
    let log = collect(&records, None, 24.0);
    assert_eq!(log.source, SOURCE);
    assert_eq!(log.lines, 8);
    assert_eq!(log.events.len(), 2);
    let xid = &log.events[0];
    assert!(matches!(xid.event, LogEvent::Xid { xid: 13, .. }));
    assert_eq!(xid.count, 3);
    assert!(xid
        .first_line
        .starts_with("nvlddmkm 13: \\Device\\Video3 Graphics SM Warp"));
    let tdr = &log.events[1];
    assert_eq!(tdr.count, 4);
    // The oldest reset comes first: nvlddmkm 153 of 2024-11-14.
    assert_eq!(
        tdr.event,
        LogEvent::DisplayDriverReset {
            device: Some("\\Device\\Video3".into())
        }
    );
    assert_eq!(
        tdr.first_line,
        "nvlddmkm 153: \\Device\\Video3 Error occurred on GPUID: 100"
    );

    // 24 h before 2026-08-29T12:00:00Z (1788004800): only the newer 4101 is left.
    let log = collect(&records, Some(1_788_004_800.0), 24.0);
    assert_eq!(log.lines, 1);
    assert_eq!(log.events.len(), 1);
    assert_eq!(log.events[0].count, 1);
    assert_eq!(log.events[0].first_line, "Display 4101: nvlddmkm");
    // 72 h: both 4101s.
    let log = collect(&records, Some(1_788_004_800.0), 72.0);
    assert_eq!(log.lines, 2);
    assert_eq!(log.events[0].count, 2);
}

#[test]
fn system_times() {
    assert_eq!(parse_system_time("1970-01-01T00:00:00Z"), Some(0.0));
    assert_eq!(
        parse_system_time("2000-03-01T00:00:00.0000000Z"),
        Some(951_868_800.0)
    );
    assert_eq!(parse_system_time("2026-02-30"), None);
    assert_eq!(parse_system_time("garbage"), None);
    assert_eq!(parse_system_time("2026-13-01T00:00:00Z"), None);
}

#[test]
fn utf16_output_decodes() {
    let text = fixture("nvlddmkm-153.xml");
    let mut bytes = vec![0xff, 0xfe];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    assert_eq!(decode(&bytes), text);
    let mut no_bom: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    assert_eq!(decode(&no_bom), text);
    no_bom.push(b'x'); // an odd byte left over is dropped, not a panic
    assert_eq!(parse_records(&decode(&no_bom)).len(), 1);
    assert_eq!(decode(text.as_bytes()), text);
}

#[test]
fn entities_and_double_quotes() {
    let xml = r#"<Event xmlns="x"><System><Provider Name="Display" Guid="{0}"/><EventID>4101</EventID><TimeCreated SystemTime="2026-01-01T00:00:00Z"/></System><EventData><Data Name="p1">nv&amp;lddmkm &lt;x&gt; &#65;&#x42;</Data><Data/></EventData><RenderingInfo Culture="en-US"><Message>Display driver nvlddmkm stopped responding and has successfully recovered.</Message></RenderingInfo></Event>"#;
    let r = parse_records(xml);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].data, ["nv&lddmkm <x> AB", ""]);
    assert_eq!(
        r[0].message.as_deref(),
        Some("Display driver nvlddmkm stopped responding and has successfully recovered.")
    );
    assert_eq!(r[0].unix_time, Some(1_767_225_600.0));
}

#[test]
fn broken_input_never_panics() {
    for s in [
        "",
        "<Event",
        "<Event>",
        "<Event><System><Provider Name='nvlddmkm'/><EventID>x</EventID></System></Event>",
        "<Event><System><Provider Name='nvlddmkm/><EventID>13</EventID>",
        "<EventData><Data>\\Device\\Video3</Data>",
        "&#xffffffff; &; &amp",
        "<Event><System><Provider Name='nvlddmkm'/><EventID>13</EventID></System><EventData><Data>Graphics Exception",
    ] {
        let r = parse_records(s);
        let _ = collect(&r, Some(0.0), 1.0);
        let _ = unescape(s);
    }
    // A truncated last record still gives the complete ones before it.
    let mut text = fixture("nvlddmkm-153.xml");
    text.push_str("<Event xmlns='x'><System><Provider Name='nvl");
    assert_eq!(parse_records(&text).len(), 1);
}

#[test]
fn judge_reads_output_and_failures() {
    let ok = judge(
        true,
        "exit status 0",
        fixture("nvlddmkm-153.xml").as_bytes(),
        b"",
        None,
        24.0,
    );
    let log = ok.get().unwrap();
    assert_eq!(log.lines, 1);
    assert_eq!(log.events.len(), 1);
    // No records in the window: an empty log, found.
    let empty = judge(true, "exit status 0", b"", b"", None, 24.0);
    assert_eq!(empty.get().unwrap().lines, 0);
    let denied = judge(
        false,
        "exit status 5",
        b"",
        b"Failed to read events. Access is denied.\r\n",
        None,
        24.0,
    );
    assert_eq!(denied.code(), Some("access_denied"));
    assert!(denied.get().is_none());
    let other = judge(
        false,
        "timed out after 2.0 s and was killed",
        b"",
        b"",
        None,
        24.0,
    );
    assert_eq!(other.code(), Some("unreadable"));
}

#[test]
fn the_query_names_both_providers_and_the_window() {
    let q = query(24.0);
    assert!(q.contains("Provider[@Name='nvlddmkm'] or Provider[@Name='Display']"));
    assert!(q.contains("timediff(@SystemTime) <= 86400000"));
}

/// What `gpudoctor run` takes from the log at its end: only the records written since the run
/// started, oldest first, as events with their lines (the 0-id record, which means nothing
/// known, is left out).
#[test]
fn events_since_a_start_keep_the_newer_records_in_order() {
    let records = parse_records(&all());
    // 2025-01-01T00:00:00Z: the 2025-12-24 153 and the two 2026 4101s are after it.
    let got = events_since(&records, 1_735_689_600.0);
    let lines: Vec<&str> = got.iter().map(|(_, _, l)| l.as_str()).collect();
    assert_eq!(got.len(), 3, "{lines:?}");
    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(lines[0].starts_with("nvlddmkm 153:"), "{lines:?}");
    assert!(lines[1].starts_with("Display 4101:"), "{lines:?}");
    assert!(got
        .iter()
        .all(|(_, e, _)| matches!(e, LogEvent::DisplayDriverReset { .. })));
    assert!(events_since(&records, 2_000_000_000.0).is_empty());
}
