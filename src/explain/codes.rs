//! Codes: Windows NTSTATUS values ([MS-ERREF] §2.3.1), POSIX exit statuses (128 + signal), CUDA
//! runtime/driver errors, the CUDA libraries' status codes and NVML return codes (mined from
//! their headers into knowledge/, [`crate::knowledge::codes`]) and Xids (the fault catalog). A
//! number that has several readings gives each, most likely first: an exit status above 128 is
//! read as a signal first; small numbers as a CUDA error people meet, then an Xid, an NVML
//! code, another CUDA error, a plain exit status. A library's status is read by its name, or by
//! number after the library's name ("cublas 13"): bare, the libraries' numbers overlap.

use serde_json::json;

use super::tables::tables;
pub use super::tables::{crash_ntstatus, ntstatus_name};
use super::Match;
use crate::faults::xid;
use crate::knowledge::codes::{self as kc, Code, Emitter};
use crate::matrix::Matrix;
use crate::vocab::{Category, Severity};

const CHECK: &str = "gpudoctor check";

/// A signal's name ("SIGKILL"), when gpudoctor knows it.
pub fn signal_name(sig: u32) -> Option<&'static str> {
    tables()?
        .signals
        .codes
        .iter()
        .find(|s| s.num == sig)
        .map(|s| s.name.as_str())
}

/// A signal's reading as a shell reports it ("Aborted (core dumped)"): the signal table's entry.
pub fn signal_reading(sig: u32) -> Option<Match> {
    signal_match(sig, None, "high")
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

/// The fix of a code: its own, else a pointer to its documentation and `check`.
fn code_fix(m: Match, e: &Emitter, c: &Code) -> Match {
    if c.fix.is_empty() {
        m.fix(
            format!(
                "See {} in the {} documentation for the call that returned it; gpudoctor check shows the machine's state",
                c.name, e.emitter
            ),
            &[CHECK],
        )
    } else {
        m.fix(&c.fix, &c.commands)
    }
}

fn severity_of(c: Category) -> Severity {
    match c {
        Category::ApplicationError => Severity::Warning,
        _ => Severity::Error,
    }
}

/// CUDA error `n`: the runtime's and the driver's code of that number, as one match.
fn cuda_match(n: i64, conf: &'static str) -> Option<Match> {
    let (rt, drv) = kc::cuda(n);
    let main = drv.or(rt)?;
    let e = kc::emitter(if drv.is_some() {
        "cuda-driver"
    } else {
        "cuda-runtime"
    })?;
    // The hand-written facts may sit on either twin.
    let told = [rt, drv]
        .into_iter()
        .flatten()
        .find(|c| c.mapped == "explicit")
        .unwrap_or(main);
    let name = match (rt, drv) {
        (Some(r), Some(d)) => format!("{} / {}", r.name, d.name),
        _ => main.name.clone(),
    };
    let text = [rt, drv]
        .into_iter()
        .flatten()
        .map(|c| c.text.as_str())
        .find(|t| !t.is_empty())
        .unwrap_or("");
    let emitters = match (rt, drv) {
        (Some(_), Some(_)) => "CUDA runtime and driver API",
        (Some(_), None) => "CUDA runtime API",
        _ => "CUDA driver API",
    };
    let mut meaning = if text.is_empty() {
        format!("CUDA error {n} ({emitters}, CUDA {})", main.version_range())
    } else {
        format!(
            "CUDA error {n}: \"{text}\" ({emitters}, CUDA {})",
            main.version_range()
        )
    };
    let doc = told.meaning();
    if !doc.is_empty() {
        meaning.push_str(": ");
        meaning.push_str(doc);
    }
    let m = Match::new("cuda_error", json!(n), name, main.category, meaning).causes(&told.causes);
    let mut m = code_fix(m, e, told);
    m.confidence = conf;
    m.severity = severity_of(main.category);
    Some(m)
}

/// A library's status code (cuDNN, cuBLAS, NCCL, ...), named with its library; its code is the
/// number asked about, else its number in the newest version.
fn library_match(e: &Emitter, c: &Code, shown: Option<i64>, conf: &'static str) -> Match {
    let nums: Vec<String> = c
        .values
        .iter()
        .map(|v| {
            if c.values.len() > 1 {
                format!("{} in {} {}", v.num, e.emitter, v.versions.join("/"))
            } else {
                v.num.to_string()
            }
        })
        .collect();
    let mut meaning = format!(
        "{} status {} ({}, enum {})",
        e.emitter,
        c.name,
        nums.join(", "),
        e.enum_type
    );
    if !c.text.is_empty() {
        meaning.push_str(&format!(": \"{}\"", c.text));
    }
    if !c.meaning().is_empty() {
        meaning.push_str(": ");
        meaning.push_str(c.meaning());
    }
    let m = Match::new(
        "library_status",
        json!(shown.or(c.num())),
        format!("{} ({})", c.name, e.emitter),
        c.category,
        meaning,
    )
    .causes(&c.causes);
    let mut m = code_fix(m, e, c);
    m.confidence = conf;
    m.severity = severity_of(c.category);
    m
}

/// The NVML return code a line names after NVML's name: `NVML_ERROR_X`, go-nvml's `ERROR_X`
/// ("nvml init failed: ERROR_LIBRARY_NOT_FOUND"), or nvmlErrorString's text ("nvml: Unknown
/// Error", "Failed to initialize NVML: GPU access blocked by the operating system";
/// knowledge/nvml.yaml `text`, the longest that the words after the colon start with).
pub fn nvml_in_line(line: &str) -> Option<Match> {
    let n = super::catalog::normalise(line);
    let c = n
        .match_indices("nvml")
        .find_map(|(at, _)| nvml_named_after(&n[at..]))
        .or_else(|| {
            n.match_indices("nvml")
                .find_map(|(at, _)| nvml_text_after(&n[at..]))
        })?;
    nvml_match(u32::try_from(c.num()?).ok()?, "high")
}

/// `NVML_ERROR_X`, go-nvml's `ERROR_X` or pynvml's `NVMLError_X` at the start of `s` or later
/// on it.
fn nvml_named_after(s: &str) -> Option<&'static kc::Code> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find_map(|w| {
            let w = w.strip_prefix("nvml_").unwrap_or(w);
            if let Some(x) = w.strip_prefix("error_") {
                return kc::nvml_named(&format!("NVML_ERROR_{}", x.to_ascii_uppercase()));
            }
            // pynvml's exception classes are the names in CamelCase, lowercased here:
            // NVMLError_NotSupported; compared with the names' letters alone.
            let x = w.strip_prefix("nvmlerror_")?;
            kc::emitter("nvml")?.entries.iter().find(|c| {
                c.name
                    .strip_prefix("NVML_ERROR_")
                    .is_some_and(|n| n.replace('_', "").eq_ignore_ascii_case(x))
            })
        })
}

