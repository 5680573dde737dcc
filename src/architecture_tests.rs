//! The pipeline's direction, enforced (docs/decisions.md, "The pipeline's direction"; design.md,
//! "Shape of the code"). Every non-test `.rs` file under `src/` is read; each `crate::…`,
//! `super::…` and `self::…` reference (in `use` lines and inline paths) is resolved to the file of
//! the deepest module it names, and the test fails on a reference the layer table does not allow
//! (to a higher layer, or to a lower one the table keeps out), on any circle of files importing
//! each other and on any circle of top-level modules. A module naming its own submodules (a
//! `mod.rs` gathering or re-exporting its children) is not an import: the parent owns them.
//!
//! Test code is left out: `*_tests.rs` files, modules declared under `#[cfg(test)]` and every
//! item under `#[cfg(test)]`.
//!
//! `ARCHITECTURE_SRC=/some/checkout/src cargo test --lib architecture -- --nocapture` prints the
//! counts for another tree (the figures in the decision were taken that way).

#![allow(clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, each with the layers below it that it may import (besides its own).
/// The same table is in docs/decisions.md ("The pipeline's direction"); a test fails when the two
/// differ.
/// A module path belongs to the layer whose entry is its longest prefix.
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    (
        "base",
        &[
            "vocab",
            "sanitize",
            "version",
            "outguard",
            "safewrite",
            "userfile",
            "interrupt",
            "build_info",
            "trace",
        ],
        &[],
    ),
    (
        "knowledge",
        &["knowledge", "matrix", "explain::catalog", "explain::tables"],
        &["base"],
    ),
    ("snapshot", &["snapshot"], &["base", "knowledge"]),
    ("parse", &["faults"], &["base", "knowledge", "snapshot"]),
    (
        "probe",
        &["probe", "matrix_update"],
        &["base", "knowledge", "snapshot", "parse"],
    ),
    (
        "gpu",
        &["gpu"],
        &["base", "knowledge", "snapshot", "parse", "probe"],
    ),
    (
        "rules",
        &[
            "rules",
            "compat",
            "explain",
            "policy",
            "assume",
            "recommend",
            "fixes",
        ],
        &["base", "knowledge", "snapshot", "parse"],
    ),
    (
        "report",
        &["report", "redact"],
        &["base", "knowledge", "snapshot", "parse", "rules"],
    ),
    (
        "render",
        &["render", "matrix_show"],
        &["base", "knowledge", "snapshot", "report"],
    ),
    (
        "runwatch",
        &["runwatch"],
        &[
            "base",
            "knowledge",
            "snapshot",
            "parse",
            "probe",
            "gpu",
            "rules",
            "report",
            "render",
        ],
    ),
    (
        "commands",
        &["commands", "cli"],
        &[
            "base",
            "knowledge",
            "snapshot",
            "parse",
            "probe",
            "gpu",
            "rules",
            "report",
            "render",
            "runwatch",
        ],
    ),
    (
        "app",
        &["app", "main"],
        &[
            "base",
            "knowledge",
            "snapshot",
            "parse",
            "probe",
            "gpu",
            "rules",
            "report",
            "render",
            "runwatch",
            "commands",
        ],
    ),
];

/// Wrong-way imports and circles not cut yet: (importing file, imported file, why). Empty it.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One reference from a file to another file of the crate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    line: usize,
    to: String,
    path: String,
}

struct Graph {
    /// Every non-test file: its path relative to `src/` and its module path.
    files: BTreeMap<String, Vec<String>>,
    edges: Vec<Edge>,
}

