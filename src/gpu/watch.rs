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
}

/// A worker silent for this long has hung in the driver.
const STALE: Duration = Duration::from_secs(3);

impl ThreadedMonitor {
    pub fn start(mut inner: Box<dyn Monitor>) -> ThreadedMonitor {
        let shared: Arc<Mutex<Shared>> = Arc::default();
        let (tx, rx) = mpsc::channel();
        let s = shared.clone();
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
