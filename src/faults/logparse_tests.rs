//! Unit tests of `logparse`: every example line of ../shared/reference/faults.md §2, in several
//! prefix formats, plus malformed and adversarial lines (and a fuzz run that must not panic).
use super::*;

fn one(line: &str) -> LogEvent {
    let v = parse_all(line);
    assert_eq!(v.len(), 1, "{line:?} gave {v:?}");
    v.into_iter().next().unwrap()
}

fn xid(line: &str) -> (u32, Option<String>, Option<u32>, Option<String>, String) {
    match one(line) {
        LogEvent::Xid {
            xid,
            bus_id,
            pid,
            process,
            message,
            ..
        } => (xid, bus_id, pid, process, message),
        other => panic!("{other:?}"),
    }
}

#[test]
fn reference_examples() {
    let (x, b, p, n, m) = xid("NVRM: Xid (PCI:0000:b5:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address");
    assert_eq!(
        (x, b.as_deref(), p, n),
        (13, Some("0000:b5:00"), None, None)
    );
    assert!(m.starts_with("Graphics SM Warp Exception"));
    let (x, b, p, n, _) = xid("NVRM: Xid (PCI:0000:00:06): 31, pid=79749, name=exe, Ch 0000000a, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_T1_7 faulted @ 0x2b57_b3000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE");
    assert_eq!(
        (x, b.as_deref(), p, n.as_deref()),
        (31, Some("0000:00:06"), Some(79749), Some("exe"))
    );
    assert_eq!(
        xid("NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000005 intr 00008000").0,
        32
    );
    assert_eq!(xid("NVRM: Xid (PCI:0000:01:00): 69, Class Error: ChId 0005, Class 0000a097, Offset 00001b0c, Data 00000000").0, 69);
    assert_eq!(
        xid("NVRM: Xid (PCI:0000:01:00): 62, 0096(1c54) 00000000 00000000").0,
        62
    );
    let (x, _, p, _, m) = xid("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.");
    assert_eq!((x, p), (63, Some(1896)));
    assert!(m.starts_with("Row Remapper"));
    let (x, b, _, _, m) = xid("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.");
    assert_eq!(
        (x, b.as_deref(), m.as_str()),
        (79, Some("0000:2b:00"), "GPU has fallen off the bus.")
    );
    assert_eq!(
        one("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus."),
        LogEvent::FallenOffBus {
            bus_id: Some("0000:2b:00".into())
        }
    );
    let (x, _, p, n, _) = xid("NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).");
    assert_eq!(
        (x, p, n.as_deref()),
        (119, Some(2024380), Some("nvidia-smi"))
    );
}

#[test]
fn mig_attributed_nvlink5_and_recovery_action() {
    match one("NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No") {
        LogEvent::Xid { xid, gpu_instance, bus_id, .. } => assert_eq!((xid, gpu_instance, bus_id.as_deref()), (94, Some(5), Some("0000:01:00"))),
        o => panic!("{o:?}"),
    }
    match one("NVRM: Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:02): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No") {
        LogEvent::Xid { xid, gpu_instance, compute_instance, .. } => assert_eq!((xid, gpu_instance, compute_instance), (95, Some(5), Some(2))),
        o => panic!("{o:?}"),
    }
    match one("NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)") {
        LogEvent::Xid { xid, fatal, bus_id, .. } => assert_eq!((xid, fatal, bus_id.as_deref()), (149, Some(true), Some("0018:01:00"))),
        o => panic!("{o:?}"),
    }
    match one("NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)") {
        LogEvent::Xid { xid, recovery_action, .. } => assert_eq!((xid, recovery_action), (154, Some(4))),
        o => panic!("{o:?}"),
    }
    match one("NVRM: Xid (PCI:0000:3b:00): 45, pid=1234, name=python, Ch 00000010, caused by previous Xid 79") {
        LogEvent::Xid { xid, caused_by, .. } => assert_eq!((xid, caused_by), (45, Some(79))),
        o => panic!("{o:?}"),
    }
}

