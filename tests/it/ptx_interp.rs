//! Every kernel of `src/gpu/smoke.ptx` and `src/gpu/stress.ptx`, executed by the PTX
//! interpreter (crates/ptx-interp), against its host twin bit for bit: `expected_arith`,
//! `pattern_value` (every mode, with word indices at and above 2^33), `injected_flips`,
//! `fma_burn_expected`, and gpu-burn's tolerance rule for `cmp_f32`. The simulated GPU computes
//! both sides with the host twins; this is where the PTX itself is checked.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use gpudoctor::gpu::stress::{
    fma_burn_expected, injected_flips, pattern_value, round_steps, MemStep, FMA_ITERS, MAX_LOG,
};
use gpudoctor::gpu::{smoke, SMOKE_PTX, STRESS_PTX};
use ptx_interp::{launch, launch_threads, parse, Memory, Module, SparseMemory};

fn smoke_mod() -> Module {
    parse(SMOKE_PTX).unwrap()
}
fn stress_mod() -> Module {
    parse(STRESS_PTX).unwrap()
}

const BUF: u64 = 0x7f00_0000_0000;
const ERRS: u64 = 0x7e00_0000_0000;
const OUT2: u64 = 0x7d00_0000_0000;

#[test]
fn both_modules_parse_with_every_kernel_and_its_parameters() {
    let s = smoke_mod();
    let t = stress_mod();
    let mut names: Vec<(&str, usize)> = s
        .kernels
        .values()
        .chain(t.kernels.values())
        .map(|k| (k.name.as_str(), k.param_count()))
        .collect();
    names.sort_unstable();
    // The parameter counts the runners pass (src/gpu/smoke.rs, src/gpu/stress.rs).
    assert_eq!(
        names,
        [
            ("cmp_f32", 5),
            ("copy_v4", 3),
            ("fma_burn", 3),
            ("mem_check", 9),
            ("mem_fill", 4),
            ("mem_flip", 4),
            ("smoke_arith", 3),
        ]
    );
    for k in gpudoctor::gpu::stress::KERNELS {
        assert!(
            s.kernels.contains_key(k) || t.kernels.contains_key(k),
            "{k}"
        );
    }
}

#[test]
fn smoke_arith_matches_expected_arith() {
    let m = smoke_mod();
    let k = m.kernel("smoke_arith").unwrap();
    let n = 70_000u32; // not a multiple of the block: the guard is exercised
    let mut mem = SparseMemory::new();
    let stats = launch(
        k,
        n.div_ceil(256) + 1,
        256,
        &[BUF, OUT2, u64::from(n)],
        &mut mem,
    )
    .unwrap();
    assert!(stats.threads > u64::from(n));
    for i in 0..n {
        let (eu, ef) = smoke::expected_arith(i);
        let at = u64::from(i) * 4;
        assert_eq!(mem.read_u32(BUF + at), eu, "integer {i}");
        assert_eq!(mem.read_u32(OUT2 + at), ef.to_bits(), "float {i}");
    }
    // Nothing written past n.
    assert_eq!(mem.read_u32(BUF + u64::from(n) * 4), 0);
    assert_eq!(mem.read_u32(OUT2 + u64::from(n) * 4), 0);
}

#[test]
fn copy_v4_copies_every_vector_and_nothing_more() {
    let m = smoke_mod();
    let k = m.kernel("copy_v4").unwrap();
    let mut mem = SparseMemory::new();
    let vecs = 3001u64;
    let pattern = smoke::host_pattern((vecs as usize + 1) * 16);
    mem.write(BUF, &pattern).unwrap();
    // A small grid: every thread strides over many vectors.
    launch(k, 3, 64, &[OUT2, BUF, vecs], &mut mem).unwrap();
    let mut back = vec![0u8; (vecs as usize + 1) * 16];
    mem.read(OUT2, &mut back).unwrap();
    assert_eq!(&back[..vecs as usize * 16], &pattern[..vecs as usize * 16]);
    assert!(back[vecs as usize * 16..].iter().all(|b| *b == 0));
}

fn fill(m: &Module, mem: &mut SparseMemory, words: u64, mode: u32, a: u32, grid: u32) {
    let k = m.kernel("mem_fill").unwrap();
    launch(
        k,
        grid,
        256,
        &[BUF, words, u64::from(mode), u64::from(a)],
        mem,
    )
    .unwrap();
}

