//! Status codes of the graphics and video APIs (issue 30): Vulkan's `VkResult`, the DXGI and
//! Direct3D HRESULTs and NVIDIA's `NVENCSTATUS`, each code as its header defines it (the message
//! families with a `code` in knowledge/messages/vulkan.yaml, dxgi.yaml and nvenc-api.yaml, mined
//! by scripts/knowledge/msg_families.py's code tables). A line names a code by its name
//! (`VK_ERROR_DEVICE_LOST`, word-bounded) or by its number printed with its API's context
//! ("VkResult -4", "vkCreateInstance failed -9", "hr 0x887A0005", "nvEncOpenEncodeSessionEx(...)
//! returned error 2"): a bare number is never read as one of these codes. The reading is the
//! code's own (name, value, the header's description) with its signature's explanation and fix.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::json;

use super::Match;
use crate::knowledge::messages::{families, Family};
use crate::vocab::Category;

/// How each API prints its numbers, on a normalised line (lowercased): the emitter of the
/// families whose codes the first capture is, and the form. Vulkan's errors are negative
/// (VK_SUCCESS and the positive codes are successful completions); an HRESULT of Direct3D's or
/// DXGI's facilities (0x876, 0x879, 0x87A, 0x87B, 0x87C, 0x87E) is theirs in any context when it is
/// written as hexadecimal with `0x`, after "hresult"/"hr"/"dxgi"/"d3d" without it, and as the
/// signed decimal .NET prints; NVENC's numbers follow an NVENC call's name, as NVIDIA's samples
/// (NvEncoder's NVENC_API_CALL: "<call> returned error <n>") and NVEnc ("Error on <call>: <n>")
/// print them.
const NUMBER_FORMS: &[(&str, &str)] = &[
    ("vulkan", r"\bvk_?result\b\W{0,3}(-\d{1,10})\b"),
    (
        "vulkan",
        r"\b(?:vulkan|vk[a-z0-9]{4,})\b[^\n]{0,80}?\b(?:error|result|code|failed|returned|status)\b\W{0,6}(-\d{1,10})\b",
    ),
    ("dxgi", r"\b0x(887[69a-e][0-9a-f]{4})\b"),
    (
        "dxgi",
        r"\b(?:hresult|hr|dxgi\w*|d3d\w*|reason)\b\W{0,16}(887[69a-e][0-9a-f]{4})\b",
    ),
    ("dxgi", r"(?:^|[^\w-])(-2005[0-9]{6})\b"),
    (
        "nvenc-api",
        r"\bnv_?enc\w*\b[^\n]{0,120}?\breturned error\W{0,3}(\d{1,2})\b",
    ),
    ("nvenc-api", r"\berror on nv_?enc\w*\W{0,4}(\d{1,2})\b"),
    // FFmpeg's nvenc.c (nvenc_print_error: "%s: %s (%d)") after its "[h264_nvenc @ 0x...]".
    (
        "nvenc-api",
        r"nvenc\b[^\n]{0,100}?\bfailed!?: [a-z][a-z ,]{2,60} \((\d{1,2})\)",
    ),
];

fn number_forms() -> &'static [(&'static str, Option<Regex>)] {
    static F: OnceLock<Vec<(&'static str, Option<Regex>)>> = OnceLock::new();
    F.get_or_init(|| {
        NUMBER_FORMS
            .iter()
            .map(|(e, r)| (*e, Regex::new(r).ok()))
            .collect()
    })
}

/// The families that are status codes of an API.
fn code_families() -> impl Iterator<Item = &'static Family> {
    families().iter().filter(|f| f.code.is_some())
}

