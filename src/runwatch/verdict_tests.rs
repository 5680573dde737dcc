use super::*;
use crate::runwatch::host::Cgroup;
use crate::runwatch::sampler::{fold, GpuHolder, GpuPoint, KernelLogWatch, Point};

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
    assert!(!ev.contains("not the OOM killer"), "{ev}");
}

const SIGKILL: Ended = Ended::Signaled {
    signal: 9,
    core_dumped: false,
};

fn v1(kills: u64, max: Option<u64>, peak: u64) -> Cgroup {
    Cgroup {
        path: "/sys/fs/cgroup/memory/job".into(),
        version: "v1",
        memory_max: max,
        oom_kills: Some(kills),
        memory_current: None,
        memory_peak: Some(peak),
    }
}

fn followed(ok: bool) -> Option<KernelLogWatch> {
    Some(KernelLogWatch {
        path: "/dev/kmsg".into(),
        followed: ok,
        error: (!ok).then(|| "/dev/kmsg: Operation not permitted (os error 1)".into()),
    })
}

/// Issue 28: `kill -9` of a process that peaked at 3 MiB, with the kernel log read (no OOM
/// line) and the cgroup read (no OOM kill): not host memory, and the verdict says why.
#[test]
fn sigkill_that_the_evidence_clears_of_the_oom_killer_is_from_outside() {
    let mut t = Timeline::default();
    t.kernel_log = followed(true);
    t.cgroup_start = Some(v1(0, None, 1 << 30));
    t.cgroup_end = Some(v1(0, None, 1 << 30));
    t.host_memory_bytes = Some(24 << 30);
    t.host_peak_rss_bytes = Some(3 << 20);
    let c = causes(&inputs(SIGKILL, &[], &t));
    assert_eq!(c[0].category, Category::ApplicationError, "{c:#?}");
    assert!(
        c.iter()
            .all(|x| x.category != Category::HostMemoryExhausted),
        "{c:#?}"
    );
    assert_eq!(c[0].confidence, "high");
    assert!(
        c[0].title.starts_with(
            "Killed by SIGKILL from outside: not the OOM killer (no OOM-killer line in the kernel log, no OOM kill counted by the memory cgroup, peak 3 MiB of 24.0 GiB)"
        ),
        "{}",
        c[0].title
    );
    let ev = c[0].evidence.join("\n");
    assert!(
        ev.contains(
            "the kernel log (/dev/kmsg) was read through the run and has no OOM-killer line"
        ),
        "{ev}"
    );
    assert!(
        ev.contains("/sys/fs/cgroup/memory/job counted no OOM kill during the run"),
        "{ev}"
    );
    assert!(
        ev.contains("peaked at 3 MiB resident, under 1 % of the host's memory (24.0 GiB)"),
        "{ev}"
    );
    assert!(!ev.contains("not seen"), "{ev}");
    // The shell's "Killed" in the output reads the SIGKILL itself: it does not bring host
    // memory back.
    let m = crate::matrix::Matrix::embedded().unwrap();
    let matches = crate::explain::explain_text(
        "step 10 loss 0.25\nsh: line 1:  4242 Killed  python3 train.py\nKilled\n",
        &m,
    );
    assert!(
        matches
            .iter()
            .any(|x| x.category == Category::HostMemoryExhausted),
        "{matches:#?}"
    );
    let c = causes(&inputs(Ended::Exited(137), &matches, &t));
    assert_eq!(c[0].category, Category::ApplicationError, "{c:#?}");
    assert!(
        c.iter()
            .all(|x| x.category != Category::HostMemoryExhausted),
        "{c:#?}"
    );
}

/// Where only part could be read, the verdict leans on what was read, with less confidence,
/// and names what it could not see.
#[test]
fn sigkill_names_what_it_could_not_see() {
    let mut t = Timeline::default();
    t.kernel_log = followed(false);
    t.host_memory_bytes = Some(24 << 30);
    t.host_peak_rss_bytes = Some(3 << 20);
    let c = causes(&inputs(SIGKILL, &[], &t));
    assert_eq!(c[0].category, Category::ApplicationError, "{c:#?}");
    assert_eq!(c[0].confidence, "low");
    let ev = c[0].evidence.join("\n");
    assert!(ev.contains("not seen: the kernel log was not read (/dev/kmsg: Operation not permitted (os error 1))"), "{ev}");
    assert!(ev.contains("not seen: no memory cgroup was found"), "{ev}");
    // Nothing seen at all: the usual cause, with low confidence and what was not seen.
    let c = causes(&inputs(SIGKILL, &[], &Timeline::default()));
    assert_eq!(c[0].category, Category::HostMemoryExhausted);
    assert_eq!(c[0].confidence, "low");
    assert!(c[0].title.contains("could not tell"), "{}", c[0].title);
    let ev = c[0].evidence.join("\n");
    assert!(ev.contains("not seen: the kernel log was not read"), "{ev}");
    assert!(
        ev.contains("not seen: the run's peak memory was not measured"),
        "{ev}"
    );
    // A shell's "Killed" only restates the SIGKILL: it does not make host memory certain.
    let m = crate::matrix::Matrix::embedded().unwrap();
    let matches = crate::explain::explain_text("epoch 3 step 120\nKilled\nend of job\n", &m);
    assert!(
        matches.iter().any(|x| x.code == "host-killed-line"),
        "{matches:#?}"
    );
    let c = causes(&inputs(Ended::Exited(137), &matches, &Timeline::default()));
    assert_eq!(c[0].category, Category::HostMemoryExhausted, "{c:#?}");
    assert_eq!(c[0].confidence, "low", "{c:#?}");
}

