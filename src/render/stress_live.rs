//! The live view of `gpudoctor stress`: one progress bar per GPU on a terminal (indicatif, on
//! stderr), a plain line per GPU every 10 s otherwise (stderr, for logs), or JSON Lines events
//! on stdout. Errors are shown the moment they are seen. The final report is rendered after.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::sanitize;
use crate::snapshot::StressEvent as Event;

/// Where events go.
pub trait Sink {
    fn event(&mut self, e: &Event);
    fn finish(&mut self) {}
    /// The first error writing the events, if any (a stream that cannot be written makes the
    /// whole run gpudoctor's failure, exit 2: its reader would see a cut stream).
    fn failed(&self) -> Option<&std::io::Error> {
        None
    }
}

/// JSON Lines on a writer (stdout), one event a line, flushed as it comes. After the first
/// failed write nothing more is tried.
pub struct JsonLines<W: Write> {
    out: W,
    error: Option<std::io::Error>,
}

impl<W: Write> JsonLines<W> {
    pub fn new(out: W) -> JsonLines<W> {
        JsonLines { out, error: None }
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn event(&mut self, e: &Event) {
        if self.error.is_some() {
            return;
        }
        if let Ok(line) = serde_json::to_string(e) {
            if let Err(err) = writeln!(self.out, "{line}").and_then(|()| self.out.flush()) {
                self.error = Some(err);
            }
        }
    }
    fn failed(&self) -> Option<&std::io::Error> {
        self.error.as_ref()
    }
}

/// One-line text of an event, or None for events shown only in summaries.
fn describe(e: &Event) -> Option<String> {
    match e {
        Event::Start {
            gpu,
            name,
            free_bytes,
            tested_bytes,
            seconds,
        } => Some(format!(
            "GPU {gpu} ({}): testing {:.2} of {:.2} GiB free for {seconds:.0} s",
            sanitize::clean_line(name, 80),
            *tested_bytes as f64 / (1u64 << 30) as f64,
            *free_bytes as f64 / (1u64 << 30) as f64
        )),
        Event::MemoryErrors {
            gpu,
            pattern,
            count,
            first,
        } => Some(format!(
            "GPU {gpu}: {count} memory error(s) under '{pattern}'{}",
            first
                .first()
                .map(|e| format!(
                    ", first in chunk {} at offset {:#x} (expected {:#010x}, read {:#010x})",
                    e.chunk, e.offset, e.expected, e.actual
                ))
                .unwrap_or_default()
        )),
        Event::ComputeErrors { gpu, test, count } => {
            Some(format!("GPU {gpu}: {count} wrong {test} result(s)"))
        }
        Event::Xid { gpu, xid } => Some(format!("GPU {gpu}: Xid {xid}")),
        Event::Failed { gpu, error } => Some(format!(
            "GPU {gpu}: stopped: {}",
            sanitize::clean_line(&error.to_string(), 300)
        )),
        _ => None,
    }
}

fn progress_text(p: &Event, sample: Option<&Event>) -> Option<String> {
    let Event::Progress {
        elapsed_s,
        memory_rounds,
        memory_errors,
        compute_launches,
        compute_errors,
        gemm_errors,
        memory_gbps,
        fma_gflops,
        ..
    } = p
    else {
        return None;
    };
    let mut s = format!(
        "{elapsed_s:.0}s mem {memory_rounds} rounds {memory_errors} err{} | compute {compute_launches} launches {} err{}",
        memory_gbps.map(|g| format!(" {g:.0} GB/s")).unwrap_or_default(),
        compute_errors + gemm_errors,
        fma_gflops.map(|g| format!(" {g:.0} GFLOP/s")).unwrap_or_default(),
    );
    if let Some(Event::Sample {
        temperature_c,
        power_w,
        ..
    }) = sample
    {
        if let Some(t) = temperature_c {
            s.push_str(&format!(" | {t} °C"));
        }
        if let Some(p) = power_w {
            s.push_str(&format!(" {p:.0} W"));
        }
    }
    Some(s)
}

/// Plain lines on stderr: events at once, progress of each GPU every `every`.
pub struct PlainLines<W: Write> {
    out: W,
    every: Duration,
    last: Instant,
    latest: BTreeMap<u32, Event>,
    samples: BTreeMap<u32, Event>,
}

impl<W: Write> PlainLines<W> {
    pub fn new(out: W, every: Duration) -> Self {
        PlainLines {
            out,
            every,
            last: Instant::now(),
            latest: BTreeMap::new(),
            samples: BTreeMap::new(),
        }
    }
    fn flush_progress(&mut self) {
        for (gpu, p) in &self.latest {
            if let Some(t) = progress_text(p, self.samples.get(gpu)) {
                let _ = writeln!(self.out, "GPU {gpu}: {t}");
            }
        }
        let _ = self.out.flush();
    }
}

impl<W: Write> Sink for PlainLines<W> {
    fn event(&mut self, e: &Event) {
        match e {
            Event::Progress { gpu, .. } => {
                self.latest.insert(*gpu, e.clone());
            }
            Event::Sample { gpu, .. } => {
                self.samples.insert(*gpu, e.clone());
            }
            _ => {
                if let Some(t) = describe(e) {
                    let _ = writeln!(self.out, "{t}");
                }
            }
        }
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            self.flush_progress();
        }
    }
    fn finish(&mut self) {
        self.flush_progress();
    }
}

/// Progress bars on a terminal (stderr), one per GPU, with events printed above them.
pub struct Bars {
    multi: MultiProgress,
    bars: BTreeMap<u32, ProgressBar>,
    samples: BTreeMap<u32, Event>,
}

impl Bars {
    pub fn new() -> Self {
        Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: BTreeMap::new(),
            samples: BTreeMap::new(),
        }
    }
}

impl Default for Bars {
    fn default() -> Self {
        Self::new()
    }
}

impl Sink for Bars {
    fn event(&mut self, e: &Event) {
        match e {
            Event::Start { gpu, seconds, .. } => {
                let pb = self.multi.add(ProgressBar::new((*seconds * 10.0) as u64));
                let style = ProgressStyle::with_template("GPU {prefix} [{bar:30}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
                pb.set_style(style);
                pb.set_prefix(gpu.to_string());
                self.bars.insert(*gpu, pb);
                if let Some(t) = describe(e) {
                    let _ = self.multi.println(t);
                }
            }
            Event::Progress { gpu, elapsed_s, .. } => {
                if let (Some(pb), Some(t)) =
                    (self.bars.get(gpu), progress_text(e, self.samples.get(gpu)))
                {
                    pb.set_position((*elapsed_s * 10.0) as u64);
                    pb.set_message(t);
                }
            }
            Event::Sample { gpu, .. } => {
                self.samples.insert(*gpu, e.clone());
            }
            Event::Done { gpu } => {
                if let Some(pb) = self.bars.get(gpu) {
                    pb.finish();
                }
            }
            _ => {
                if let Some(t) = describe(e) {
                    let _ = self.multi.println(t);
                }
            }
        }
    }
    fn finish(&mut self) {
        for pb in self.bars.values() {
            pb.finish();
        }
        let _ = self.multi.clear();
    }
}
