//! What `check` is doing while it probes, on a terminal: a spinner on stderr with the step and
//! the time spent against `--timeout` (a `--deep` import can take many seconds). It appears only
//! when the work lasts longer than a moment, is erased when the work ends, and never appears
//! when stderr is not a terminal (logs, pipes, Slurm, CI stay byte-for-byte the same).

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the spinner shows (a check without a driver takes milliseconds).
const QUIET_FOR: Duration = Duration::from_millis(400);

/// A spinner that shows after [`QUIET_FOR`] and is erased when dropped.
pub struct Activity {
    bar: Option<ProgressBar>,
    /// true once dropped: the delayed start must not draw after that.
    ended: Arc<Mutex<bool>>,
}

impl Activity {
    /// Starts it (inert when stderr is not a terminal or TERM is dumb).
    pub fn start(message: &str) -> Activity {
        let ended = Arc::new(Mutex::new(false));
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        if !std::io::stderr().is_terminal() || dumb {
            return Activity { bar: None, ended };
        }
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        let (b, e) = (bar.clone(), ended.clone());
        std::thread::spawn(move || {
            std::thread::sleep(QUIET_FOR);
            if let Ok(done) = e.lock() {
                if !*done {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.enable_steady_tick(Duration::from_millis(120));
                }
            }
        });
        Activity {
            bar: Some(bar),
            ended,
        }
    }

    /// Says what it is doing now.
    pub fn say(&self, message: &str) {
        if let Some(b) = &self.bar {
            b.set_message(message.to_string());
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Ok(mut done) = self.ended.lock() {
            *done = true;
            if let Some(b) = &self.bar {
                b.finish_and_clear();
            }
        }
    }
}