fn src_dir() -> PathBuf {
    match std::env::var_os("ARCHITECTURE_SRC") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The text with comments, string and char literals blanked (newlines kept, so lines still count).
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let keep = |ch: char, out: &mut String| out.push(if ch == '\n' { '\n' } else { ' ' });
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    keep(c[i], &mut out);
                    i += 1;
                }
            }
        } else if (ch == 'r' || (ch == 'b' && next == Some('r')))
            && (i == 0 || !ident(c[i - 1]))
            && {
                let s = if ch == 'b' { i + 2 } else { i + 1 };
                let mut j = s;
                while c.get(j) == Some(&'#') {
                    j += 1;
                }
                c.get(j) == Some(&'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let s = if ch == 'b' { i + 2 } else { i + 1 };
            let mut j = s;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            let hashes = j - s;
            for _ in i..=j {
                out.push(' ');
            }
            i = j + 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                keep(c[i], &mut out);
                i += 1;
            }
        } else if ch == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() {
                if c[i] == '\\' {
                    keep(c[i], &mut out);
                    if let Some(&n) = c.get(i + 1) {
                        keep(n, &mut out);
                    }
                    i += 2;
                } else if c[i] == '"' {
                    out.push(' ');
                    i += 1;
                    break;
                } else {
                    keep(c[i], &mut out);
                    i += 1;
                }
            }
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let close = if next == Some('\\') {
                (i + 2..c.len().min(i + 12)).find(|&j| c[j] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(j) => {
                    for _ in i..=j {
                        out.push(' ');
                    }
                    i = j + 1;
                }
                None => {
                    out.push(ch);
                    i += 1;
                }
            }
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

/// Blanks every item under `#[cfg(test)]`; returns the names of modules declared there.
fn drop_test_items(text: &mut String) -> Vec<String> {
    let mut names = Vec::new();
    let attr = "#[cfg(test)]";
    while let Some(at) = text.find(attr) {
        let bytes = text.as_bytes();
        let mut end = at + attr.len();
        // The item runs to its first `;` or to the `}` closing its first `{`.
        let mut depth = 0usize;
        while end < bytes.len() {
            match bytes[end] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end += 1;
                    break;
                }
                _ => {}
            }
            end += 1;
        }
        let item = text[at..end].to_string();
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(k) = words.iter().position(|w| *w == "mod") {
            if let Some(n) = words.get(k + 1) {
                names.push((*n).to_string());
            }
        }
        let blanked: String = item
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(at..end, &blanked);
    }
    names
}

/// The module path of a file from its place under `src/`.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The `use` trees of one statement, flattened: `a::{b, c::{d as e}}` gives `a::b`, `a::c::d`.
fn flatten_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let base = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    flatten_use(&inner[start..k], &base, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        flatten_use(&inner[start..], &base, out);
    } else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        let path = path.trim_end_matches("::*").trim_end_matches("::self");
        if !path.is_empty() && path != "self" && path != "*" {
            out.push(join(prefix, path));
        } else if path == "self" || path == "*" {
            out.push(prefix.to_string());
        }
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}::{b}"),
    }
}

/// Every `crate::`, `super::` or `self::` path in the text, with its line (1-based).
fn references(text: &str, crate_alias: Option<&str>) -> Vec<(usize, String)> {
    let mut refs = Vec::new();
    let line_at = |pos: usize| text[..pos].matches('\n').count() + 1;
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    // `use` statements first, then blank them so the inline scan does not count them twice.
    let mut rest = text.to_string();
    let mut pos = 0;
    while let Some(k) = rest[pos..].find("use ") {
        let at = pos + k;
        if at > 0 && is_ident(bytes[at - 1]) {
            pos = at + 4;
            continue;
        }
        let Some(semi) = rest[at..].find(';') else {
            break;
        };
        let stmt = &rest[at + 4..at + semi];
        let mut paths = Vec::new();
        flatten_use(
            &stmt.split_whitespace().collect::<Vec<_>>().join(" "),
            "",
            &mut paths,
        );
        for p in paths {
            let p = p.replace(' ', "");
            refs.push((line_at(at), p));
        }
        let blanked: String = rest[at..at + semi]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        rest.replace_range(at..at + semi, &blanked);
        pos = at + semi;
    }
    let rb = rest.as_bytes();
    let mut roots = vec!["crate::", "super::", "self::"];
    let alias = crate_alias.map(|a| format!("{a}::"));
    if let Some(a) = &alias {
        roots.push(a);
    }
    for root in roots {
        let mut from = 0;
        while let Some(k) = rest[from..].find(root) {
            let at = from + k;
            from = at + root.len();
            if at > 0 && (is_ident(rb[at - 1]) || rb[at - 1] == b':') {
                continue;
            }
            let mut end = at;
            while end < rb.len() && (is_ident(rb[end]) || rb[end] == b':') {
                end += 1;
            }
            refs.push((line_at(at), rest[at..end].trim_end_matches(':').to_string()));
        }
    }
    refs.into_iter()
        .filter_map(|(l, p)| {
            let first = p.split("::").next().unwrap_or("");
            let ok = matches!(first, "crate" | "super" | "self") || Some(first) == crate_alias;
            ok.then_some((l, p))
        })
        .collect()
}