/// Every code a line names, by name (each once) or, when it names none, by the first number
/// printed with its API's context; `None` when there is none (the signature's own text stands).
pub fn in_line(line: &str) -> Option<Vec<Match>> {
    let n = super::catalog::normalise(line);
    let mut out: Vec<Match> = Vec::new();
    // Each name is word-bounded (its family's regex): VK_ERROR_OUT_OF_POOL_MEMORY is not read in
    // VK_ERROR_OUT_OF_POOL_MEMORY_KHR, which is a code (an alias) of its own.
    for f in code_families().filter(|f| f.matches_pieces(&n)) {
        for m in reading(f, None)
            .into_iter()
            .flat_map(|m| with_alternates(m, f))
        {
            if !out.iter().any(|o| o.key == m.key) {
                out.push(m);
            }
        }
    }
    if out.is_empty() {
        if let Some((f, shown)) = by_number(&n) {
            out.extend(
                reading(f, Some(&shown))
                    .into_iter()
                    .flat_map(|m| with_alternates(m, f)),
            );
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A reading and, when its signature is ambiguous, the signature's less common causes after it
/// (as `explain` gives them for a signature that matched the line itself, with the same keys).
fn with_alternates(m: Match, f: &Family) -> Vec<Match> {
    let Some(sig) = signature_of(f).filter(|s| s.ambiguous) else {
        return vec![m];
    };
    let mut out = vec![m];
    if let Some(first) = out.first_mut() {
        first.confidence = "medium";
    }
    out.extend(sig.also.iter().map(|alt| super::less_often(sig, *alt)));
    out
}

/// The code a number printed with its API's context is, and the number as printed.
fn by_number(n: &str) -> Option<(&'static Family, String)> {
    for (emitter, re) in number_forms() {
        let Some(re) = re else { continue };
        for c in re.captures_iter(n) {
            let Some(shown) = c.get(1).map(|x| x.as_str()) else {
                continue;
            };
            let value = match *emitter {
                "dxgi" if !shown.starts_with('-') => i64::from_str_radix(shown, 16).ok(),
                // The signed decimal of an HRESULT: its unsigned 32 bits.
                "dxgi" => shown
                    .parse::<i32>()
                    .ok()
                    .map(|v| i64::from(u32::from_ne_bytes(v.to_ne_bytes()))),
                _ => shown.parse::<i64>().ok(),
            };
            if let Some(f) = value.and_then(|v| by_value(emitter, v)) {
                return Some((f, shown.to_string()));
            }
        }
    }
    None
}

/// The code (not an alias) of an emitter's table with this value.
fn by_value(emitter: &str, v: i64) -> Option<&'static Family> {
    code_families().find(|f| {
        f.emitter == emitter
            && f.code
                .as_ref()
                .is_some_and(|c| c.alias_of.is_none() && c.number() == Some(v))
    })
}

/// A DXGI or Direct3D HRESULT given alone ("0x887A0005", "887A0005", "-2005270523"), when its
/// header defines it: read before the NTSTATUS table, whose facility it is not.
pub fn hresult(u: u32, shown: &str) -> Option<Match> {
    by_value("dxgi", i64::from(u)).and_then(|f| reading(f, Some(shown)))
}

/// The signature a code's family names, in the built-in catalog.
fn signature_of(f: &Family) -> Option<&'static super::catalog::Signature> {
    let id = f.signature.as_deref()?;
    super::embedded_catalog()?
        .signatures
        .iter()
        .find(|s| s.id == id)
}

fn api_name(emitter: &str) -> &'static str {
    match emitter {
        "vulkan" => "Vulkan",
        "dxgi" => "DXGI/Direct3D",
        "nvenc-api" => "NVIDIA Video Codec SDK (NVENC)",
        _ => "API",
    }
}

/// A code's reading: its name, value and description, with the explanation, causes and fix of
/// the signature its family names.
fn reading(f: &Family, shown: Option<&str>) -> Option<Match> {
    let code = f.code.as_ref()?;
    let category = Category::ALL
        .into_iter()
        .find(|c| c.as_str() == f.category)?;
    let sig = signature_of(f);
    let mut meaning = format!(
        "{} {} {} = {}",
        api_name(&f.emitter),
        code.enum_type,
        code.name,
        code.value
    );
    if let Some(a) = &code.alias_of {
        meaning.push_str(&format!(" (another name of {a})"));
    }
    if let Some(t) = &code.text {
        meaning.push_str(&format!(": \"{}\"", t.trim_end_matches('.')));
    }
    if let Some(s) = sig {
        meaning.push_str(". ");
        meaning.push_str(&s.meaning);
    }
    let mut m = Match::new(
        "library_status",
        json!(shown.unwrap_or(&code.value)),
        format!("{} ({})", code.name, code.enum_type),
        category,
        meaning,
    )
    .key(format!("api:{}:{}", f.emitter, code.name));
    if let Some(s) = sig {
        m = m.causes(&s.causes);
        m.fix = s.fix.clone();
        m.rank = s.rank;
        m.tell_apart = s.tell_apart.clone();
        m.severity = s.severity;
    }
    m.emitter = Some(format!(
        "{} ({} {})",
        f.emitter, f.source.input, f.source.at_file
    ));
    Some(m)
}

#[cfg(test)]
#[path = "api_codes_tests.rs"]
mod tests;
