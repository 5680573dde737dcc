//! A correctly rounded single-precision fused multiply-add that does not depend on the
//! platform's libm: the host twin of PTX `fma.rn.f32`.
//!
//! `f32::mul_add` calls the C library's `fmaf`, and mingw-w64's (x86_64-pc-windows-gnu) is not
//! correctly rounded: run under Wine it gives 0x426ad05d for `fma_burn`'s class 0 where a GPU
//! gives 0x426ad214, and differs from the correctly rounded result on about 11 % of random
//! inputs (checked with a test program built for x86_64-pc-windows-gnu), so every `fma_burn`
//! class differed from a healthy GPU's and `stress` told users to replace good GPUs (issue 29
//! item 1; tests/it/windows_standin_gpu.rs shows it under Wine).
//!
//! Method: rounding to odd (S. Boldo and G. Melquiond, "Emulation of FMA and correctly rounded
//! sums: proved algorithms using rounding to odd", IEEE Transactions on Computers 57(4), 2008,
//! Theorem 1). The product of two f32 values is exact in f64 (24 + 24 significant bits fit in
//! 53, and the exponent range of f64 holds every such product, subnormals included). The sum
//! `p + c` is then rounded to f64 with round-to-odd, computed from the round-to-nearest sum and
//! its exact error (Knuth's TwoSum, TAOCP vol. 2, 4.2.2). A value rounded to odd with at least
//! two more bits of precision than the target (53 >= 24 + 2) rounds to nearest-even in the
//! target exactly as the exact value would, so the final conversion to f32 (`as f32`, which
//! Rust defines as round to nearest, ties to even, done by the CPU, not libm) is the correctly
//! rounded fused result, as PTX ISA 7.0 defines `fma.rn.f32` ("computes the product of a and b
//! to infinite precision and then adds c to this product, again in infinite precision. The
//! resulting value is then rounded to single precision using the rounding mode specified by
//! .rnd"; 9.7.3.6).

/// `a * b + c` with a single rounding to nearest, ties to even (IEEE 754 fusedMultiplyAdd).
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    // Exact: |a*b| < 2^256 and, when non-zero, >= 2^-298, both well inside f64's normal range.
    let p = f64::from(a) * f64::from(b);
    let c = f64::from(c);
    let s = p + c;
    if !s.is_finite() || !p.is_finite() {
        // Infinities and NaNs: the f64 sum is already what IEEE 754 gives (inf - inf = NaN).
        return s as f32;
    }
    // TwoSum: s + e == p + c exactly (no overflow: both are far below f64's range).
    let bb = s - p;
    let e = (p - (s - bb)) + (c - bb);
    if e == 0.0 {
        return s as f32;
    }
    // Round to odd: an inexact sum with an even last bit moves one ulp toward the exact value
    // (s is not zero here: a zero RN sum is exact, Sterbenz).
    let bits = s.to_bits();
    let odd = if bits & 1 == 0 {
        let away = (e > 0.0) == (s > 0.0);
        f64::from_bits(if away { bits + 1 } else { bits - 1 })
    } else {
        s
    };
    odd as f32
}

#[cfg(test)]
#[path = "fmaf_tests.rs"]
mod tests;