fn build(src: &Path) -> Graph {
    let mut paths = Vec::new();
    walk(src, &mut paths);
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut test_mods: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut renamed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &paths {
        let rel = p
            .strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let raw = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let module = module_of(&rel);
        let dir = match rel.rsplit_once('/') {
            Some((d, _)) => format!("{d}/"),
            None => String::new(),
        };
        // `#[path = "x.rs"] mod name;`: the file x.rs is the module `name`.
        let lines: Vec<&str> = raw.lines().collect();
        for (k, l) in lines.iter().enumerate() {
            let t = l.trim();
            if let Some(file) = t
                .strip_prefix("#[path = \"")
                .and_then(|r| r.strip_suffix("\"]"))
            {
                let decl = lines[k + 1..].iter().find(|l| l.contains("mod "));
                if let Some(name) = decl.and_then(|d| {
                    d.split("mod ")
                        .nth(1)
                        .map(|n| n.trim_end_matches(';').trim().to_string())
                }) {
                    // The declaring file's module is the parent (a `mod.rs` or `lib.rs` stands for
                    // its directory; other files declare children in a directory of their name,
                    // which `#[path]` then names relative to this one's directory).
                    let mut m = module.clone();
                    m.push(name);
                    renamed.insert(format!("{dir}{file}"), m);
                }
            }
        }
        let mut text = blank(&raw);
        for name in drop_test_items(&mut text) {
            let mut m = module.clone();
            m.push(name);
            test_mods.insert(m);
        }
        texts.insert(rel.clone(), text);
        modules.insert(rel, module);
    }
    for (rel, m) in renamed {
        if let Some(slot) = modules.get_mut(&rel) {
            *slot = m;
        }
    }
    let files: BTreeMap<String, Vec<String>> = modules
        .into_iter()
        .filter(|(rel, m)| {
            !rel.ends_with("_tests.rs")
                && rel != "lib.rs"
                && !test_mods.iter().any(|t| m.starts_with(t))
        })
        .collect();
    // A module may have a file per system (`#[cfg(windows)] #[path = "child_windows.rs"] mod
    // child;` beside `child.rs`): a path naming it imports each of them.
    let mut by_module: BTreeMap<&Vec<String>, Vec<&String>> = BTreeMap::new();
    for (f, m) in &files {
        by_module.entry(m).or_default().push(f);
    }
    let mut edges = Vec::new();
    for (rel, module) in &files {
        let text = &texts[rel];
        let alias = (rel == "main.rs").then_some("gpudoctor");
        for (line, path) in references(text, alias) {
            let mut segs = path.split("::");
            let mut at: Vec<String> = match segs.next() {
                Some("crate") | Some("gpudoctor") => Vec::new(),
                Some("self") => module.clone(),
                Some("super") => {
                    let mut m = module.clone();
                    m.pop();
                    m
                }
                _ => continue,
            };
            let rest: Vec<&str> = segs.collect();
            let mut k = 0;
            while k < rest.len() && rest[k] == "super" {
                at.pop();
                k += 1;
            }
            let mut target = at.clone();
            let mut best: Option<&Vec<&String>> = by_module.get(&target);
            for s in &rest[k..] {
                target.push((*s).to_string());
                if let Some(f) = by_module.get(&target) {
                    best = Some(f);
                }
            }
            for to in best.into_iter().flatten() {
                // A module naming itself or its own submodules is no import.
                if files[*to].starts_with(module) {
                    continue;
                }
                edges.push(Edge {
                    from: rel.clone(),
                    line,
                    to: (*to).clone(),
                    path: path.clone(),
                });
            }
        }
    }
    Graph { files, edges }
}

