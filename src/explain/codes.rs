//! Codes: Windows NTSTATUS values ([MS-ERREF] §2.3.1), POSIX exit statuses (128 + signal), CUDA
//! runtime/driver errors (CUDA Runtime API `enum cudaError`, ../shared/reference/faults.md §7a),
//! NVML return codes (nvml.h `nvmlReturn_t`) and Xids (the fault catalog). A number that has
//! several readings gives each, most likely first: an exit status above 128 is read as a signal
//! first; small numbers as a CUDA error, then an Xid, an NVML code, a plain exit status.

use serde_json::json;

use super::tables::{tables, Cuda};
use super::Match;
use crate::faults::xid;
use crate::matrix::Matrix;
use crate::report::{Category, Severity};

const CHECK: &str = "gpudoctor check";

/// The CUDA error table (empty only if the built-in tables were broken).
fn cuda_codes() -> &'static [Cuda] {
    tables().map_or(&[], |t| t.cuda.codes.as_slice())
}

/// A signal's name ("SIGKILL"), when gpudoctor knows it.
pub fn signal_name(sig: u32) -> Option<&'static str> {
    tables()?
        .signals
        .codes
        .iter()
        .find(|s| s.num == sig)
        .map(|s| s.name.as_str())
}

fn signal_match(sig: u32, as_exit: Option<i64>, conf: &'static str) -> Option<Match> {
    let s = tables()?.signals.codes.iter().find(|s| s.num == sig)?;
    let (name, meaning) = (&s.name, &s.meaning);
    let (kind, code, what) = match as_exit {
        Some(e) if e < 0 => ("signal", json!(e), format!("the process was killed by signal {sig} ({name}): {meaning} (a negative return code is how Python's subprocess reports it)")),
        Some(e) => ("exit_code", json!(e), format!("exit status {e} = 128 + {sig}: the process was killed by signal {name} — {meaning}")),
        None => ("signal", json!(name), format!("signal {sig} ({name}): {meaning}")),
    };
    let mut m = Match::new(kind, code, name.as_str(), s.category, what).causes(&s.causes);
    m.confidence = conf;
    m = m.fix(&s.fix, &s.commands);
    m.severity = s.severity;
    if !s.note.is_empty() {
        m.meaning.push_str(". ");
        m.meaning.push_str(&s.note);
    }
    Some(m)
}

/// The NTSTATUS of an exit status that is a Windows error code, which a crashed process ends
/// with: 0xC0000000 to 0xCFFFFFFF, seen as a negative 32-bit number (-1073740791) or an
/// unsigned one (3221226505). 0xFFFFFFFF is exit(-1), a program's own choice, not a crash.
pub fn crash_ntstatus(n: i64) -> Option<u32> {
    let u = if (i64::from(i32::MIN)..0).contains(&n) {
        (n as i32) as u32
    } else if (0..=i64::from(u32::MAX)).contains(&n) {
        n as u32
    } else {
        return None;
    };
    (0xC000_0000..0xD000_0000).contains(&u).then_some(u)
}

/// The name of an NTSTATUS code explain's table knows ("STATUS_ACCESS_VIOLATION").
pub fn ntstatus_name(u: u32) -> Option<&'static str> {
    tables()?
        .ntstatus
        .codes
        .iter()
        .find(|n| n.code == u)
        .map(|n| n.name.as_str())
}

fn nt_match(u: u32, shown: serde_json::Value, conf: &'static str) -> Match {
    let forms = format!("0x{u:08X} = {u} = {}", u as i32);
    match tables().and_then(|t| t.ntstatus.codes.iter().find(|n| n.code == u)) {
        Some(n) => {
            let mut m = Match::new(
                "ntstatus",
                shown,
                n.name.as_str(),
                Category::WindowsCrashCode,
                format!("{forms}: {}", n.meaning),
            )
            .causes(&n.causes)
            .fix(&n.fix, &n.commands);
            m.confidence = conf;
            m
        }
        None => {
            let mut m = Match::new(
                "ntstatus",
                shown,
                "NTSTATUS",
                Category::WindowsCrashCode,
                format!(
                    "{forms}: a Windows NTSTATUS {} code gpudoctor does not know by name",
                    if u >= 0xC000_0000 { "error" } else { "warning" }
                ),
            )
            .fix(
                "Look the code up in Microsoft's NTSTATUS list ([MS-ERREF] 2.3.1).",
                &[] as &[&str],
            );
            m.confidence = "low";
            m
        }
    }
}

