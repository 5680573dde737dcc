//! `explain` on the public corpus (tests/explain-corpus/*.yaml): texts people pasted in public
//! threads, each with its source, the cause the thread confirmed and its category. Prints top-1
//! and top-3 accuracy per category; the product targets (design.md) are top-1 >= 90 % and the
//! right category among the first three >= 97 %.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::print_stdout
)]

use std::collections::BTreeMap;

use gpudoctor::explain::explain_text;
use gpudoctor::matrix::Matrix;

#[derive(serde::Deserialize)]
struct Entry {
    source: String,
    category: String,
    #[allow(dead_code)]
    cause: String,
    #[allow(dead_code)]
    confirmed: String,
    text: String,
}

fn corpus() -> Vec<(String, Entry)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain-corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let v: Vec<Entry> =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(v.into_iter().map(|e| (name.clone(), e)));
    }
    out
}

#[test]
fn the_public_corpus_is_explained() {
    let m = Matrix::embedded().unwrap();
    let all = corpus();
    assert!(all.len() >= 250, "{} texts", all.len());
    let mut per: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new();
    let mut misses = Vec::new();
    for (file, e) in &all {
        assert!(e.source.starts_with("https://"), "{file}: {}", e.source);
        let v = explain_text(&e.text, &m);
        let mut cats: Vec<&str> = Vec::new();
        for x in &v {
            if !cats.contains(&x.category.as_str()) {
                cats.push(x.category.as_str());
            }
        }
        let top1 = cats.first() == Some(&e.category.as_str());
        let top3 = cats.iter().take(3).any(|c| *c == e.category);
        let s = per.entry(e.category.clone()).or_default();
        s.0 += 1;
        s.1 += u32::from(top1);
        s.2 += u32::from(top3);
        if !top1 {
            let first: String = e
                .text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .chars()
                .take(110)
                .collect();
            misses.push(format!(
                "{} -> {:?} | {} | {}",
                e.category,
                cats.iter().take(3).collect::<Vec<_>>(),
                e.source,
                first
            ));
        }
    }
    let (mut n, mut t1, mut t3) = (0, 0, 0);
    println!(
        "{:<26} {:>5} {:>7} {:>7}",
        "category", "texts", "top-1", "top-3"
    );
    for (c, (k, a, b)) in &per {
        println!(
            "{c:<26} {k:>5} {:>6.1}% {:>6.1}%",
            100.0 * f64::from(*a) / f64::from(*k),
            100.0 * f64::from(*b) / f64::from(*k)
        );
        n += k;
        t1 += a;
        t3 += b;
    }
    let (p1, p3) = (f64::from(t1) / f64::from(n), f64::from(t3) / f64::from(n));
    println!(
        "{:<26} {n:>5} {:>6.1}% {:>6.1}%",
        "all",
        100.0 * p1,
        100.0 * p3
    );
    if std::env::var_os("CORPUS_MISSES").is_some() {
        for m in &misses {
            println!("MISS {m}");
        }
    }
    assert!(
        p1 >= 0.90,
        "top-1 {:.1}% < 90% ({} misses; CORPUS_MISSES=1 lists them)",
        100.0 * p1,
        misses.len()
    );
    assert!(p3 >= 0.97, "top-3 {:.1}% < 97%", 100.0 * p3);
}

/// What one file of a sealed set scored: entries, right first, right within three, decoys whose
/// first answer blames the GPU or the driver, and the misses.
struct Score {
    n: usize,
    top1: usize,
    top3: usize,
    gpu_blamed: usize,
}