/// The layer of a module (its index in LAYERS) by the longest prefix that names it.
fn layer(module: &[String]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (k, (_, mods, _)) in LAYERS.iter().enumerate() {
        for m in *mods {
            let parts: Vec<&str> = m.split("::").collect();
            if parts.len() <= module.len()
                && parts.iter().zip(module).all(|(a, b)| a == b)
                && best.is_none_or(|(len, _)| parts.len() > len)
            {
                best = Some((parts.len(), k));
            }
        }
    }
    best.map(|(_, k)| k)
}

fn allowed(from: &str, to: &str) -> bool {
    ALLOWED.iter().any(|(f, t, _)| *f == from && *t == to)
}

/// Whether layer `a` may import layer `b`.
fn may_import(a: usize, b: usize) -> bool {
    a == b || LAYERS[a].2.contains(&LAYERS[b].0)
}

/// References against the table: to a higher layer, or to a lower one the table keeps out.
fn against(g: &Graph) -> Vec<(Edge, String)> {
    let mut out = Vec::new();
    for e in &g.edges {
        let (Some(a), Some(b)) = (layer(&g.files[&e.from]), layer(&g.files[&e.to])) else {
            continue;
        };
        if !may_import(a, b) {
            let why = format!(
                "{} ({}) imports {} ({})",
                e.from, LAYERS[a].0, e.to, LAYERS[b].0
            );
            out.push((e.clone(), why));
        }
    }
    out
}

/// The circles: strongly connected sets of more than one file (Tarjan).
fn circles(g: &Graph, skip_allowed: bool) -> Vec<Vec<String>> {
    let edges = g
        .edges
        .iter()
        .filter(|e| !(skip_allowed && allowed(&e.from, &e.to)))
        .map(|e| (e.from.clone(), e.to.clone()));
    strongly_connected(g.files.keys().cloned().collect(), edges)
}

/// The circles between top-level modules (`policy`, `rules`, ...), each module standing for all
/// its files: `policy` importing `rules` while a rule imports `policy` is a circle though no two
/// files import each other.
fn module_circles(g: &Graph) -> Vec<Vec<String>> {
    let top = |f: &String| g.files[f].first().cloned().unwrap_or_default();
    let nodes: BTreeSet<String> = g.files.keys().map(top).collect();
    let edges = g
        .edges
        .iter()
        .filter(|e| !allowed(&e.from, &e.to))
        .map(|e| (top(&e.from), top(&e.to)))
        .filter(|(a, b)| a != b);
    strongly_connected(nodes.into_iter().collect(), edges)
}

