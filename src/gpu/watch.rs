//! The stress watch off the stress loop's thread: every NVML call (opening NVML included) runs
//! on a thread of its own, so a driver that hangs in NVML can neither stop the run nor delay its
//! answer to SIGINT / SIGTERM. The loop reads the latest sample and drains the Xid events.

use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::stress::{Monitor, Sample};

/// A watch that cannot watch: NVML did not answer, or failed.
pub struct DeadMonitor(pub String);

impl Monitor for DeadMonitor {
    fn sample(&mut self, _index: u32) -> Option<Sample> {
        None
    }
    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        thread::sleep(wait);
        Vec::new()
    }
    fn unavailable(&self) -> Option<String> {
        Some(self.0.clone())
    }
}

#[derive(Default)]
struct Shared {
    wanted: BTreeSet<u32>,
    latest: HashMap<u32, Sample>,
    unwatched: Vec<(u32, String)>,
    /// When the worker last finished a round of calls.
    beat: Option<Instant>,
    stop: bool,
}

/// Runs another monitor on its own thread, about once a second.
pub struct ThreadedMonitor {
    shared: Arc<Mutex<Shared>>,
    xids: mpsc::Receiver<(u32, u64)>,
    started: Instant,
    gpus: Vec<u32>,
}

/// A worker silent for this long has hung in the driver.
const STALE: Duration = Duration::from_secs(3);

impl ThreadedMonitor {
    pub fn start(mut inner: Box<dyn Monitor>) -> ThreadedMonitor {
        let shared: Arc<Mutex<Shared>> = Arc::default();
        let (tx, rx) = mpsc::channel();
        let s = shared.clone();
        let gpus = inner.gpus();
        if let Ok(mut g) = s.lock() {
            g.unwatched = inner.unwatched();
            g.beat = Some(Instant::now());
        }
        let spawned = thread::Builder::new()
            .name("stress-watch".into())
            .spawn(move || loop {
                let t = Instant::now();
                let wanted: Vec<u32> = match s.lock() {
                    Ok(g) if !g.stop => g.wanted.iter().copied().collect(),
                    _ => return,
                };
                for i in wanted {
                    if let Some(smp) = inner.sample(i) {
                        if let Ok(mut g) = s.lock() {
                            g.latest.insert(i, smp);
                        }
                    }
                }
                for x in inner.xids(Duration::from_millis(200)) {
                    if tx.send(x).is_err() {
                        return;
                    }
                }
                if let Ok(mut g) = s.lock() {
                    g.beat = Some(Instant::now());
                }
                thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
            });
        if spawned.is_err() {
            if let Ok(mut g) = shared.lock() {
                g.beat = None;
            }
        }
        ThreadedMonitor {
            shared,
            xids: rx,
            started: Instant::now(),
            gpus,
        }
    }
}

impl Drop for ThreadedMonitor {
    fn drop(&mut self) {
        if let Ok(mut g) = self.shared.lock() {
            g.stop = true;
        }
    }
}

impl Monitor for ThreadedMonitor {
    /// The newest sample the worker took since the last call, if any.
    fn sample(&mut self, index: u32) -> Option<Sample> {
        let mut g = self.shared.lock().ok()?;
        g.wanted.insert(index);
        g.latest.remove(&index)
    }

    fn xids(&mut self, wait: Duration) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        if let Ok(x) = self.xids.recv_timeout(wait) {
            out.push(x);
            while let Ok(x) = self.xids.try_recv() {
                out.push(x);
            }
        }
        out
    }

    fn gpus(&self) -> Vec<u32> {
        self.gpus.clone()
    }

    fn unwatched(&self) -> Vec<(u32, String)> {
        self.shared
            .lock()
            .map(|g| g.unwatched.clone())
            .unwrap_or_default()
    }

    /// Said when the worker stopped answering (a call into NVML hung) or never started.
    fn unavailable(&self) -> Option<String> {
        let g = self.shared.lock().ok()?;
        match g.beat {
            None => Some("the watch thread could not be started: nothing was watched".into()),
            Some(b) if b.elapsed() > STALE => Some(format!(
                "NVML stopped answering {:.0} s into the run (a call into the driver hung): the watch ended there",
                b.saturating_duration_since(self.started).as_secs_f64()
            )),
            Some(_) => None,
        }
    }
}

/// NVML for the watch of `stress` and `run`, opened on a thread under `limit` and then run on a
/// thread of its own ([`ThreadedMonitor`]): a hung driver costs the watch, never the run.
/// Opens the NVML watch within `limit`, or sooner when `stop` is set (SIGINT / SIGTERM while
/// NVML hangs in its init or event registration must still be answered at once).
pub fn open_nvml(
    limit: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<Box<dyn Monitor>> {
    use crate::probe::deadline::{self, Outcome};
    let p = deadline::spawn("nvml-watch", crate::probe::nvml_watch::NvmlMonitor::open);
    let r = p.wait_unless(std::time::Instant::now() + limit, stop);
    if stop.load(std::sync::atomic::Ordering::SeqCst) && matches!(r.0, Outcome::TimedOut) {
        return Some(Box::new(DeadMonitor(
            "interrupted while NVML was opening (it had not answered): nothing was watched".into(),
        )));
    }
    match r {
        (Outcome::Done(Some(m)), _) => Some(Box::new(ThreadedMonitor::start(Box::new(m)))),
        (Outcome::Done(None), _) => None,
        (Outcome::TimedOut, took) => Some(Box::new(DeadMonitor(format!(
            "NVML did not answer within {} s (nvmlInit or event registration hung): temperatures, clocks, ECC and Xid events were not watched",
            took.as_secs()
        )))),
        (Outcome::Panicked(e), _) => Some(Box::new(DeadMonitor(format!(
            "NVML failed while opening the watch ({e}): nothing was watched"
        )))),
    }
}