fn cuda_match(c: &Cuda, conf: &'static str) -> Match {
    let name = if c.driver.is_empty() {
        c.runtime.to_string()
    } else {
        format!("{} / {}", c.runtime, c.driver)
    };
    let meaning = if c.text.is_empty() {
        format!("CUDA error {}", c.num)
    } else {
        format!("CUDA error {}: \"{}\"", c.num, c.text)
    };
    let mut m = Match::new("cuda_error", json!(c.num), name, c.category, meaning)
        .causes(&c.causes)
        .fix(&c.fix, &c.commands);
    m.confidence = conf;
    m.severity = match c.category {
        Category::ApplicationError => Severity::Warning,
        _ => Severity::Error,
    };
    m
}

fn nvml_match(num: u32, conf: &'static str) -> Option<Match> {
    let e = tables()?.nvml.codes.iter().find(|e| e.num == num)?;
    let mut m = Match::new(
        "nvml_error",
        json!(num),
        e.name.as_str(),
        e.category,
        format!("NVML return code {num}: {}", e.meaning),
    )
    .fix(
        "Run gpudoctor check for the driver and GPU state.",
        &[CHECK],
    );
    m.confidence = conf;
    Some(m)
}

pub fn xid_match(x: u32, conf: &'static str) -> Option<Match> {
    let i = xid::lookup(x)?;
    let mut m = Match::new(
        "xid",
        json!(x),
        format!("Xid {x} {}", i.name),
        i.category,
        format!("Xid {x}: {}", i.meaning),
    )
    .fix(
        format!("{}.", capital(&i.action)),
        &["sudo dmesg -T | grep -E 'NVRM: Xid'", CHECK],
    );
    m.confidence = conf;
    m.severity = i.level.severity();
    m.emitter = crate::knowledge::kernel::xid_emitter(i);
    Some(m)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn exit_match(n: i64, conf: &'static str) -> Option<Match> {
    let (name, meaning): (&str, String) = match n {
        0 => ("success", "exit status 0: the process succeeded".into()),
        1 => (
            "general error",
            "exit status 1: the program reported a failure (a Python exception ends this way)"
                .into(),
        ),
        2 => (
            "usage error",
            "exit status 2: bad command-line usage (also Python's status for a missing script)"
                .into(),
        ),
        126 => (
            "not executable",
            "exit status 126: the command was found but could not be executed".into(),
        ),
        127 => (
            "command not found",
            "exit status 127: the command was not found".into(),
        ),
        3..=125 | 128..=255 => (
            "exit status",
            format!("exit status {n}: a program-specific failure code"),
        ),
        _ => return None,
    };
    let mut m = Match::new(
        "exit_code",
        json!(n),
        name,
        Category::ApplicationError,
        meaning,
    )
    .fix(
        "Read the program's last messages (gpudoctor explain --log <log>).",
        &[] as &[&str],
    );
    m.confidence = conf;
    m.severity = Severity::Info;
    Some(m)
}

/// Every reading of a number, most likely first.
pub fn readings(n: i64) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    // Windows: negative int32 or unsigned >= 0x80000000.
    if (i64::from(i32::MIN)..=-65).contains(&n) || (0x8000_0000..=0xFFFF_FFFF).contains(&n) {
        let u = n as i32 as u32;
        let u = if n > 0 { n as u32 } else { u };
        out.push(nt_match(u, json!(n), "high"));
        return out;
    }
    if (-64..=-1).contains(&n) {
        if let Some(m) = signal_match((-n) as u32, Some(n), "high") {
            out.push(m);
        }
        return out;
    }
    if (129..=192).contains(&n) {
        if let Some(m) = signal_match((n - 128) as u32, Some(n), "high") {
            out.push(m);
        }
    }
    let Ok(u) = u32::try_from(n) else { return out };
    if let Some(c) = cuda_codes().iter().find(|c| c.num == u) {
        out.push(cuda_match(c, "medium"));
    }
    if let Some(m) = xid_match(u, "low") {
        out.push(m);
    }
    if let Some(m) = nvml_match(u, "low") {
        out.push(m);
    }
    if out.is_empty() || (n <= 255 && !(129..=192).contains(&n)) {
        if let Some(m) = exit_match(n, "low") {
            out.push(m);
        }
    }
    // 126-128 are the shell's own statuses (not executable, not found, invalid exit): first.
    if (126..=128).contains(&n) {
        if let Some(i) = out.iter().position(|m| m.kind == "exit_code") {
            let e = out.remove(i);
            out.insert(0, e);
        }
    }
    // With one reading there is no doubt; with several, the first is likely and the rest possible.
    let many = out.len() > 1;
    for (i, m) in out.iter_mut().enumerate() {
        m.confidence = match (many, i) {
            (false, _) => "high",
            (true, 0) => {
                if m.confidence == "high" {
                    "high"
                } else {
                    "medium"
                }
            }
            _ => "low",
        };
    }
    out
}

