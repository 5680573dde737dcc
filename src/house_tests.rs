//! House rules the source keeps (issue 33, item 4): no function longer than
//! [`MAX_FN_LINES`] lines outside tests, and no line longer than [`MAX_RULE_LINE_CHARS`]
//! characters in `src/rules/` (prose that long belongs in data, not in code rustfmt cannot wrap).
//!
//! The scan reads every non-test `.rs` file under `src/` (not `*_tests.rs`, not the item after a
//! `#[cfg(test)]`). It blanks comments, string literals (raw ones too) and char literals first,
//! then matches braces, so a `{` inside text never counts. A function's length runs from the line
//! of its `fn` to the line of its closing brace; a function inside another counts on its own too.

use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 100;
const MAX_RULE_LINE_CHARS: usize = 300;

/// Functions still over the limit, as "path fn name" (path from the crate root). The list may
/// only shrink: an entry that is no longer long fails the test too.
const ALLOWED_LONG_FNS: &[&str] = &[];

/// A function found by the scan: the line of its `fn`, its name, its length in lines.
#[derive(Debug, PartialEq)]
struct LongFn {
    line: usize,
    name: String,
    lines: usize,
}

/// `src` with the inside of every comment, string literal and char literal replaced by spaces
/// (newlines kept), so that line numbers stay and braces in text vanish.
fn blank_text(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let after_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
            continue;
        }
        if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            continue;
        }
        // Raw strings: r"…", r#"…"#, br##"…"##.
        if !after_ident && (ch == 'r' || (ch == 'b' && at(i + 1) == 'r')) {
            let mut j = i + if ch == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) == '"' {
                out.extend(std::iter::repeat_n(' ', j - i));
                out.push('"');
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                        out.push('"');
                        out.extend(std::iter::repeat_n(' ', hashes));
                        j += 1 + hashes;
                        break;
                    }
                    out.push(blank(c[j]));
                    j += 1;
                }
                i = j;
                continue;
            }
        }
        if ch == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
            continue;
        }
        if ch == '\'' {
            // '\n', '\'', '\u{7f}': up to the next quote after the escaped character.
            if at(i + 1) == '\\' {
                let mut j = i + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                out.extend(std::iter::repeat_n(' ', j + 1 - i));
                i = j + 1;
                continue;
            }
            // 'x' (a lifetime 'a has no closing quote).
            if at(i + 2) == '\'' {
                out.push_str("   ");
                i += 3;
                continue;
            }
        }
        out.push(ch);
        i += 1;
    }
    out
}

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
}

/// Identifiers and single punctuation characters of blanked text, each with its line (1-based).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut word = String::new();
    for ch in text.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
            continue;
        }
        if !word.is_empty() {
            out.push((Tok::Ident(std::mem::take(&mut word)), line));
        }
        if ch == '\n' {
            line += 1;
        } else if !ch.is_whitespace() {
            out.push((Tok::Punct(ch), line));
        }
    }
    if !word.is_empty() {
        out.push((Tok::Ident(word), line));
    }
    out
}

/// For each `{` token, the index of its matching `}`.
fn brace_pairs(toks: &[(Tok, usize)]) -> Vec<Option<usize>> {
    let mut pairs = vec![None; toks.len()];
    let mut open = Vec::new();
    for (k, (t, _)) in toks.iter().enumerate() {
        match t {
            Tok::Punct('{') => open.push(k),
            Tok::Punct('}') => {
                if let Some(o) = open.pop() {
                    pairs[o] = Some(k);
                }
            }
            _ => {}
        }
    }
    pairs
}

fn is_cfg_test(toks: &[(Tok, usize)], k: usize) -> bool {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    want.iter().enumerate().all(|(n, w)| match toks.get(k + n) {
        Some((Tok::Ident(s), _)) => s == w,
        Some((Tok::Punct(p), _)) => w.len() == 1 && w.starts_with(*p),
        None => false,
    })
}

