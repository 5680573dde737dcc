//! The timeline of a run, on a thread of its own: every interval (1 s) one sample of each GPU
//! through the watch `stress` uses ([`crate::gpu::stress::Monitor`]: NVML on a thread of its own,
//! or the simulated GPUs), the command's process tree on the host (resident memory) and its
//! memory cgroup; between samples, Xid events from NVML and new kernel-log lines. It keeps
//! running peaks and the last samples in memory, and with `--save` appends every sample to
//! timeline.jsonl as it goes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::host::{self, Cgroup};
use super::kmsg::KernelFollower;
use crate::faults::logparse::LogEvent;
use crate::gpu::stress::{Monitor, CLOCK_EVENTS};

/// Samples kept in memory for the report (the last ones before the end).
pub const KEEP_LAST: usize = 10;

/// One process holding GPU memory in a sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuHolder {
    pub pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Whether it belongs to the command's process tree.
    pub this_run: bool,
}

/// One GPU in one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuPoint {
    pub gpu: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_mhz: Option<u32>,
    /// The clock event (throttle) reasons in effect, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<GpuHolder>>,
}

/// One sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Seconds since the command started.
    pub t_s: f64,
    pub gpus: Vec<GpuPoint>,
    /// Resident memory of the command's process tree, bytes.
    pub host_rss_bytes: u64,
    /// Processes in the tree.
    pub host_processes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_bytes: Option<u64>,
}

/// Something seen during the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub t_s: f64,
    /// "nvml", "kernel_log" or (Windows) "event_log".
    pub source: &'static str,
    /// The parsed event (an Xid, the OOM killer, a GPU fallen off the bus, ...).
    pub event: LogEvent,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// The kernel log line, cleaned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// For the OOM killer: whether the process it killed was the command's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub this_run: Option<bool>,
}

/// One process's memory on one GPU over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HolderTrack {
    pub pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub this_run: bool,
    pub first_bytes: u64,
    pub first_t_s: f64,
    pub max_bytes: u64,
    pub max_t_s: f64,
    pub last_bytes: u64,
    pub last_t_s: f64,
}

/// One GPU over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct GpuSummary {
    pub gpu: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    /// The most memory in use in any sample, when, and who held it then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_used_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_t_s: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peak_holders: Vec<GpuHolder>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_temperature_c: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_power_w: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_sm_mhz: Option<u32>,
    /// Samples with each throttle reason.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub throttle_samples: BTreeMap<&'static str, u64>,
    /// Every process seen holding memory, with its first, largest and last amounts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<HolderTrack>,
}

/// What the sampler saw.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub interval_s: f64,
    pub samples: u64,
    pub gpus: Vec<GpuSummary>,
    /// The last samples before the end.
    pub last: Vec<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_peak_rss_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_peak_t_s: Option<f64>,
    /// The memory cgroup at the start and at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_start: Option<Cgroup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_end: Option<Cgroup>,
    pub events: Vec<Event>,
    /// Whether the kernel log was followed through the run (so that an OOM-killer line would
    /// have been seen); None when the sampler never started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_log: Option<KernelLogWatch>,
    /// The host's memory (MemTotal), bytes: the limit where no cgroup sets a lower one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<u64>,
    /// CPU time the sampler's own thread used, seconds (its cost; NVML's own thread not counted).
    pub sampler_cpu_s: f64,
    /// What could not be watched, and why (said once, never fatal).
    pub unwatched: Vec<String>,
    /// Every pid seen in the command's process tree.
    #[serde(skip)]
    pub tree: BTreeSet<u32>,
    #[serde(skip)]
    recent: VecDeque<Point>,
}

/// The kernel log during a run: where it was read from, and whether it could be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelLogWatch {
    /// /dev/kmsg (or the file a test names).
    pub path: String,
    /// True when it was followed from the start of the run to its end.
    pub followed: bool,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How to sample.
pub struct SamplerOptions {
    pub pid: u32,
    pub interval: Duration,
    /// Where the kernel log is followed (/dev/kmsg).
    pub kmsg: PathBuf,
    pub proc_root: PathBuf,
    pub sys_cgroup: PathBuf,
    /// timeline.jsonl, when saving.
    pub jsonl: Option<std::fs::File>,
    pub started: Instant,
    /// The same moment in seconds since the epoch (the System event log's records are dated so).
    pub started_unix_s: f64,
    /// Set when the command has ended (NVML still opening then gives up at once).
    pub ended: Arc<AtomicBool>,
}