/// Strongly connected sets of more than one node (Tarjan), each sorted, sorted.
fn strongly_connected(
    names: Vec<String>,
    edges: impl Iterator<Item = (String, String)>,
) -> Vec<Vec<String>> {
    let index: BTreeMap<&String, usize> = names.iter().enumerate().map(|(k, n)| (n, k)).collect();
    let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for (a, b) in edges {
        adj[index[&a]].insert(index[&b]);
    }
    struct T<'a> {
        adj: &'a [BTreeSet<usize>],
        idx: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.idx[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.adj[v].iter() {
            match t.idx[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.idx[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = names.len();
    let mut t = T {
        adj: &adj,
        idx: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.idx[v].is_none() {
            visit(&mut t, v);
        }
    }
    let mut out: Vec<Vec<String>> = t
        .out
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|k| names[k].clone()).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// The edges inside one circle, for the failure message.
fn circle_edges(g: &Graph, circle: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    for e in &g.edges {
        if circle.contains(&e.from) && circle.contains(&e.to) {
            seen.insert(format!("{}:{} -> {} ({})", e.from, e.line, e.to, e.path));
        }
    }
    seen.into_iter().collect()
}

/// The figures of the decision, as distinct file-to-file imports: those that run back up (to a
/// higher layer), those to a lower layer the table keeps out; and the circles of files and of
/// top-level modules, the allowances counted too.
fn counts(g: &Graph) -> (usize, usize, usize, usize) {
    let mut up = BTreeSet::new();
    let mut out = BTreeSet::new();
    for (e, _) in against(g) {
        let (a, b) = (layer(&g.files[&e.from]), layer(&g.files[&e.to]));
        if a < b {
            up.insert((e.from, e.to));
        } else {
            out.insert((e.from, e.to));
        }
    }
    let modules = {
        let top = |f: &String| g.files[f].first().cloned().unwrap_or_default();
        let nodes: BTreeSet<String> = g.files.keys().map(top).collect();
        let edges = g.edges.iter().map(|e| (top(&e.from), top(&e.to)));
        strongly_connected(nodes.into_iter().collect(), edges.filter(|(a, b)| a != b))
    };
    (up.len(), out.len(), circles(g, false).len(), modules.len())
}

#[test]
fn the_table_runs_one_way() {
    for (k, (name, _, may)) in LAYERS.iter().enumerate() {
        for m in *may {
            let below = LAYERS[..k].iter().any(|(n, _, _)| n == m);
            assert!(
                below,
                "layer {name} may import {m}, which is not a layer below it"
            );
        }
    }
}

#[test]
fn every_file_has_a_layer() {
    let g = build(&src_dir());
    let missing: Vec<&String> = g
        .files
        .iter()
        .filter(|(_, m)| layer(m).is_none())
        .map(|(f, _)| f)
        .collect();
    assert!(
        missing.is_empty(),
        "files in no layer of LAYERS: {missing:?}"
    );
}

#[test]
fn imports_follow_the_pipeline() {
    let g = build(&src_dir());
    let (up, out, files, mods) = counts(&g);
    eprintln!(
        "file-to-file imports that run back up: {up}; to a lower layer the table keeps out: \
         {out}; circles of files: {files}; circles of top-level modules: {mods}"
    );
    let modules = module_circles(&g);
    let mut failures = Vec::new();
    for (e, why) in against(&g) {
        if !allowed(&e.from, &e.to) {
            failures.push(format!("{}:{} -> {}  [{}]", e.from, e.line, e.path, why));
        }
    }
    for c in &modules {
        failures.push(format!("circle of modules: {}", c.join(" <-> ")));
    }
    for c in circles(&g, true) {
        failures.push(format!("circle of files: {}", c.join(" <-> ")));
        for e in circle_edges(&g, &c) {
            failures.push(format!("    {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "imports against the pipeline's direction (docs/decisions.md, \"The pipeline's direction\"):\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_allowance_is_still_needed() {
    let g = build(&src_dir());
    for (from, to, why) in ALLOWED {
        assert!(
            g.edges.iter().any(|e| e.from == *from && e.to == *to),
            "ALLOWED names {from} -> {to} ({why}), which no longer imports it: remove the entry"
        );
    }
}

#[test]
fn the_scanner_sees_what_it_should() {
    let text = blank(
        "use crate::{a::B, c::{d, e as f}};\n// crate::zz\nlet s = \"crate::yy\";\nfn g() { super::h::i(); }\n#[cfg(test)]\nmod t { use crate::q; }\n",
    );
    let mut text = text;
    assert_eq!(drop_test_items(&mut text), vec!["t".to_string()]);
    let refs = references(&text, None);
    let paths: Vec<&str> = refs.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        paths,
        vec!["crate::a::B", "crate::c::d", "crate::c::e", "super::h::i"]
    );
    assert_eq!(refs[3].0, 4);
}

#[test]
fn the_decision_has_the_same_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/decisions.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("The pipeline's direction"))
        .expect("docs/decisions.md has a section \"The pipeline's direction\"");
    // Modules are the `quoted` names of their cell; the layers a row may import, its words.
    let modules = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let layers = |cell: &str| -> Vec<String> {
        cell.split(',')
            .map(|w| w.trim().to_string())
            .filter(|w| !w.is_empty() && w != "—")
            .collect()
    };
    let rows: Vec<(String, Vec<String>, Vec<String>)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .strip_prefix('|')?
                .strip_suffix('|')?
                .split('|')
                .collect();
            let [layer, m, may] = cells[..] else {
                return None;
            };
            let layer = layer.trim();
            (LAYERS.iter().any(|(n, _, _)| *n == layer))
                .then(|| (layer.to_string(), modules(m), layers(may)))
        })
        .collect();
    let want: Vec<(String, Vec<String>, Vec<String>)> = LAYERS
        .iter()
        .map(|(n, m, may)| {
            let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            (n.to_string(), s(m), s(may))
        })
        .collect();
    assert_eq!(rows, want, "docs/decisions.md's table differs from LAYERS");
}
