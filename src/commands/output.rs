//! What a command produced, carried back through [`crate::app`] to `main`, which alone prints.
//! Here, beside the commands that make it, so that they need not import the dispatcher above them.

use crate::report::ExitStatus;

/// What a command produced.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl Output {
    pub(crate) fn ok(stdout: String, status: ExitStatus) -> Output {
        Output {
            stdout,
            stderr: String::new(),
            status,
        }
    }
    /// gpudoctor itself failed (exit 2) with a message that says what to do. The message often quotes the user's files and
    /// arguments: every line is cleaned of terminal escapes and control characters.
    pub fn tool_error(msg: impl AsRef<str>) -> Output {
        let clean: Vec<String> = msg
            .as_ref()
            .lines()
            .map(|l| crate::sanitize::clean_line(l, 2000))
            .collect();
        Output {
            stdout: String::new(),
            stderr: format!("gpudoctor: error: {}\n", clean.join("\n")),
            status: ExitStatus::ToolFailed,
        }
    }
}