/// The nvmlErrorString text that the words after the next colon start with (the longest).
fn nvml_text_after(s: &str) -> Option<&'static kc::Code> {
    let (_, rest) = s.split_once(':')?;
    let rest = rest.trim_start();
    kc::emitter("nvml")?
        .entries
        .iter()
        .filter(|c| !c.text.is_empty())
        .filter(|c| {
            rest.get(..c.text.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(&c.text))
                && !rest
                    .get(c.text.len()..)
                    .is_some_and(|r| r.starts_with(|ch: char| ch.is_ascii_alphanumeric()))
        })
        .max_by_key(|c| c.text.len())
}

fn nvml_match(num: u32, conf: &'static str) -> Option<Match> {
    let c = kc::nvml(i64::from(num))?;
    let e = kc::emitter("nvml")?;
    let m = Match::new(
        "nvml_error",
        json!(num),
        c.name.as_str(),
        c.category,
        format!("NVML return code {num}: {}", c.meaning()),
    )
    .causes(&c.causes);
    let mut m = if c.fix.is_empty() {
        m.fix(
            "Run gpudoctor check for the driver and GPU state.",
            &[CHECK],
        )
    } else {
        code_fix(m, e, c)
    };
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
            "program-specific failure code",
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
    // The CUDA errors people meet (code-categories.yaml tells about them) lead; the rest of the
    // CUDA codes come after the Xid and NVML readings.
    let (rt, drv) = kc::cuda(n);
    let told = [rt, drv]
        .into_iter()
        .flatten()
        .any(|c| c.mapped == "explicit");
    if told {
        out.extend(cuda_match(n, "medium"));
    }
    if let Some(m) = xid_match(u, "low") {
        out.push(m);
    }
    if let Some(m) = nvml_match(u, "low") {
        out.push(m);
    }
    if !told {
        out.extend(cuda_match(n, "low"));
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
    if let Some(v) = knowledge_code(t) {
        return Some(v);
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
        // A DXGI/Direct3D HRESULT is its header's code, not an NTSTATUS.
        if let Some(m) = u32::try_from(v)
            .ok()
            .and_then(|u| super::api_codes::hresult(u, first_clean))
        {
            return Some(vec![m]);
        }
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
        if let Some(m) = super::api_codes::hresult(v, first_clean) {
            return Some(vec![m]);
        }
        return Some(vec![nt_match(v, json!(first_clean), "high")]);
    }
    let n: i64 = first_clean.parse().ok()?;
    // The signed decimal of a DXGI/Direct3D HRESULT (-2005270523), as .NET prints it.
    if let Some(m) = i32::try_from(n)
        .ok()
        .filter(|v| *v < 0)
        .and_then(|v| super::api_codes::hresult(u32::from_ne_bytes(v.to_ne_bytes()), first_clean))
    {
        return Some(vec![m]);
    }
    let v = readings(n);
    (!v.is_empty()).then_some(v)
}

/// A code of the knowledge by its name ("CUDNN_STATUS_NOT_INITIALIZED", "cudaErrorLaunchTimeout",
/// "NVML_ERROR_GPU_IS_LOST"), or a library's status by number after the library's name
/// ("cublas 13", "cuDNN status 1001", "nccl error 2").
fn knowledge_code(t: &str) -> Option<Vec<Match>> {
    if let Some((e, c)) = kc::by_name(t) {
        let m = match e.family.as_str() {
            "cuda" => cuda_match(c.num()?, "high"),
            "nvml" => nvml_match(u32::try_from(c.num()?).ok()?, "high"),
            _ => Some(library_match(e, c, None, "high")),
        };
        return Some(m.into_iter().collect());
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    let (lib, n) = match words.as_slice() {
        [lib, n] | [lib, _, n] => (*lib, n.trim_start_matches('#')),
        _ => return None,
    };
    let n: i64 = n.parse().ok()?;
    let e = kc::all()
        .iter()
        .find(|e| e.family != "cuda" && e.family != "nvml" && e.id.eq_ignore_ascii_case(lib))?;
    let c = e.entries.iter().find(|c| c.has_num(n))?;
    Some(vec![library_match(e, c, Some(n), "high")])
}

/// A status code checked against its library's success value, by number: glog's `CHECK_EQ` as
/// Caffe, MXNet and PaddlePaddle print it ("Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs.
/// 0)"). `lib` is the success value's name, lowercase (`cudasuccess`, `cublas_status_success`,
/// `cudnn_status_success`: the ones the catalog's `glog-check-status` finds); `n` the number.
/// CUDA's own by its text where the line has one (the runtime renumbered its errors in CUDA 10:
/// Caffe's "(8 vs. 0)  invalid device function" is today's 98).
pub fn checked_status(lib: &str, n: i64, line: &str) -> Option<Match> {
    let id = match lib {
        "cudasuccess" => return cuda_by_text(line).or_else(|| cuda_match(n, "high")),
        "cublas_status_success" => "cublas",
        "cudnn_status_success" => "cudnn",
        _ => return None,
    };
    let e = kc::emitter(id)?;
    let c = e.entries.iter().find(|c| c.has_num(n))?;
    Some(library_match(e, c, Some(n), "high"))
}

/// The CUDA error whose message text (what cudaGetErrorString prints) a line contains, as
/// words ("no kernel image is available…"); of several, the longest. The line has already said
/// CUDA failed or quotes a text that is CUDA's alone (the `cuda-error` signature's patterns).
pub fn cuda_by_text(line: &str) -> Option<Match> {
    let n = super::catalog::normalise(line);
    let (_, c) = super::catalog::cuda_texts()
        .iter()
        .filter(|(t, _)| contains_words(&n, t))
        .max_by_key(|(_, c)| c.text.len())?;
    cuda_match(c.num()?, "high")
}

/// Whether `needle` occurs in `hay` with no word character just before or after it.
fn contains_words(hay: &str, needle: &str) -> bool {
    let b = hay.as_bytes();
    hay.match_indices(needle).any(|(i, m)| {
        let before = i.checked_sub(1).and_then(|j| b.get(j)).copied();
        let after = b.get(i + m.len()).copied();
        !before.is_some_and(super::catalog::word_byte)
            && !after.is_some_and(super::catalog::word_byte)
    })
}

#[cfg(test)]
#[path = "codes_tests.rs"]
mod tests;