/// Every function with a body in `src` outside `#[cfg(test)]` items, with its length in lines.
fn functions(src: &str) -> Vec<LongFn> {
    let toks = tokens(&blank_text(src));
    let pairs = brace_pairs(&toks);
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if is_cfg_test(&toks, k) {
            // Skip the item: to its `;`, or over its braces.
            let mut m = k + 7;
            while m < toks.len() && !matches!(toks[m].0, Tok::Punct(';') | Tok::Punct('{')) {
                m += 1;
            }
            k = match pairs.get(m).copied().flatten() {
                Some(close) => close + 1,
                None => m + 1,
            };
            continue;
        }
        if let (Tok::Ident(f), Some((Tok::Ident(name), _))) = (&toks[k].0, toks.get(k + 1)) {
            if f == "fn" {
                let mut m = k + 2;
                let mut depth = 0i32;
                while m < toks.len() {
                    match toks[m].0 {
                        Tok::Punct('(') | Tok::Punct('[') => depth += 1,
                        Tok::Punct(')') | Tok::Punct(']') => depth -= 1,
                        Tok::Punct(';') | Tok::Punct('{') if depth == 0 => break,
                        _ => {}
                    }
                    m += 1;
                }
                if let Some(close) = pairs.get(m).copied().flatten() {
                    out.push(LongFn {
                        line: toks[k].1,
                        name: name.clone(),
                        lines: toks[close].1 - toks[k].1 + 1,
                    });
                }
            }
        }
        k += 1;
    }
    out
}

/// The non-test `.rs` files under `dir`, sorted.
fn source_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !p.to_string_lossy().ends_with("_tests.rs")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The tree to scan: this crate, or another checkout named by `GPUDOCTOR_HOUSE_ROOT` (to list
/// an older commit's long functions: `git archive COMMIT src | tar -x -C DIR`).
fn crate_root() -> PathBuf {
    std::env::var_os("GPUDOCTOR_HOUSE_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

fn relative(p: &Path) -> String {
    p.strip_prefix(crate_root())
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn no_function_over_100_lines() {
    let mut long = Vec::new();
    let mut allowed_seen = Vec::new();
    for path in source_files(&crate_root().join("src")) {
        let src = std::fs::read_to_string(&path).unwrap();
        let rel = relative(&path);
        for f in functions(&src) {
            if f.lines <= MAX_FN_LINES {
                continue;
            }
            let key = format!("{rel} fn {}", f.name);
            if ALLOWED_LONG_FNS.contains(&key.as_str()) {
                allowed_seen.push(key);
                continue;
            }
            long.push(format!(
                "{rel}:{} fn {} ({} lines)",
                f.line, f.name, f.lines
            ));
        }
    }
    let stale: Vec<_> = ALLOWED_LONG_FNS
        .iter()
        .filter(|a| !allowed_seen.iter().any(|s| s == *a))
        .collect();
    assert!(
        long.is_empty() && stale.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them into named steps):\n{}\n\
         allowed but no longer long (remove from ALLOWED_LONG_FNS): {stale:?}",
        long.join("\n")
    );
}

#[test]
fn no_rule_line_over_300_characters() {
    let mut long = Vec::new();
    for path in source_files(&crate_root().join("src").join("rules")) {
        let src = std::fs::read_to_string(&path).unwrap();
        for (n, line) in src.lines().enumerate() {
            let chars = line.chars().count();
            if chars > MAX_RULE_LINE_CHARS {
                long.push(format!(
                    "{}:{} ({chars} characters)",
                    relative(&path),
                    n + 1
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "lines over {MAX_RULE_LINE_CHARS} characters in src/rules/ (move the text to data):\n{}",
        long.join("\n")
    );
}

fn lengths(src: &str) -> Vec<(String, usize)> {
    functions(src)
        .into_iter()
        .map(|f| (f.name, f.lines))
        .collect()
}

#[test]
fn checker_counts_lines_from_fn_to_closing_brace() {
    let src = "fn a() {\n    1;\n}\n\nfn b() -> u8 { 2 }\n";
    assert_eq!(lengths(src), [("a".into(), 3), ("b".into(), 1)]);
}

#[test]
fn checker_ignores_braces_in_strings_chars_and_comments() {
    let src = r####"fn a() {
    let s = "}}} fn fake() {";
    let r = r#"} "quoted" }"#;
    let r2 = r##"a "# } still inside"##;
    let b = b"}";
    let c = '}';
    let e = '\'';
    let u = '\u{7d}';
    // } fn also_fake() {
    /* } /* nested } */ } */
}
fn b<'x>(v: &'x str) -> &'x str {
    v
}
"####;
    assert_eq!(lengths(src), [("a".into(), 11), ("b".into(), 3)]);
}

#[test]
fn checker_counts_nested_fns_and_skips_test_items_and_declarations() {
    let src = "trait T {\n    fn decl(&self);\n    fn with_body(&self) {}\n}\n\
               fn outer() {\n    fn inner() {\n    }\n}\n\
               #[cfg(test)]\nmod tests {\n    fn hidden() {\n    }\n}\n\
               #[cfg(test)]\nfn also_hidden() {}\n\
               struct S { check: fn(u8) -> u8 }\n";
    assert_eq!(
        lengths(src),
        [
            ("with_body".into(), 1),
            ("outer".into(), 4),
            ("inner".into(), 2)
        ]
    );
}
