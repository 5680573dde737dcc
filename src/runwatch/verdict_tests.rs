use super::*;
use crate::runwatch::host::Cgroup;
use crate::runwatch::sampler::{fold, GpuHolder, GpuPoint, Point};

fn point(t_s: f64, mine: u64, theirs: u64) -> Point {
    let gib = 1u64 << 30;
    Point {
        t_s,
        gpus: vec![GpuPoint {
            gpu: 0,
            used_bytes: Some((mine + theirs) * gib),
            total_bytes: Some(16 * gib),
            temperature_c: Some(61),
            power_w: None,
            sm_mhz: None,
            throttle: Vec::new(),
            processes: Some(vec![
                GpuHolder {
                    pid: 100,
                    name: Some("python3".into()),
                    bytes: Some(mine * gib),
                    this_run: true,
                },
                GpuHolder {
                    pid: 200,
                    name: Some("python".into()),
                    bytes: Some(theirs * gib),
                    this_run: false,
                },
            ]),
        }],
        host_rss_bytes: 2 * gib,
        host_processes: 3,
        cgroup_bytes: None,
    }
}

fn inputs<'a>(ended: Ended, matches: &'a [Match], t: &'a Timeline) -> Inputs<'a> {
    Inputs {
        ended,
        duration_s: 10.0,
        matches,
        timeline: t,
        maxrss: None,
        signals: &[],
        findings: &[],
    }
}

/// The PyTorch OOM of pytorch/pytorch#40863 (tests/explain-corpus/runtime.yaml) while another
/// process grew from 1 to 10 GiB: the OOM leads, with the growth as evidence.
#[test]
fn gpu_oom_names_the_process_that_grew() {
    let m = crate::matrix::Matrix::embedded().unwrap();
    let matches = crate::explain::explain_text(
        "Traceback (most recent call last):\nRuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 11.17 GiB total capacity; 505.96 MiB already allocated; 12.50 MiB free; 530.00 MiB reserved in total by PyTorch)\n",
        &m,
    );
    let mut t = Timeline::default();
    for (i, theirs) in [1, 4, 10].iter().enumerate() {
        fold(&mut t, point(i as f64 * 3.0, 5, *theirs));
    }
    let c = causes(&inputs(Ended::Exited(1), &matches, &t));
    assert_eq!(c[0].category, Category::GpuMemoryExhausted);
    assert_eq!(c[0].confidence, "high");
    let ev = c[0].evidence.join("\n");
    assert!(ev.contains("GPU 0: 15.0 GiB of 16.0 GiB in use at the peak, 6.0 s into the run (4.0 s before the end)"), "{ev}");
    assert!(ev.contains("PID 200 (python), not part of this run, grew from 1.0 GiB (0.0 s into the run) to 10.0 GiB (6.0 s into the run)"), "{ev}");
    assert!(
        ev.contains(
            "this run held 5.0 GiB of it and other processes 10.0 GiB: PID 200 (python) 10.0 GiB"
        ),
        "{ev}"
    );
    // A plain exit 1 says nothing more than the output: it stays behind.
    assert!(
        c.iter().all(|x| x.category != Category::ApplicationError),
        "{c:#?}"
    );
}

/// SIGKILL with the cgroup's OOM count up by one: out of host memory, certain.
#[test]
fn sigkill_with_a_cgroup_oom_kill_is_host_memory() {
    let cg = |kills| Cgroup {
        path: "/sys/fs/cgroup/memory/job".into(),
        version: "v1",
        memory_max: Some(64 << 20),
        oom_kills: Some(kills),
        memory_current: None,
        memory_peak: Some(64 << 20),
    };
    let mut t = Timeline::default();
    t.cgroup_start = Some(cg(0));
    t.cgroup_end = Some(cg(1));
    let ended = Ended::Signaled {
        signal: 9,
        core_dumped: false,
    };
    let c = causes(&inputs(ended, &[], &t));
    assert_eq!(c[0].category, Category::HostMemoryExhausted);
    assert_eq!(c[0].confidence, "high");
    let ev = c[0].evidence.join("\n");
    assert!(ev.contains("counted 1 OOM kill(s) during the run"), "{ev}");
    assert!(!ev.contains("no OOM kill was seen"), "{ev}");
    // Without the count, SIGKILL alone is only likely, and says what was not seen.
    let c = causes(&inputs(ended, &[], &Timeline::default()));
    assert_eq!(c[0].confidence, "medium");
    assert!(c[0].evidence.join("\n").contains("no OOM kill was seen"));
}

#[test]
fn the_result_of_a_run() {
    let t = Timeline::default();
    assert_eq!(result(&inputs(Ended::Exited(0), &[], &t)), "ok");
    assert_eq!(result(&inputs(Ended::Exited(3), &[], &t)), "failed");
    assert_eq!(result(&inputs(Ended::Exited(130), &[], &t)), "interrupted");
    let mut i = inputs(Ended::Exited(0), &[], &t);
    i.signals = &[15];
    assert_eq!(result(&i), "interrupted");
    // A plain status is the program's code, never a CUDA error number.
    assert_eq!(exit_reading(3).unwrap().kind, "exit_code");
    assert_eq!(exit_reading(139).unwrap().name, "SIGSEGV");
}

/// A Windows crash code as the exit status, in its signed and unsigned forms, is read as the
/// NTSTATUS it is; an ordinary status stays the program's own code.
#[test]
fn windows_crash_codes_are_read_as_ntstatus() {
    for n in [-1073740791i64, 3221226505] {
        let m = exit_reading(n).unwrap();
        assert_eq!(m.kind, "ntstatus", "{n}");
        assert_eq!(m.name, "STATUS_STACK_BUFFER_OVERRUN", "{n}");
    }
    assert_eq!(
        exit_reading(-1073741819).unwrap().name,
        "STATUS_ACCESS_VIOLATION"
    );
    assert!(!is_ntstatus(3));
    assert!(!is_ntstatus(-1));
    assert!(!is_ntstatus(1 << 40));
}

/// Windows: the run crashed with 0xC0000409 while the System event log recorded a display-driver
/// reset (the record of tests/fixtures/windows/eventlog/nvlddmkm-153.xml): the reset leads, the
/// crash code follows as a consequence.
#[test]
fn a_display_driver_reset_during_the_run_leads_a_windows_crash() {
    let mut t = Timeline::default();
    t.events.push(crate::runwatch::sampler::Event {
        t_s: 42.5,
        source: "event_log",
        event: LogEvent::DisplayDriverReset {
            device: Some("\\Device\\Video3".into()),
        },
        gpu: None,
        line: Some("nvlddmkm 153: \\Device\\Video3 Error occurred on GPUID: 100".into()),
        this_run: None,
    });
    let c = causes(&inputs(Ended::Exited(-1073740791), &[], &t));
    assert_eq!(
        c[0].title,
        "Windows reset the display driver during the run (TDR)"
    );
    let ev = c[0].evidence.join("\n");
    assert!(
        ev.contains("System event log, 42.5 s into the run: nvlddmkm 153: \\Device\\Video3"),
        "{ev}"
    );
    assert!(c[0].fix.commands[0].contains("TdrDelay"));
    assert!(
        c.iter()
            .any(|x| x.title.contains("STATUS_STACK_BUFFER_OVERRUN")),
        "{c:#?}"
    );
}
