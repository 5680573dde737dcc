//! Unit tests of `fmaf`: known fused results, the double-rounding case that a naive
//! `(a * b + c) as f32` in f64 gets wrong, and a property test against the CPU's own FMA
//! instruction (x86_64 with FMA3) and against glibc's correct `fmaf` (Linux).
use super::*;

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// An unfused multiply-add: two roundings (one way a C library's fmaf can be wrong;
/// mingw-w64's is wrong in another, see the module's header).
fn unfused(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

/// a*b + c = 1 + 2^-23 + 2^-24 - 2^-70 exactly: just below the midpoint between 1 + 2^-23 and
/// 1 + 2^-22, so the fused result is 1 + 2^-23. Rounded first to f64 it lands exactly on the
/// midpoint and ties to even (1 + 2^-22): the case round-to-odd exists for.
#[test]
fn double_rounding_case() {
    let (a, b, c) = (f(0x3380_0001), f(0x3F7F_FFFE), f(0x3F80_0001));
    assert_eq!(fmaf(a, b, c).to_bits(), 0x3F80_0001);
    let naive = (f64::from(a) * f64::from(b) + f64::from(c)) as f32;
    assert_eq!(
        naive.to_bits(),
        0x3F80_0002,
        "the case must defeat naive f64"
    );
    // And the unfused one rounds the product first: a*b -> 2^-24, 1+2^-23+2^-24 ties to even.
    assert_eq!(unfused(a, b, c).to_bits(), 0x3F80_0002);
}

#[test]
fn known_fused_results() {
    // 0.1f * 10 - 1: fused keeps the product's rounding error (0x3F800000 * ... = 1.4901161e-8).
    assert_eq!(fmaf(0.1, 10.0, -1.0).to_bits(), 0x3280_0000);
    assert_eq!(unfused(0.1, 10.0, -1.0).to_bits(), 0);
    // Special values.
    assert!(fmaf(f32::INFINITY, 0.0, 1.0).is_nan());
    assert!(fmaf(f32::INFINITY, 1.0, f32::NEG_INFINITY).is_nan());
    assert_eq!(fmaf(f32::INFINITY, 2.0, 1.0), f32::INFINITY);
    assert_eq!(
        fmaf(f32::MAX, 2.0, -f32::MAX),
        f32::MAX,
        "no overflow of the product"
    );
    assert_eq!(fmaf(f32::MAX, 2.0, 0.0), f32::INFINITY);
    assert!(fmaf(f32::NAN, 1.0, 1.0).is_nan());
    // Signed zeros: (+0 * -1) + -0 = -0; (+0 * 1) + -0 = +0.
    assert_eq!(fmaf(0.0, -1.0, -0.0).to_bits(), 0x8000_0000);
    assert_eq!(fmaf(0.0, 1.0, -0.0).to_bits(), 0);
    // Subnormal results: 2^-75 * 2^-75 rounds to 0; 2^-74 * 2^-75 = 2^-149 (the least).
    assert_eq!(fmaf(f(0x1A00_0000), f(0x1A00_0000), 0.0).to_bits(), 0);
    assert_eq!(fmaf(f(0x1A80_0000), f(0x1A00_0000), 0.0).to_bits(), 1);
    // Exact cancellation to a tiny remainder: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46.
    let x = f(0x3F80_0001);
    assert_eq!(fmaf(x, x, -f(0x3F80_0002)).to_bits(), 0x2880_0000);
}

/// The class-0 value of `fma_burn` after 8192 steps: 0x426ad214 is what a GPU computes (issue
/// 29) and what the fused host twin must give. With an unfused multiply-add (two roundings)
/// every one of the 64 classes comes out different, so the check would flag every healthy GPU.
#[test]
fn fma_burn_class_zero_is_the_gpus_value() {
    let v = crate::gpu::stress::fma_burn_expected(8192);
    assert_eq!(v[0].to_bits(), 0x426a_d214);
    let unfused_v = crate::gpu::stress::fma_burn_expected_with(8192, unfused);
    assert_ne!(unfused_v[0].to_bits(), 0x426a_d214);
    let wrong = v
        .iter()
        .zip(&unfused_v)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(wrong, 64);
}

/// `smoke_arith`'s float result uses the same FMA.
#[test]
fn smoke_arith_uses_the_fused_fma() {
    let differ = (0..1u32 << 16)
        .filter(|i| {
            let (_, fused) = crate::gpu::smoke::expected_arith(*i);
            let mut y = *i as f32;
            for _ in 0..8 {
                y = unfused(y, 1.0 + 1.0 / 1024.0, 0.5);
            }
            fused.to_bits() != y.to_bits()
        })
        .count();
    assert!(
        differ > 0,
        "unfused and fused agree everywhere: the test proves nothing"
    );
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn hw_fma(a: f32, b: f32, c: f32) -> f32 {
    use std::arch::x86_64::*;
    _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)))
}

/// Bit patterns that stress rounding: random, near-midpoint and cancelling inputs.
fn triples(seed: u64, n: usize) -> Vec<(f32, f32, f32)> {
    let mut s = seed;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|k| {
            let r = next();
            let (a, b) = (f(r as u32), f((r >> 32) as u32));
            let c = match k % 4 {
                // Any value.
                0 => f(next() as u32),
                // Close to -a*b: massive cancellation.
                1 => -((f64::from(a) * f64::from(b)) as f32),
                // Near a*b's magnitude, a few ulps off.
                2 => f((((f64::from(a) * f64::from(b)) as f32).to_bits())
                    .wrapping_add(next() as u32 % 5)),
                // Within a normal exponent range, where midpoints are common.
                _ => f(0x3F00_0000 | (next() as u32 & 0x00FF_FFFF)),
            };
            (a, b, c)
        })
        .collect()
}

fn same(x: f32, y: f32) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

#[cfg(target_arch = "x86_64")]
#[test]
fn agrees_with_the_cpus_fma_instruction() {
    if !std::arch::is_x86_feature_detected!("fma") {
        // No FMA3 on this CPU: `agrees_with_glibc` and the known cases still compare.
        return;
    }
    let mut n = 0;
    for (a, b, c) in triples(0x9E37_79B9_7F4A_7C15, 400_000) {
        // SAFETY: the CPU has FMA3 (checked above).
        let hw = unsafe { hw_fma(a, b, c) };
        assert!(
            same(fmaf(a, b, c), hw),
            "fmaf({a:e}, {b:e}, {c:e}): {:#x} vs hw {:#x}",
            fmaf(a, b, c).to_bits(),
            hw.to_bits()
        );
        n += 1;
    }
    assert_eq!(n, 400_000);
}

/// glibc's fmaf is correctly rounded (it is what `f32::mul_add` calls on Linux).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn agrees_with_glibc() {
    for (a, b, c) in triples(0x1234_5678_9ABC_DEF1, 200_000) {
        assert!(
            same(fmaf(a, b, c), a.mul_add(b, c)),
            "fmaf({a:e}, {b:e}, {c:e})"
        );
    }
}