/// The watch of the GPUs: the simulated ones (`GPUDOCTOR_SIM_GPUS`), else NVML, opened here so
/// that a slow or hung driver never delays the command.
fn open_monitor(stop: &AtomicBool) -> Result<Box<dyn Monitor>, String> {
    if let Some(b) = crate::gpu::sim::SimBackend::from_env() {
        if std::env::var("GPUDOCTOR_SIM_NVML").as_deref() != Ok("1") {
            return Ok(Box::new(crate::gpu::sim::SimMonitor::for_backend(&b)));
        }
    }
    match crate::gpu::watch::open_nvml(Duration::from_secs(5), stop) {
        Some(m) => match m.unavailable() {
            Some(why) => Err(why),
            None => Ok(m),
        },
        None => Err(format!(
            "NVML ({}) did not load: no NVIDIA driver here, so the GPUs were not watched",
            crate::probe::NVML_LIB
        )),
    }
}

/// CPU time of the calling thread, seconds (GetThreadTimes: kernel + user, 100 ns units).
#[cfg(windows)]
fn thread_cpu() -> f64 {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let z = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (z(), z(), z(), z());
    // SAFETY: the pseudo-handle of this thread and four valid out-pointers.
    if unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) } == 0 {
        return 0.0;
    }
    let t = |f: FILETIME| (u64::from(f.dwHighDateTime) << 32 | u64::from(f.dwLowDateTime)) as f64;
    (t(k) + t(u)) / 1e7
}

#[cfg(not(windows))]
fn thread_cpu() -> f64 {
    // SAFETY: clock_gettime into a zeroed timespec.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) == 0 {
            ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
        } else {
            0.0
        }
    }
}