/// Memory at the cgroup's limit is evidence for the OOM killer, even with a quiet kernel log;
/// the verdict keeps the contrary evidence in view.
#[test]
fn sigkill_at_the_memory_limit_is_host_memory() {
    let mut t = Timeline::default();
    t.kernel_log = followed(true);
    t.cgroup_start = Some(v1(0, Some(1 << 30), 100 << 20));
    t.cgroup_end = Some(v1(0, Some(1 << 30), 1000 << 20));
    t.host_memory_bytes = Some(24 << 30);
    t.host_peak_rss_bytes = Some(990 << 20);
    let c = causes(&inputs(SIGKILL, &[], &t));
    assert_eq!(c[0].category, Category::HostMemoryExhausted, "{c:#?}");
    assert_eq!(c[0].confidence, "medium");
    let ev = c[0].evidence.join("\n");
    assert!(
        ev.contains("peaked at 990 MiB resident, 97 % of the memory cgroup's limit (1.0 GiB)"),
        "{ev}"
    );
    assert!(
        ev.contains("reached 1000 MiB of its 1.0 GiB limit during the run"),
        "{ev}"
    );
    assert!(
        ev.contains("but: the kernel log (/dev/kmsg) was read"),
        "{ev}"
    );
}

/// A Python MemoryError ending a traceback (as in Tobias-Fischer/rt_gene#29) is host memory,
/// not a "general error".
#[test]
fn a_python_memory_error_is_host_memory() {
    let m = crate::matrix::Matrix::embedded().unwrap();
    let matches = crate::explain::explain_text(
        "Traceback (most recent call last):\n  File \"train.py\", line 31, in <module>\n    images_A = images_A/255.0\nMemoryError\n",
        &m,
    );
    let c = causes(&inputs(Ended::Exited(1), &matches, &Timeline::default()));
    assert_eq!(c[0].category, Category::HostMemoryExhausted, "{c:#?}");
    assert!(
        c[0].evidence.join("\n").contains("output: MemoryError"),
        "{c:#?}"
    );
    // torch.cuda.OutOfMemoryError is GPU memory, not this.
    let matches = crate::explain::explain_text(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
        &m,
    );
    assert!(
        matches.iter().all(|x| x.code != "python-memoryerror"),
        "{matches:#?}"
    );
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

/// Issue 30: in `run`, a training log printing its GPU's temperature outranked a real
/// device-side assert. Readings and progress bars make no hardware cause; the assert leads.
#[test]
fn readings_in_the_output_are_no_hardware_cause() {
    let m = crate::matrix::Matrix::embedded().unwrap();
    // nvidia-smi -q's own layout (https://docs.nvidia.com/deploy/nvidia-smi/index.html) printed
    // by the job, a tqdm bar, then the assert of taishan1994/qlora-chinese-LLM#3
    // (tests/explain-corpus/runtime.yaml).
    let out = "epoch 1 step 100 loss 0.52 gpu temperature 61C\n    GPU Current Temp                  : 61 C\n    Power Draw                        : 250.00 W\n 45%|████▌     | 450/1000 [00:10<00:12, 44.1it/s]\nRuntimeError: CUDA error: device-side assert triggered\n../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [336,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n";
    let matches = crate::explain::explain_text(out, &m);
    let t = Timeline::default();
    let c = causes(&inputs(Ended::Exited(1), &matches, &t));
    assert!(
        c.iter().all(|x| x.category != Category::ThermalPower),
        "{c:#?}"
    );
    assert_eq!(c[0].category, Category::ApplicationError, "{c:#?}");
    assert!(informational(
        "    GPU Current Temp                  : 61 C"
    ));
    assert!(informational(
        "epoch 1 step 100 loss 0.52 gpu temperature 61C"
    ));
    assert!(!informational(
        "GPU 0: temperature 95 C, HW slowdown active, clocks throttled"
    ));
    assert!(!informational(
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus"
    ));
}

/// The OOM `run` saw on an H200 (docs/validation/h200-2026-11-27-run1/explain.txt): the job took
/// 84 GiB and died within one sampling interval, so the samples saw it hold little. The error
/// text's own figure is set beside the samples; with samples that saw the memory, nothing is
/// added.
#[test]
fn an_oom_between_samples_is_told_from_the_error_text() {
    let m = crate::matrix::Matrix::embedded().unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/validation/h200-2026-11-27-run1/explain.txt"
    ))
    .unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("this process has 84.39 GiB"))
        .unwrap();
    let matches = crate::explain::explain_text(line, &m);
    let said = matches
        .iter()
        .find_map(|x| x.held_by_process_bytes)
        .unwrap();
    assert!((said - 84.39 * (1u64 << 30) as f64).abs() < 1e7, "{said}");
    for (mine, told) in [(0, true), (80, false)] {
        let mut t = Timeline::default();
        t.interval_s = 1.0;
        for i in 0..3 {
            fold(&mut t, point(f64::from(i), mine, 35));
        }
        let c = causes(&inputs(Ended::Exited(1), &matches, &t));
        let ev = c[0].evidence.join("\n");
        assert_eq!(c[0].category, Category::GpuMemoryExhausted);
        assert_eq!(
            ev.contains("the error text says the failing process held 84.4 GiB when the allocation failed, and the samples (one every 1 s) saw this run hold at most 0.0 GiB"),
            told,
            "{mine} GiB sampled: {ev}"
        );
        assert_eq!(ev.contains("between two samples"), told, "{ev}");
    }
}