/// Scores `dir/file` (a sealed set's file: texts or kernel-log lines, five keys each) and prints
/// the figure; `CORPUS_MISSES=1` lists the misses. A `none` entry (an ordinary log line) is right
/// when nothing is matched. Asserted: the file is whole and valid.
fn score_set(dir: &std::path::Path, file: &str, at_least: usize) -> Score {
    let m = Matrix::embedded().unwrap();
    let categories: Vec<&str> = gpudoctor::report::Category::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let v: Vec<Entry> = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert!(v.len() >= at_least, "{file}: {} entries", v.len());
    let (mut t1, mut t3, mut gpu_blamed) = (0, 0, 0);
    let mut misses = Vec::new();
    for e in &v {
        assert!(e.source.starts_with("https://"), "{file}: {}", e.source);
        assert!(
            e.category == "none" || categories.contains(&e.category.as_str()),
            "{file}: unknown category {}",
            e.category
        );
        let found = explain_text(&e.text, &m);
        let mut cats: Vec<&str> = Vec::new();
        for x in &found {
            if !cats.contains(&x.category.as_str()) {
                cats.push(x.category.as_str());
            }
        }
        let (top1, top3) = if e.category == "none" {
            (cats.is_empty(), cats.is_empty())
        } else {
            (
                cats.first() == Some(&e.category.as_str()),
                cats.iter().take(3).any(|c| *c == e.category),
            )
        };
        t1 += usize::from(top1);
        t3 += usize::from(top3);
        let decoy = matches!(e.category.as_str(), "none" | "application_error");
        let blames_gpu = cats.first().is_some_and(|c| {
            matches!(
                *c,
                "hardware_fault" | "driver_fault" | "ecc_memory" | "smoke_failure"
            )
        });
        gpu_blamed += usize::from(decoy && blames_gpu);
        if !top1 {
            misses.push(format!("{} -> {:?} | {}", e.category, cats, e.source));
        }
    }
    println!(
        "{}/{file}: {} entries, top-1 {t1} ({:.1}%), top-3 {t3} ({:.1}%), decoys blamed on the GPU or driver: {gpu_blamed}",
        dir.file_name().unwrap().to_string_lossy(),
        v.len(),
        100.0 * t1 as f64 / v.len() as f64,
        100.0 * t3 as f64 / v.len() as f64,
    );
    if std::env::var_os("CORPUS_MISSES").is_some() {
        for m in &misses {
            println!("MISS {file} {m}");
        }
    }
    Score {
        n: v.len(),
        top1: t1,
        top3: t3,
        gpu_blamed,
    }
}

/// The sealed set (tests/explain-sealed/, issue 30): real texts and kernel-log lines from
/// threads the catalog's authors never read, collected by someone who had not read the catalog
/// or the code. It is scored, never tuned on: this prints top-1 and top-3 per file
/// (docs/benchmarks.md keeps the first score, taken before any change made with the set in
/// view). Asserted: the set is whole and valid. The sixteenth set (2026-11-28, session 19) holds
/// 110 texts but only 6 kernel-log lines, not 50: as for the sixth to fifteenth (14, 12, 17, 17,
/// 15, 10, 5, 10, 6, 15), its collector found the public threads with kernel-log lines and a
/// confirmed cause nearly all used already (its README says where it searched).
#[test]
fn the_sealed_set_is_scored() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain-sealed");
    score_set(&dir, "texts.yaml", 110);
    score_set(&dir, "kernel-log.yaml", 6);
}

/// The first sealed set, scored before and after issue 30's knowledge work (docs/benchmarks.md,
/// 2026-11-25), then joined to the corpus: it may be tuned on now, and may never score below
/// what it scored when it was opened (texts 68/72 of 106, kernel-log lines 23/27 of 50, decoys
/// blamed on the GPU 0 and 3). Texts since the recognition work of 2026-11-27: 86/98. Kernel-log
/// lines since the driver's message families and the kernel's notices
/// (knowledge/kernel-messages.yaml, module_taints_kernel): 27/30, no decoy blamed; since the
/// Linux kernel's own message families and the driver's printk/nvidia-drm formats
/// (knowledge/linux-messages.yaml, 2026-11-27): 35/39.
/// The second sealed set (collected 2026-11-25, session 8), scored once before the work of
/// 2026-11-27 (texts 62/67 of 112, kernel-log lines 41/41 of 55) and once after it (texts 64/77,
/// kernel-log lines 41/41, no decoy blamed: docs/benchmarks.md), then joined to the corpus: it may
/// be tuned on now, and may never score below that. Kernel-log lines since the Linux kernel's own
/// message families (knowledge/linux-messages.yaml, 2026-11-27): 53/53. Texts since the emitters
/// of issue 30's second mining (shells, OOM daemons, torch's extension builder, vLLM, QEMU's VFIO,
/// nvidia-docker 1.x, knowledge/messages/): 84/98 (first set: 87/99). Kernel-log lines 54 -> 53
/// (session 13): the module loader's "Unknown symbol" about an NVIDIA module is configuration
/// (knowledge/linux-messages.yaml), as four of the six joined entries that show it are labelled;
/// this set's one entry labelled driver_fault (a 455 nvidia_uvm on kernel 5.9) is now a miss,
/// while the third and fourth sets each gain one.
#[test]
fn the_second_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-25b",
        &[
            ("texts.yaml", 112, 90, 101, 0),
            ("kernel-log.yaml", 55, 53, 53, 0),
        ],
    );
}