#[test]
fn prefixes_and_older_formats() {
    for line in [
        "[ 1234.567890] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        "Nov 21 13:59:01 gpu-node-7 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        "2026-11-21T13:59:01.123456+00:00 gpu-node-7 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        "4,1234,5678901234,-;NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        "[Sat Nov 21 13:59:01 2026] NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
    ] {
        assert_eq!(xid(line).0, 79, "{line}");
        assert_eq!(xid(line).1.as_deref(), Some("0000:2b:00"), "{line}");
    }
    // Older drivers: no "PCI:".
    let (x, b, _, _, m) = xid("NVRM: Xid (0000:03:00): 14, Channel 00000001");
    assert_eq!(
        (x, b.as_deref(), m.as_str()),
        (14, Some("0000:03:00"), "Channel 00000001")
    );
    // The tracepoint form with a function number.
    assert_eq!(
        xid("nvidia_dev_xid: Xid (PCI:0000:01:00.0): 79, GPU has fallen off the bus")
            .1
            .as_deref(),
        Some("0000:01:00")
    );
}

#[test]
fn other_nvrm_lines() {
    assert!(
        matches!(one("NVRM: GPU 0000:65:00.0: RmInitAdapter failed! (0x25:0xffff:1601)"), LogEvent::RmInitAdapterFailed { bus_id: Some(b), code: Some(c) } if b == "0000:65:00" && c == "0x25:0xffff:1601")
    );
    assert_eq!(
        one("NVRM: The NVIDIA probe routine was not called for 1 device(s)."),
        LogEvent::ProbeNotCalled
    );
    assert_eq!(
        one("NVRM: No NVIDIA devices probed."),
        LogEvent::NoDevicesProbed
    );
    assert_eq!(
        one("NVRM: None of the NVIDIA devices were initialized."),
        LogEvent::NoDevicesProbed
    );
    assert!(matches!(one("NVRM: The NVIDIA GeForce GTX 780 GPU installed in this system is not supported by the NVIDIA 580.95.05 driver release."), LogEvent::UnsupportedGpu { .. }));
    assert_eq!(one("NVRM: GPU 0000:01:00.0 is not supported by open nvidia.ko because it does not include the required GPU System Processor (GSP)."), LogEvent::OpenModuleNeedsGsp);
    assert_eq!(
        one("Loading of unsigned module is rejected"),
        LogEvent::UnsignedModule
    );
    assert_eq!(
        one("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"),
        LogEvent::UnsignedModule
    );
    assert!(
        matches!(one("pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"), LogEvent::PcieAer { severity, device: Some(d) } if severity == "Corrected" && d == "0000:00:01")
    );
    assert!(
        matches!(one("Out of memory: Killed process 4242 (python3) total-vm:123456kB, anon-rss:654321kB"), LogEvent::OomKill { pid: Some(4242), process: Some(p) } if p == "python3")
    );
    assert!(matches!(
        one("Memory cgroup out of memory: Killed process 77 (trainer) total-vm:1kB"),
        LogEvent::OomKill { pid: Some(77), .. }
    ));
    assert_eq!(one("nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error"), LogEvent::NvswitchSxid { code: 12028 });
}

#[test]
fn api_mismatch_on_one_and_three_lines() {
    assert_eq!(
        one("NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the version 535.104.05.  Please make sure that this kernel module and all NVIDIA driver components have the same version."),
        LogEvent::ApiMismatch { client_version: Some("535.54.03".into()), module_version: Some("535.104.05".into()) }
    );
    let v = parse_all("NVRM: API mismatch: the client 'nvidia-smi' (pid 1234)\nNVRM: has the version 550.54.14, but this kernel module has\nNVRM: the version 535.104.05.  Please make sure that this\n");
    assert_eq!(
        v,
        vec![LogEvent::ApiMismatch {
            client_version: Some("550.54.14".into()),
            module_version: Some("535.104.05".into())
        }]
    );
}