/// Runs until `stop` says the command ended (or the sender is dropped), then takes a last look
/// at the kernel log, the NVML events and the cgroup. `follower` is the kernel log opened before
/// the command started (so nothing the kernel says in its first moments is missed), or why it
/// could not be.
pub fn run(
    opts: SamplerOptions,
    follower: Result<KernelFollower, String>,
    stop: Receiver<()>,
    shared: Arc<Mutex<Timeline>>,
) {
    let cpu0 = thread_cpu();
    let mut s = State {
        stopped: opts.ended.clone(),
        opts,
        monitor: None,
        kmsg: None,
    };
    if let Ok(mut t) = shared.lock() {
        t.interval_s = s.opts.interval.as_secs_f64();
        t.cgroup_start = host::cgroup(&s.opts.proc_root, "self", &s.opts.sys_cgroup);
        t.host_memory_bytes = host::memory_total(&s.opts.proc_root);
    }
    let path = s.opts.kmsg.display().to_string();
    let watch = match follower {
        Ok(k) => {
            s.kmsg = Some(k);
            KernelLogWatch {
                path,
                followed: true,
                error: None,
            }
        }
        Err(e) => {
            note(&shared, format!("the kernel log could not be followed ({e}): Xid and OOM-killer lines were not seen"));
            KernelLogWatch {
                path,
                followed: false,
                error: Some(crate::sanitize::clean_line(&e, 300)),
            }
        }
    };
    if let Ok(mut t) = shared.lock() {
        t.kernel_log = Some(watch);
    }
    let mut first = true;
    loop {
        let t0 = Instant::now();
        s.sample(&shared);
        if first {
            first = false;
            // The GPU watch opens after the first host sample, on this thread: NVML's start-up
            // (up to seconds) delays neither the command nor the first sample.
            match open_monitor(&s.stopped) {
                Ok(m) => s.monitor = Some(m),
                Err(e) => note(&shared, e),
            }
            if let (Some(m), Ok(mut t)) = (&s.monitor, shared.lock()) {
                for (g, why) in m.unwatched() {
                    t.unwatched
                        .push(format!("GPU {g}: Xid events not watched: {why}"));
                }
            }
        }
        if let Ok(mut t) = shared.lock() {
            t.sampler_cpu_s = thread_cpu() - cpu0;
        }
        match stop.recv_timeout(s.opts.interval.saturating_sub(t0.elapsed())) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    s.stopped.store(true, Ordering::SeqCst);
    #[cfg(windows)]
    s.event_log(&shared);
    // The end: the kernel's last words (the OOM killer writes before the child's exit is seen)
    // and the cgroup's counters.
    s.events(&shared);
    if let Ok(mut t) = shared.lock() {
        t.cgroup_end = t.cgroup_start.as_ref().map(host::reread);
        if let Some(m) = &s.monitor {
            if let Some(why) = m.unavailable() {
                t.unwatched.push(why);
            }
        }
        t.last = t.recent.iter().cloned().collect();
        t.sampler_cpu_s = thread_cpu() - cpu0;
    }
}

fn note(shared: &Arc<Mutex<Timeline>>, why: String) {
    if let Ok(mut t) = shared.lock() {
        t.unwatched.push(why);
    }
}

struct State {
    opts: SamplerOptions,
    stopped: Arc<AtomicBool>,
    monitor: Option<Box<dyn Monitor>>,
    kmsg: Option<KernelFollower>,
}

impl State {
    fn now(&self) -> f64 {
        (self.opts.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
    }

    fn sample(&mut self, shared: &Arc<Mutex<Timeline>>) {
        let t_s = self.now();
        let pids = host::tree(&self.opts.proc_root, self.opts.pid);
        let rss: u64 = pids
            .iter()
            .filter_map(|p| host::rss(&self.opts.proc_root, *p))
            .sum();
        let tree: BTreeSet<u32> = {
            let mut g = match shared.lock() {
                Ok(g) => g,
                Err(_) => return,
            };
            g.tree.extend(pids.iter().copied());
            g.tree.clone()
        };
        let mut gpus = Vec::new();
        if let Some(m) = self.monitor.as_mut() {
            for i in m.gpus() {
                let Some(s) = m.sample(i) else { continue };
                let processes = s.processes.map(|v| {
                    v.into_iter()
                        .map(|p| GpuHolder {
                            this_run: tree.contains(&p.pid),
                            pid: p.pid,
                            name: p.name,
                            bytes: p.used_bytes,
                        })
                        .collect()
                });
                gpus.push(GpuPoint {
                    gpu: i,
                    used_bytes: s.memory.map(|m| m.used_bytes),
                    total_bytes: s.memory.map(|m| m.total_bytes),
                    temperature_c: s.temperature_c,
                    power_w: s.power_w,
                    sm_mhz: s.sm_mhz,
                    throttle: s
                        .clock_event_reasons
                        .map(|bits| {
                            CLOCK_EVENTS
                                .iter()
                                .filter(|(b, _)| bits & b != 0)
                                .map(|(_, n)| *n)
                                .collect()
                        })
                        .unwrap_or_default(),
                    processes,
                });
            }
        }
        let cgroup_bytes = shared
            .lock()
            .ok()
            .and_then(|t| t.cgroup_start.clone())
            .and_then(|c| host::reread(&c).memory_current);
        let point = Point {
            t_s,
            gpus,
            host_rss_bytes: rss,
            host_processes: pids.len(),
            cgroup_bytes,
        };
        if let Some(f) = self.opts.jsonl.as_mut() {
            if let Ok(line) = serde_json::to_string(&point) {
                let _ = writeln!(f, "{line}");
            }
        }
        if let Ok(mut t) = shared.lock() {
            fold(&mut t, point);
        }
        self.events(shared);
    }

    /// Windows: the System event log's NVIDIA records written during the run (a display-driver
    /// reset, an Xid 13), read once at the end.
    #[cfg(windows)]
    fn event_log(&self, shared: &Arc<Mutex<Timeline>>) {
        let start = self.opts.started_unix_s;
        match crate::probe::windows::eventlog::since(start, Duration::from_secs(5)) {
            Ok(evs) => {
                if let Ok(mut t) = shared.lock() {
                    for (at, event, line) in evs {
                        if t.events.len() < 1000 {
                            t.events.push(Event {
                                t_s: ((at - start) * 1000.0).round() / 1000.0,
                                source: "event_log",
                                event,
                                gpu: None,
                                line: Some(line),
                                this_run: None,
                            });
                        }
                    }
                }
            }
            Err(e) => note(
                shared,
                format!("the System event log could not be read at the end of the run ({e}): display-driver resets were not seen"),
            ),
        }
    }

    fn events(&mut self, shared: &Arc<Mutex<Timeline>>) {
        let t_s = self.now();
        let mut new = Vec::new();
        if let Some(m) = self.monitor.as_mut() {
            for (gpu, xid) in m.xids(Duration::ZERO) {
                new.push(Event {
                    t_s,
                    source: "nvml",
                    event: LogEvent::Xid {
                        xid: xid as u32,
                        bus_id: None,
                        gpu_instance: None,
                        compute_instance: None,
                        pid: None,
                        process: None,
                        message: String::new(),
                        caused_by: None,
                        fatal: None,
                        recovery_action: None,
                    },
                    gpu: Some(gpu),
                    line: None,
                    this_run: None,
                });
            }
        }
        if let Some(k) = self.kmsg.as_mut() {
            for (ev, line) in k.poll() {
                new.push(Event {
                    t_s,
                    source: "kernel_log",
                    event: ev,
                    gpu: None,
                    line: Some(line),
                    this_run: None,
                });
            }
        }
        if new.is_empty() {
            return;
        }
        if let Ok(mut t) = shared.lock() {
            for mut e in new {
                if let LogEvent::OomKill { pid: Some(p), .. } = &e.event {
                    e.this_run = Some(*p == self.opts.pid || t.tree.contains(p));
                }
                if t.events.len() < 1000 {
                    t.events.push(e);
                }
            }
        }
    }
}

/// Folds one sample into the running summary.
pub fn fold(t: &mut Timeline, p: Point) {
    t.samples += 1;
    if t.host_peak_rss_bytes.is_none_or(|m| p.host_rss_bytes > m) {
        t.host_peak_rss_bytes = Some(p.host_rss_bytes);
        t.host_peak_t_s = Some(p.t_s);
    }
    for g in &p.gpus {
        let pos = match t.gpus.iter().position(|s| s.gpu == g.gpu) {
            Some(i) => i,
            None => {
                t.gpus.push(GpuSummary {
                    gpu: g.gpu,
                    ..GpuSummary::default()
                });
                t.gpus.len() - 1
            }
        };
        let Some(s) = t.gpus.get_mut(pos) else {
            continue;
        };
        if g.total_bytes.is_some() {
            s.total_bytes = g.total_bytes;
        }
        if let Some(u) = g.used_bytes {
            if s.peak_used_bytes.is_none_or(|m| u > m) {
                s.peak_used_bytes = Some(u);
                s.peak_t_s = Some(p.t_s);
                s.peak_holders = g.processes.clone().unwrap_or_default();
            }
        }
        if let Some(x) = g.temperature_c {
            s.max_temperature_c = Some(s.max_temperature_c.map_or(x, |m| m.max(x)));
        }
        if let Some(x) = g.power_w {
            s.max_power_w = Some(s.max_power_w.map_or(x, |m| m.max(x)));
        }
        if let Some(x) = g.sm_mhz {
            s.min_sm_mhz = Some(s.min_sm_mhz.map_or(x, |m| m.min(x)));
        }
        for r in &g.throttle {
            *s.throttle_samples.entry(r).or_insert(0) += 1;
        }
        for h in g.processes.iter().flatten() {
            let b = h.bytes.unwrap_or(0);
            match s.holders.iter_mut().find(|x| x.pid == h.pid) {
                Some(x) => {
                    if b > x.max_bytes {
                        x.max_bytes = b;
                        x.max_t_s = p.t_s;
                    }
                    x.last_bytes = b;
                    x.last_t_s = p.t_s;
                    x.this_run |= h.this_run;
                    if x.name.is_none() {
                        x.name = h.name.clone();
                    }
                }
                None => {
                    if s.holders.len() < 256 {
                        s.holders.push(HolderTrack {
                            pid: h.pid,
                            name: h.name.clone(),
                            this_run: h.this_run,
                            first_bytes: b,
                            first_t_s: p.t_s,
                            max_bytes: b,
                            max_t_s: p.t_s,
                            last_bytes: b,
                            last_t_s: p.t_s,
                        });
                    }
                }
            }
        }
    }
    if t.recent.len() >= KEEP_LAST {
        t.recent.pop_front();
    }
    t.recent.push_back(p);
}