/// The third sealed set (collected 2026-11-27, session 9), scored once before the work of
/// session 11 (texts 53/67 of 115, kernel-log lines 29/29 of 55, 2 decoys blamed) and once after
/// it, on 064b53d (texts 59/73, kernel-log lines 33/33, 3 decoys blamed: docs/benchmarks.md), then
/// joined to the corpus: it may be tuned on now, and may never score below that. Since its
/// families' categories follow their emitters' one home (session 12: the PTX toolchain error is the
/// driver's age, a Secure Boot refusal is configuration, a DataLoader's SIGBUS is the shared-memory
/// limit, a cuDNN status is read as knowledge/cudnn.yaml says; the proprietary module asking for
/// the open modules): texts 66/73, kernel-log lines 39/39; with the system emitters' families
/// (DKMS, nvidia-installer, nvidia-smi, containers): texts 67/74. Session 13 (the inference
/// runtimes', FFmpeg's, Slurm's and NCCL's families; the open module's opt-in, the module loader's
/// "Unknown symbol"): texts 72/82, kernel-log lines 43/44, decoys blamed 2.
#[test]
fn the_third_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-27",
        &[
            ("texts.yaml", 115, 83, 91, 0),
            ("kernel-log.yaml", 55, 45, 46, 2),
        ],
    );
}

/// The fourth sealed set (collected 2026-11-27, session 11), scored once before the work of
/// session 12 (texts 36/43 of 110, kernel-log lines 29/32 of 56, no decoy blamed) and once after
/// it, on a8508ab (texts 39/46, kernel-log lines 31/34, no decoy blamed: docs/benchmarks.md), then
/// joined to the corpus: it may be tuned on now, and may never score below that. Session 13:
/// texts 51/59, kernel-log lines 34/37.
#[test]
fn the_fourth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-27b",
        &[
            ("texts.yaml", 110, 66, 73, 0),
            ("kernel-log.yaml", 56, 37, 40, 0),
        ],
    );
}

/// The fifth sealed set (collected 2026-11-28, session 12), scored once before the work of
/// session 13 (texts 58/63 of 117 with 1 decoy blamed, kernel-log lines 27/28 of 60) and once
/// after it, on 6e6f196 (texts 62/67, kernel-log lines 28/29, the same decoy blamed:
/// docs/benchmarks.md), then joined to the corpus: it may be tuned on now, and may never score
/// below that.
#[test]
fn the_fifth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28",
        &[
            ("texts.yaml", 117, 82, 85, 1),
            ("kernel-log.yaml", 60, 36, 37, 0),
        ],
    );
}

/// The sixth sealed set (collected 2026-11-28, session 13), scored once before the work of
/// session 14 (texts 62/69 of 116, kernel-log lines 10/10 of 14, no decoy blamed) and once after
/// it, on 99f0282 (the same figures: none of that work changed an answer here:
/// docs/benchmarks.md), then joined to the corpus: it may be tuned on now, and may never score
/// below that.
#[test]
fn the_sixth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28b",
        &[
            ("texts.yaml", 116, 79, 87, 0),
            ("kernel-log.yaml", 14, 10, 11, 0),
        ],
    );
}

/// The seventh sealed set (collected 2026-11-28, session 14), scored once on 99f0282 before the
/// work made after it (texts 57/64 of 115 with one decoy blamed, kernel-log lines 4/4 of 12) and
/// once after it, on 55bfd67 (the same figures: docs/benchmarks.md), then joined to the corpus:
/// it may be tuned on now, and may never score below that.
#[test]
fn the_seventh_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28c",
        &[
            ("texts.yaml", 115, 75, 81, 1),
            ("kernel-log.yaml", 12, 8, 8, 0),
        ],
    );
}

/// The eighth sealed set (collected 2026-11-28, session 15), scored once on 934e2d4 before the
/// work made after it (texts 55/58 of 115 with two decoys blamed, kernel-log lines 12/12 of 17)
/// and once after it, on db5e9f8 (the same figures: docs/benchmarks.md), then joined to the
/// corpus: it may be tuned on now, and may never score below that.
#[test]
fn the_eighth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28d",
        &[
            ("texts.yaml", 115, 72, 74, 2),
            ("kernel-log.yaml", 17, 13, 13, 0),
        ],
    );
}

/// The ninth sealed set (collected 2026-11-28, session 15), scored once on db5e9f8 before the
/// work made after it (texts 49/55 of 119, kernel-log lines 6/6 of 17, no decoy blamed) and once
/// after it, on 87dd09c (the same figures: docs/benchmarks.md), then joined to the corpus: it may
/// be tuned on now, and may never score below that.
#[test]
fn the_ninth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28e",
        &[
            ("texts.yaml", 119, 64, 69, 0),
            ("kernel-log.yaml", 17, 13, 13, 0),
        ],
    );
}

/// The tenth sealed set (collected 2026-11-28, session 16), scored once on e7f60b3 before the
/// work made after it (texts 50/56 of 116, kernel-log lines 5/5 of 15, no decoy blamed) and once
/// after it, on becdfcc (texts 52/59, one decoy blamed, kernel-log lines 5/5: docs/benchmarks.md),
/// then joined to the corpus: it may be tuned on now, and may never score below that.
#[test]
fn the_tenth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28f",
        &[
            ("texts.yaml", 116, 70, 75, 1),
            ("kernel-log.yaml", 15, 6, 6, 0),
        ],
    );
}