#[test]
fn malformed_and_adversarial_lines_give_nothing_or_a_clean_event() {
    for line in [
        "",
        "NVRM: Xid (",
        "NVRM: Xid ()",
        "NVRM: Xid (PCI:zz:zz:zz): abc, x",
        "NVRM: Xid (PCI:0000:01:00): , x",
        "NVRM: Xid (PCI:0000:01:00): 99999999999999999999, x",
        "NVRM: Xid (PCI:0000:01:00) 13 no colon",
        "NVRM: Xid (PCI:0000:01:00): 13",
        "NVRM: Xid (PCI:0000:01:00): 13, pid=",
        "NVRM: Xid (PCI:0000:01:00): 13, name=",
        "Killed process",
        "PCIe Bus Error: severity=",
        "SXid (PCI:",
        "NVRM: GPU ",
        "\u{202e}NVRM: Xid (PCI:0000:01:00): 13, \x1b[31mred",
        "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0xZZ",
        "NVRM: Xid (PCI:0000:01:00): 45, caused by previous Xid ",
    ] {
        for e in parse_all(line) {
            // Whatever is extracted is clean text.
            let s = serde_json::to_string(&e).unwrap();
            assert!(!s.contains('\u{1b}') && !s.contains('\u{202e}'), "{s}");
        }
    }
    assert!(parse_all("NVRM: Xid (PCI:0000:01:00): , x").is_empty());
    assert!(parse_all("an ordinary kernel line").is_empty());
    let long = "NVRM: Xid (PCI:0000:01:00): 13, ".to_string() + &"A".repeat(100_000);
    match one(&long) {
        LogEvent::Xid { message, .. } => assert!(message.chars().count() <= 401),
        o => panic!("{o:?}"),
    }
}

#[test]
fn bus_ids_normalise() {
    assert_eq!(
        norm_bus_id("00000000:2B:00.0").as_deref(),
        Some("0000:2b:00")
    );
    assert_eq!(norm_bus_id("PCI:0000:2b:00").as_deref(), Some("0000:2b:00"));
    assert_eq!(norm_bus_id("2b:00.0").as_deref(), Some("0000:2b:00"));
    assert_eq!(norm_bus_id("not:a:bus"), None);
}

/// Event Viewer text as people paste it: Display 4101 in both wordings
/// (https://github.com/ALaggyDev/CoordsFinder/issues/14: "…and has recovered."; Microsoft's
/// event table: "…and has successfully recovered.") and nvlddmkm 153's TDR line
/// (https://github.com/dartraiden/NVIDIA-patcher/issues/427).
#[test]
fn windows_display_driver_resets() {
    assert_eq!(
        one("Display driver nvlddmkm stopped responding and has recovered."),
        LogEvent::DisplayDriverReset {
            device: Some("nvlddmkm".into())
        }
    );
    assert_eq!(
        one("Display driver nvlddmkm stopped responding and has successfully recovered."),
        LogEvent::DisplayDriverReset {
            device: Some("nvlddmkm".into())
        }
    );
    assert_eq!(
        one("Restarting TDR occurred on GPUID:100"),
        LogEvent::DisplayDriverReset { device: None }
    );
    assert_eq!(
        one("Restarting TDR occurred on GPUID:100").key(),
        "display_driver_reset"
    );
    // The other 153 text is not a reset by itself when pasted alone.
    assert!(parse_all("Error occurred on GPUID: 100").is_empty());
    assert!(parse_all("Display driver settings were changed").is_empty());
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const SEEDS: &[&str] = &[
        "NVRM: Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:02): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1).",
        "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)",
        "NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the version 535.104.05.",
        "pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer",
        "Out of memory: Killed process 4242 (python3) total-vm:1kB",
        "nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal",
    ];

    proptest! {
        // 20,000 cases each: 40,000 parser runs (120,000 lines fed) per test run.
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        #[test]
        fn never_panics_on_mutated_real_lines(seed in 0usize..SEEDS.len(), cut in 0usize..200, insert in ".{0,12}", pos in 0usize..200) {
            let s = SEEDS[seed];
            let cut = s.char_indices().map(|(i, _)| i).nth(cut % s.chars().count()).unwrap_or(0);
            let pos = s.char_indices().map(|(i, _)| i).nth(pos % s.chars().count()).unwrap_or(0);
            let mut line = s[..cut.max(pos)].to_string();
            line.insert_str(pos.min(line.len()), &insert);
            let mut p = LogParser::new();
            let _ = p.feed(&line);
            let _ = p.feed(s);
        }

        #[test]
        fn never_panics_on_arbitrary_text(line in "\\PC{0,300}") {
            let mut p = LogParser::new();
            let _ = p.feed(&line);
            let _ = p.feed(&format!("NVRM: Xid ({line}"));
            let _ = p.feed(&format!("NVRM: API mismatch {line}"));
        }
    }
}