/// The input as a code, when it is one: a number in any form, or a code's name.
pub fn parse(input: &str, _m: &Matrix) -> Option<Vec<Match>> {
    let t = input.trim();
    let t = t
        .trim_start_matches("exit code")
        .trim_start_matches("exit status")
        .trim()
        .trim_matches(|c| c == '(' || c == ')')
        .trim();
    // "-1073740791 (0xC0000409)": the first form is enough.
    let first = t.split_whitespace().next().unwrap_or("");
    let lower = t.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("xid") {
        let n: u32 = rest.trim().trim_start_matches(':').trim().parse().ok()?;
        return Some(xid_match(n, "high").into_iter().collect());
    }
    let tab = tables()?;
    if let Some(x) = tab
        .signals
        .codes
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(t))
    {
        return Some(signal_match(x.num, None, "high").into_iter().collect());
    }
    if let Some(c) = tab.cuda.codes.iter().find(|c| {
        c.runtime.eq_ignore_ascii_case(t)
            || (!c.driver.is_empty() && c.driver.eq_ignore_ascii_case(t))
    }) {
        return Some(vec![cuda_match(c, "high")]);
    }
    if let Some(e) = tab
        .nvml
        .codes
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(t))
    {
        return Some(nvml_match(e.num, "high").into_iter().collect());
    }
    if let Some(n) = tab.ntstatus.codes.iter().find(|n| {
        n.name.eq_ignore_ascii_case(t)
            || n.name.trim_start_matches("STATUS_").eq_ignore_ascii_case(t)
    }) {
        return Some(vec![nt_match(n.code, json!(n.name.as_str()), "high")]);
    }
    let first_clean = first.trim_matches(|c| c == '(' || c == ')' || c == ',');
    if t.split_whitespace().count() > 2 {
        return None;
    }
    if let Some(h) = first_clean
        .strip_prefix("0x")
        .or_else(|| first_clean.strip_prefix("0X"))
    {
        let v = u64::from_str_radix(h, 16).ok()?;
        if v <= 0xFFFF_FFFF {
            return Some(
                readings(v as i64)
                    .into_iter()
                    .map(|mut m| {
                        m.code = json!(first_clean);
                        m
                    })
                    .collect(),
            );
        }
        return None;
    }
    if first_clean.len() == 8
        && first_clean.bytes().all(|b| b.is_ascii_hexdigit())
        && !first_clean.bytes().all(|b| b.is_ascii_digit())
    {
        let v = u32::from_str_radix(first_clean, 16).ok()?;
        return Some(vec![nt_match(v, json!(first_clean), "high")]);
    }
    let n: i64 = first_clean.parse().ok()?;
    let v = readings(n);
    (!v.is_empty()).then_some(v)
}

/// The CUDA error whose message text a line contains ("no kernel image is available…").
pub fn cuda_by_text(line: &str) -> Option<Match> {
    let c = cuda_codes().iter().find(|c| {
        !c.text.is_empty() && c.text.len() > 12 && line.contains(c.text.trim_end_matches('.'))
    })?;
    Some(cuda_match(c, "high"))
}

#[cfg(test)]
#[path = "codes_tests.rs"]
mod tests;