/// mem_check's result: (count, the logged (index, expected, actual)).
fn errors(mem: &mut SparseMemory) -> (u64, Vec<(u64, u32, u32)>) {
    let count = mem.read_u64(ERRS);
    let logged = mem.read_u64(ERRS + 8).min(u64::from(MAX_LOG));
    let mut v: Vec<(u64, u32, u32)> = (0..logged)
        .map(|s| {
            let i = mem.read_u64(ERRS + 16 + 16 * s);
            let ea = mem.read_u64(ERRS + 24 + 16 * s);
            (i, (ea >> 32) as u32, ea as u32)
        })
        .collect();
    v.sort_unstable();
    (count, v)
}

fn check_params(words: u64, mode: u32, a: u32, then: Option<(u32, u32)>) -> [u64; 9] {
    let (tm, ta) = then.unwrap_or((0, 0));
    [
        BUF,
        words,
        u64::from(mode),
        u64::from(a),
        ERRS,
        u64::from(MAX_LOG),
        u64::from(tm),
        u64::from(ta),
        u64::from(then.is_some()),
    ]
}

/// Every step of several rounds' moving inversions (all four modes, walking bits, the
/// complement of the random pattern), as the stress runner issues them: the fill writes
/// `pattern_value`, each check finds nothing on healthy memory and rewrites the next pattern.
#[test]
fn memory_rounds_match_pattern_value_in_every_mode() {
    let m = stress_mod();
    let check = m.kernel("mem_check").unwrap();
    let words = 4096u64;
    for r in [0u64, 1, 31, 77] {
        let mut mem = SparseMemory::new();
        let mut seen_modes = std::collections::BTreeSet::new();
        for (name, step) in round_steps(r) {
            match step {
                MemStep::Fill { mode, a } => {
                    seen_modes.insert(mode);
                    fill(&m, &mut mem, words, mode, a, 2);
                    for i in 0..words {
                        assert_eq!(
                            mem.read_u32(BUF + 4 * i),
                            pattern_value(mode, i, a),
                            "{name}: fill mode {mode} word {i}"
                        );
                    }
                }
                MemStep::Check { mode, a, then } => {
                    seen_modes.insert(mode);
                    launch(check, 3, 256, &check_params(words, mode, a, then), &mut mem).unwrap();
                    assert_eq!(errors(&mut mem), (0, vec![]), "{name}: round {r}");
                    if let Some((tm, ta)) = then {
                        for i in 0..words {
                            assert_eq!(mem.read_u32(BUF + 4 * i), pattern_value(tm, i, ta));
                        }
                    }
                }
            }
        }
        assert_eq!(seen_modes.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    }
}

/// mem_flip flips exactly the words and bits `injected_flips` names, and mem_check finds
/// every one of them (found = injected), with the index, the expected and the actual word.
#[test]
fn injected_flips_are_all_found() {
    let m = stress_mod();
    let flip = m.kernel("mem_flip").unwrap();
    let check = m.kernel("mem_check").unwrap();
    let words = 8192u64;
    for (mode, a) in [(0u32, 0u32), (2, 0x1234_5679), (3, 7), (1, 0xAAAA_AAAA)] {
        let mut mem = SparseMemory::new();
        fill(&m, &mut mem, words, mode, a, 1);
        let count = 37u32;
        launch(
            flip,
            1,
            256,
            &[BUF, words, u64::from(count), 12345],
            &mut mem,
        )
        .unwrap();
        let want: Vec<(u64, u32, u32)> = injected_flips(words, count, 12345)
            .into_iter()
            .map(|(w, bit)| {
                let e = pattern_value(mode, w, a);
                (w, e, e ^ (1 << bit))
            })
            .collect();
        assert_eq!(want.len(), 37);
        launch(check, 2, 256, &check_params(words, mode, a, None), &mut mem).unwrap();
        let (n, got) = errors(&mut mem);
        assert_eq!(n, 37, "mode {mode}");
        assert_eq!(got, want, "mode {mode}");
    }
}

/// More mismatches than log slots: all are counted, MAX_LOG are logged.
#[test]
fn the_error_log_is_bounded() {
    let m = stress_mod();
    let check = m.kernel("mem_check").unwrap();
    let words = 4u64 * 1100;
    let mut mem = SparseMemory::new();
    fill(&m, &mut mem, words, 1, 0, 1);
    launch(check, 4, 256, &check_params(words, 1, 1, None), &mut mem).unwrap();
    assert_eq!(mem.read_u64(ERRS), words);
    assert_eq!(mem.read_u64(ERRS + 8), words, "the slot counter counts on");
    let (_, logged) = errors(&mut mem);
    assert_eq!(logged.len(), MAX_LOG as usize);
    assert!(logged.iter().all(|(_, e, g)| *e == 1 && *g == 0));
}

/// Word indices at and above 2^33 (the high half of the index feeds modes 0, 2 and 3): a grid
/// of 2^32 threads over 2^35 + 32 words, of which only the first and last eight threads are
/// run (threads are independent), each striding twice past 2^32 vectors. Memory is sparse.
#[test]
fn word_indices_above_2_pow_33() {
    let m = stress_mod();
    let fillk = m.kernel("mem_fill").unwrap();
    let check = m.kernel("mem_check").unwrap();
    let flip = m.kernel("mem_flip").unwrap();
    let (grid, block) = (1u32 << 24, 256u32);
    let total = u64::from(grid) * u64::from(block);
    let words = 4 * (2 * total + 8);
    let gids: Vec<u64> = (0..8).chain(total - 8..total).collect();
    let indices = |gid: u64| -> Vec<u64> {
        let mut v = Vec::new();
        let mut vec = gid;
        while vec < words / 4 {
            v.extend((0..4).map(|k| 4 * vec + k));
            vec += total;
        }
        v
    };
    let all: Vec<u64> = gids.iter().flat_map(|g| indices(*g)).collect();
    assert!(all.iter().filter(|i| **i >= 1 << 33).count() >= 64);
    assert!(all.iter().any(|i| *i >= 1 << 35));
    for (mode, a) in [
        (0u32, 0u32),
        (0, !0),
        (2, 0xDEAD_BEEF),
        (3, 0xDEAD_BEEF),
        (1, 5),
    ] {
        let mut mem = SparseMemory::new();
        launch_threads(
            fillk,
            grid,
            block,
            gids.clone(),
            &[BUF, words, u64::from(mode), u64::from(a)],
            &mut mem,
        )
        .unwrap();
        for i in &all {
            assert_eq!(
                mem.read_u32(BUF + 4 * i),
                pattern_value(mode, *i, a),
                "mode {mode} word {i:#x}"
            );
        }
        // A flipped bit at a high index is found and logged with its full index.
        let bad = *all.iter().rev().nth(5).unwrap();
        assert!(bad >= 1 << 33);
        let w = mem.read_u32(BUF + 4 * bad);
        mem.write_u32(BUF + 4 * bad, w ^ 0x100);
        launch_threads(
            check,
            grid,
            block,
            gids.clone(),
            &check_params(words, mode, a, Some((3, 9))),
            &mut mem,
        )
        .unwrap();
        let e = pattern_value(mode, bad, a);
        assert_eq!(
            errors(&mut mem),
            (1, vec![(bad, e, e ^ 0x100)]),
            "mode {mode}"
        );
        for i in &all {
            assert_eq!(mem.read_u32(BUF + 4 * i), pattern_value(3, *i, 9));
        }
    }
    // mem_flip over the huge range: word t * (n / count) + seed % (n / count), high for t >= 1.
    let mut mem = SparseMemory::new();
    let count = 16u32;
    launch(flip, 1, 256, &[BUF, words, u64::from(count), 777], &mut mem).unwrap();
    let want = injected_flips(words, count, 777);
    assert!(want.iter().filter(|(w, _)| *w >= 1 << 33).count() >= 12);
    for (w, bit) in &want {
        assert_eq!(mem.read_u32(BUF + 4 * w), 1 << bit, "word {w:#x}");
    }
}

fn fma_errors(iters: u32, grid: u32, block: u32, corrupt: Option<usize>) -> u64 {
    let m = stress_mod();
    let k = m.kernel("fma_burn").unwrap();
    let mut expect = fma_burn_expected(iters);
    if let Some(c) = corrupt {
        expect[c] = f32::from_bits(expect[c].to_bits() ^ 1);
    }
    let bytes: Vec<u8> = expect.iter().flat_map(|f| f.to_le_bytes()).collect();
    let mut mem = SparseMemory::new();
    mem.write(BUF, &bytes).unwrap();
    launch(k, grid, block, &[BUF, ERRS, u64::from(iters)], &mut mem).unwrap();
    mem.read_u64(ERRS)
}

/// fma_burn's 64 thread classes against `fma_burn_expected`, at the runner's iteration count
/// and at counts that are not multiples of four (the kernel runs iters & ~3).
#[test]
fn fma_burn_matches_its_host_twin_in_every_class() {
    assert_eq!(fma_errors(FMA_ITERS, 1, 64, None), 0);
    for iters in [0u32, 3, 4, 101] {
        assert_eq!(fma_errors(iters, 2, 64, None), 0, "iters {iters}");
    }
    // A wrong expected value for class 5: each thread of that class counts once.
    assert_eq!(fma_errors(8, 3, 128, Some(5)), 6);
}

/// An unfused host multiply-add (two roundings) would make every class disagree with what
/// the kernel computes: the interpreter's FMA is fused like a GPU's.
#[test]
fn an_unfused_host_twin_disagrees_with_the_kernel() {
    let m = stress_mod();
    let k = m.kernel("fma_burn").unwrap();
    let unfused = gpudoctor::gpu::stress::fma_burn_expected_with(FMA_ITERS, |a, b, c| a * b + c);
    let bytes: Vec<u8> = unfused.iter().flat_map(|f| f.to_le_bytes()).collect();
    let mut mem = SparseMemory::new();
    mem.write(BUF, &bytes).unwrap();
    launch(k, 1, 64, &[BUF, ERRS, u64::from(FMA_ITERS)], &mut mem).unwrap();
    assert_eq!(mem.read_u64(ERRS), 64);
}

/// cmp_f32: |a - b| > tol or NaN counts, as the host rule (gpu-burn's) says.
#[test]
fn cmp_f32_counts_what_the_tolerance_rule_says() {
    let m = stress_mod();
    let k = m.kernel("cmp_f32").unwrap();
    let n = 5000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 900.0).collect();
    let mut b = a.clone();
    let tol = gpudoctor::gpu::stress::GEMM_TOLERANCE;
    for (i, x) in b.iter_mut().enumerate() {
        match i % 97 {
            1 => *x += 2e-3,
            2 => *x -= 5e-4, // within the tolerance
            3 => *x = f32::NAN,
            4 => *x = f32::INFINITY,
            _ => {}
        }
    }
    let want = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| {
            let d = (*x - *y).abs();
            d.is_nan() || d > tol
        })
        .count() as u64;
    assert!(want > 100);
    let enc = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let mut mem = SparseMemory::new();
    mem.write(BUF, &enc(&a)).unwrap();
    mem.write(OUT2, &enc(&b)).unwrap();
    launch(
        k,
        4,
        256,
        &[BUF, OUT2, n as u64, u64::from(tol.to_bits()), ERRS],
        &mut mem,
    )
    .unwrap();
    assert_eq!(mem.read_u64(ERRS), want);
}

/// The comparison catches a defect in a kernel: the own-address pattern with the high half
/// of the index multiplied by a wrong constant agrees below 2^32 words and differs above.
#[test]
fn a_wrong_kernel_is_caught_above_2_pow_32() {
    let good = "mul.lo.u32 \t%vt, %vhi, -1640531535;";
    assert!(STRESS_PTX.contains(good));
    let broken = parse(&STRESS_PTX.replace(good, "mul.lo.u32 \t%vt, %vhi, -1640531533;")).unwrap();
    let k = broken.kernel("mem_fill").unwrap();
    let (grid, block) = (1u32 << 24, 256u32);
    let total = u64::from(grid) * u64::from(block);
    let words = 4 * (total + 4);
    let mut mem = SparseMemory::new();
    launch_threads(k, grid, block, [0u64, 1], &[BUF, words, 0, 0], &mut mem).unwrap();
    assert_eq!(
        mem.read_u32(BUF + 4),
        pattern_value(0, 1, 0),
        "low indices agree"
    );
    let hi = 4 * total;
    assert_ne!(mem.read_u32(BUF + 4 * hi), pattern_value(0, hi, 0));
}