#[derive(serde::Deserialize)]
struct PublicLine {
    source: String,
    text: String,
    #[serde(default)]
    event: Option<String>,
    #[serde(default)]
    xid: Option<u32>,
}

#[derive(serde::Deserialize)]
struct PublicLines {
    lines: Vec<PublicLine>,
}

/// Real lines from public threads (tests/fixtures/kernel-log/public-threads.yaml): each family
/// of knowledge/kernel-events.yaml they stand for is recognised, whatever prefix they carry.
#[test]
fn real_lines_of_every_family_are_recognised() {
    let f: PublicLines = serde_saphyr::from_str(include_str!(
        "../../tests/fixtures/kernel-log/public-threads.yaml"
    ))
    .unwrap();
    let mut events = std::collections::HashSet::new();
    for l in &f.lines {
        assert!(l.source.starts_with("https://"), "{}", l.source);
        let ev = LogParser::new()
            .feed(&l.text)
            .unwrap_or_else(|| panic!("nothing read in {}", l.text));
        match (&l.event, l.xid) {
            (Some(e), _) => {
                assert_eq!(ev.event_id(), e, "{}", l.text);
                events.insert(e.clone());
            }
            (None, Some(x)) => {
                assert!(
                    matches!(ev, LogEvent::Xid { xid, .. } if xid == x),
                    "{ev:?}"
                );
            }
            (None, None) => panic!("{}: neither event nor xid", l.text),
        }
    }
    assert!(events.len() >= 12, "{events:?}");
}

#[test]
fn talosctl_and_kubectl_prefixes_parse_the_same() {
    for line in [
        "192.168.11.119: kern: warning: [2026-04-22T21:30:51.526447914Z]: NVRM: nvAssertFailedNoLog: Assertion failed: 0 @ kernel_gsp.c:1446",
        "[pod/driver-x7k2/nvidia-driver-ctr] [   12.5] NVRM: nvAssertFailedNoLog: Assertion failed: 0 @ kernel_gsp.c:1446",
    ] {
        assert_eq!(one(line).event_id(), "rm_assertion", "{line}");
    }
    assert!(matches!(
        one("10.0.0.5: kern:    err: [2026-04-22T21:30:51Z]: NVRM: Xid (PCI:0000:3b:00): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate."),
        LogEvent::Xid { xid: 63, .. }
    ));
}

#[test]
fn an_oom_kill_with_its_summary_line_is_one_event() {
    let evs = parse_all(
        "[Sun Mar 30 08:24:00 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/init.scope,task=python,pid=7899,uid=0\n\
         [Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26184840kB, anon-rss:15370088kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0\n\
         [Sun Mar 30 08:25:00 2025] Out of memory: Killed process 8000 (python) total-vm:1kB",
    );
    assert_eq!(evs.len(), 2, "{evs:?}");
    assert!(
        matches!(&evs[0], LogEvent::OomKill { pid: Some(7899), process: Some(p) } if p == "python")
    );
    assert!(matches!(
        &evs[1],
        LogEvent::OomKill {
            pid: Some(8000),
            ..
        }
    ));
}

#[test]
fn a_line_of_no_family_is_nothing() {
    for line in [
        "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.58.03  Release Build",
        "nvidia: module verification failed: signature and/or required key missing - tainting kernel",
        "python: AssertionError: Assertion failed: x > 0",
        "systemd[1]: Started Session 4 of user root.",
    ] {
        assert_eq!(LogParser::new().feed(line), None, "{line}");
    }
}