/// The eleventh sealed set (collected 2026-11-28, session 17), scored once on 9886df1 before the
/// work made after it and once after it, on 75167b2 (both: texts 58/62 of 118, kernel-log lines
/// 3/3 of 10, no decoy blamed: docs/benchmarks.md), then joined to the corpus: it may be tuned on
/// now, and may never score below that.
#[test]
fn the_eleventh_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28g",
        &[
            ("texts.yaml", 118, 74, 77, 0),
            ("kernel-log.yaml", 10, 4, 4, 0),
        ],
    );
}

/// The twelfth sealed set (collected 2026-11-28, session 17), scored once on d4837cd before the
/// work made after it and once after it, on cd665d6 (both: texts 46/49 of 116, kernel-log lines
/// 4/4 of 5, no decoy blamed: docs/benchmarks.md), then joined to the corpus: it may be tuned on
/// now, and may never score below that.
#[test]
fn the_twelfth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28h",
        &[
            ("texts.yaml", 116, 57, 61, 0),
            ("kernel-log.yaml", 5, 4, 4, 0),
        ],
    );
}

/// The thirteenth sealed set (collected 2026-11-28, session 18), scored once on c3b8a81 before the
/// work made after it and once after it, on d48b930 (both: texts 61/65 of 114, kernel-log lines
/// 5/5 of 10, no decoy blamed: docs/benchmarks.md), then joined to the corpus: it may be tuned on
/// now, and may never score below that. Session 19: an extension's undefined c10/at/torch symbol
/// is read as built against another torch release (cuda_runtime_mismatch, as three of the four
/// joined entries that show it are labelled: docs/decisions.md); this set's flash-attn entry, with
/// the same cause, is labelled library_path_conflict and is now second (texts 71 -> 70), and
/// Jittor's "CUDA found but cudnn is not loaded" then brought it back to 71.
#[test]
fn the_thirteenth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28i",
        &[
            ("texts.yaml", 114, 71, 76, 0),
            ("kernel-log.yaml", 10, 5, 5, 0),
        ],
    );
}

/// The fourteenth sealed set (collected 2026-11-28, session 18), scored once on d48b930 before the
/// work made after it and once after it, on da9e8c1 (both: texts 37/42 of 117, kernel-log lines
/// 3/4 of 6, no decoy blamed: docs/benchmarks.md), then joined to the corpus: it may be tuned on
/// now, and may never score below that.
#[test]
fn the_fourteenth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28j",
        &[
            ("texts.yaml", 117, 46, 49, 0),
            ("kernel-log.yaml", 6, 3, 4, 0),
        ],
    );
}

/// The fifteenth sealed set (collected 2026-11-28, session 18), scored once on 3308f75 before the
/// work made after it and once after it, on da17f38 (both: texts 39/41 of 115 with one decoy
/// blamed, kernel-log lines 8/8 of 15: docs/benchmarks.md), then joined to the corpus: it may be
/// tuned on now, and may never score below that. Texts since session 19's families (4c6068c):
/// 53/55.
#[test]
fn the_fifteenth_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-28k",
        &[
            ("texts.yaml", 115, 53, 55, 1),
            ("kernel-log.yaml", 15, 8, 8, 0),
        ],
    );
}

#[test]
fn the_joined_sealed_set_keeps_its_score() {
    keeps_its_floor(
        "sealed-2026-11-25",
        &[
            ("texts.yaml", 106, 90, 99, 0),
            ("kernel-log.yaml", 50, 40, 41, 0),
        ],
    );
}

/// A joined sealed set (a folder of tests/explain-corpus) scores at least its floor: per file,
/// (file, entries, top-1, top-3, decoys blamed on the GPU or driver at most).
/// Session 16 raised every floor to what main scored then (the figures in the comments above
/// are each set's history; the tuples are the ratchet): a change may not undo recognition that
/// a set once had.
fn keeps_its_floor(set: &str, floors: &[(&str, usize, usize, usize, usize)]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/explain-corpus")
        .join(set);
    for &(file, n, top1, top3, blamed) in floors {
        let s = score_set(&dir, file, n);
        assert_eq!(s.n, n, "{set}/{file}");
        assert!(s.top1 >= top1, "{set}/{file}: top-1 {} < {top1}", s.top1);
        assert!(s.top3 >= top3, "{set}/{file}: top-3 {} < {top3}", s.top3);
        assert!(
            s.gpu_blamed <= blamed,
            "{set}/{file}: {} decoys blamed on the GPU or driver > {blamed}",
            s.gpu_blamed
        );
    }
}
