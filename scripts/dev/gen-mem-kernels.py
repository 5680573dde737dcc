#!/usr/bin/env python3
"""Generates the vectorised mem_fill and mem_check kernels of src/gpu/stress.ptx.

Each thread handles 16 bytes (four 32-bit words) per iteration of a grid-stride loop, with
128-bit loads and stores, and computes a word's value only for the pattern mode in use (a
uniform branch), instead of computing every mode and selecting. The scalar kernels capped the
pattern test at 0.84-0.86 of the copy bandwidth on an H100 (docs/validation/h100-2026-11-23-*).

    python3 scripts/dev/gen-mem-kernels.py > /tmp/mem.ptx   # then paste over the two kernels

The word values are those of the header of stress.ptx (pattern_value() in src/gpu/stress.rs).
"""

GOLD = -1640531535      # 0x9E3779B1
C2 = -2048144777        # 0x85EBCA77
M1 = 2146121005         # 0x7FEB352D
M2 = -2073254261        # 0x846CA68B


def value4(out, idx, mode_fixed, mode_own, a, mask, tag):
    """PTX computing out[k] = value(mode, idx + k, a) for k in 0..4.
    idx: a .b64 register holding the first word index; mode_fixed/mode_own: predicates;
    mask: a .b32 register, 0 for mode 2 (random) and all ones for mode 3 (its complement)."""
    L = []
    L.append(f"\t@{mode_fixed} bra \tV_FIXED_{tag};")
    L.append(f"\t@{mode_own} bra \tV_OWN_{tag};")
    # random: murmur3's finaliser of lo*GOLD ^ hi*C2 ^ a, complemented by the mask (mode 3)
    for k in range(4):
        L += [
            f"\tadd.s64 \t%vi, {idx}, {k};",
            "\tcvt.u32.u64 \t%vlo, %vi;",
            "\tshr.u64 \t%vhi64, %vi, 32;",
            "\tcvt.u32.u64 \t%vhi, %vhi64;",
            f"\tmul.lo.u32 \t%vt, %vlo, {GOLD};",
            f"\tmul.lo.u32 \t%vu, %vhi, {C2};",
            "\txor.b32 \t%vt, %vt, %vu;",
            f"\txor.b32 \t%vt, %vt, {a};",
            "\tshr.u32 \t%vu, %vt, 16;",
            "\txor.b32 \t%vt, %vt, %vu;",
            f"\tmul.lo.u32 \t%vt, %vt, {M1};",
            "\tshr.u32 \t%vu, %vt, 15;",
            "\txor.b32 \t%vt, %vt, %vu;",
            f"\tmul.lo.u32 \t%vt, %vt, {M2};",
            "\tshr.u32 \t%vu, %vt, 16;",
            "\txor.b32 \t%vt, %vt, %vu;",
            f"\txor.b32 \t{out[k]}, %vt, {mask};",
        ]
    L.append(f"\tbra.uni \tV_HAVE_{tag};")
    L.append(f"V_OWN_{tag}:")
    for k in range(4):
        L += [
            f"\tadd.s64 \t%vi, {idx}, {k};",
            "\tcvt.u32.u64 \t%vlo, %vi;",
            "\tshr.u64 \t%vhi64, %vi, 32;",
            "\tcvt.u32.u64 \t%vhi, %vhi64;",
            f"\tmul.lo.u32 \t%vt, %vhi, {GOLD};",
            "\txor.b32 \t%vt, %vlo, %vt;",
            f"\txor.b32 \t{out[k]}, %vt, {a};",
        ]
    L.append(f"\tbra.uni \tV_HAVE_{tag};")
    L.append(f"V_FIXED_{tag}:")
    for k in range(4):
        L.append(f"\tmov.b32 \t{out[k]}, {a};")
    L.append(f"V_HAVE_{tag}:")
    return L


COMMON_REGS = [
    "\t.reg .b64 \t%vi;",
    "\t.reg .b64 \t%vhi64;",
    "\t.reg .b32 \t%vlo;",
    "\t.reg .b32 \t%vhi;",
    "\t.reg .b32 \t%vt;",
    "\t.reg .b32 \t%vu;",
    "\t.reg .b32 \t%vm<2>;",
    "\t.reg .pred \t%vp;",
]


def mask(reg, mode):
    """reg = all ones when the mode register is 3 (the random pattern's complement), else 0."""
    return [f"\tsetp.eq.u32 \t%vp, {mode}, 3;", f"\tselp.b32 \t{reg}, -1, 0, %vp;"]

GRID = [
    "\tmov.u32 \t%r3, %ctaid.x;",
    "\tmov.u32 \t%r4, %ntid.x;",
    "\tmov.u32 \t%r5, %tid.x;",
    "\tmov.u32 \t%r6, %nctaid.x;",
    "\tmul.wide.u32 \t%rd3, %r3, %r4;",
    "\tcvt.u64.u32 \t%rd4, %r5;",
    "\tadd.s64 \t%rd3, %rd3, %rd4;",   # rd3: this thread's first 16-byte vector
    "\tmul.wide.u32 \t%rd5, %r6, %r4;",  # rd5: the grid's stride in vectors
]


def fill():
    L = [
        "// mem_fill(buf: *u32, n: u64, mode: u32, a: u32): buf[i] = value(mode, i, a) for i < n.",
        "// n is a multiple of 4 (the host's chunks are multiples of 16 bytes); each thread writes",
        "// four words per step with one 128-bit store.",
        ".visible .entry mem_fill(",
        "\t.param .u64 mem_fill_param_0,",
        "\t.param .u64 mem_fill_param_1,",
        "\t.param .u32 mem_fill_param_2,",
        "\t.param .u32 mem_fill_param_3",
        ")",
        "{",
        "\t.reg .pred \t%p<4>;",
        "\t.reg .b32 \t%r<8>;",
        "\t.reg .b32 \t%e<4>;",
        "\t.reg .b64 \t%rd<12>;",
    ] + COMMON_REGS + [
        "",
        "\tld.param.u64 \t%rd1, [mem_fill_param_0];",
        "\tld.param.u64 \t%rd2, [mem_fill_param_1];",
        "\tld.param.u32 \t%r1, [mem_fill_param_2];",
        "\tld.param.u32 \t%r2, [mem_fill_param_3];",
    ] + GRID + [
        "\tshr.u64 \t%rd6, %rd2, 2;",
        "\tsetp.eq.u32 \t%p2, %r1, 0;",
        "\tsetp.eq.u32 \t%p3, %r1, 1;",
    ] + mask("%vm0", "%r1") + [
        "FILL_LOOP:",
        "\tsetp.ge.u64 \t%p1, %rd3, %rd6;",
        "\t@%p1 bra \tFILL_DONE;",
        "\tshl.b64 \t%rd7, %rd3, 2;",        # first word index
    ]
    L += value4(["%e0", "%e1", "%e2", "%e3"], "%rd7", "%p3", "%p2", "%r2", "%vm0", "F")
    L += [
        "\tshl.b64 \t%rd8, %rd3, 4;",
        "\tadd.s64 \t%rd9, %rd1, %rd8;",
        "\tst.global.v4.u32 \t[%rd9], {%e0, %e1, %e2, %e3};",
        "\tadd.s64 \t%rd3, %rd3, %rd5;",
        "\tbra.uni \tFILL_LOOP;",
        "FILL_DONE:",
        "\tret;",
        "}",
    ]
    return L


def check():
    L = [
        "// mem_check(buf: *u32, n: u64, mode: u32, a: u32, errs: *u64, max_log: u32,",
        "//           then_mode: u32, then_a: u32, rewrite: u32)",
        "// Compares buf[i] with value(mode, i, a). A mismatch adds 1 to errs[0]; the first max_log",
        "// mismatches are logged through the slot counter errs[1] as errs[2 + 2k] = i and",
        "// errs[3 + 2k] = expected << 32 | actual. With rewrite != 0, then writes value(then_mode, i,",
        "// then_a) to buf[i] (the moving-inversions step: verify, then write the complement).",
        "// n is a multiple of 4; each thread reads and rewrites four words per step (128 bits).",
        ".visible .entry mem_check(",
        "\t.param .u64 mem_check_param_0,",
        "\t.param .u64 mem_check_param_1,",
        "\t.param .u32 mem_check_param_2,",
        "\t.param .u32 mem_check_param_3,",
        "\t.param .u64 mem_check_param_4,",
        "\t.param .u32 mem_check_param_5,",
        "\t.param .u32 mem_check_param_6,",
        "\t.param .u32 mem_check_param_7,",
        "\t.param .u32 mem_check_param_8",
        ")",
        "{",
        "\t.reg .pred \t%p<12>;",
        "\t.reg .b32 \t%r<40>;",
        "\t.reg .b32 \t%e<4>;",
        "\t.reg .b32 \t%g<4>;",
        "\t.reg .b32 \t%w<4>;",
        "\t.reg .b64 \t%rd<32>;",
    ] + COMMON_REGS + [
        "",
        "\tld.param.u64 \t%rd1, [mem_check_param_0];",
        "\tld.param.u64 \t%rd2, [mem_check_param_1];",
        "\tld.param.u32 \t%r1, [mem_check_param_2];",
        "\tld.param.u32 \t%r2, [mem_check_param_3];",
        "\tld.param.u64 \t%rd20, [mem_check_param_4];",
        "\tld.param.u32 \t%r30, [mem_check_param_5];",
        "\tld.param.u32 \t%r31, [mem_check_param_6];",
        "\tld.param.u32 \t%r32, [mem_check_param_7];",
        "\tld.param.u32 \t%r33, [mem_check_param_8];",
    ] + GRID + [
        "\tshr.u64 \t%rd6, %rd2, 2;",
        "\tsetp.eq.u32 \t%p2, %r1, 0;",
        "\tsetp.eq.u32 \t%p3, %r1, 1;",
        "\tsetp.eq.u32 \t%p5, %r31, 0;",
        "\tsetp.eq.u32 \t%p6, %r31, 1;",
        "\tsetp.ne.u32 \t%p7, %r33, 0;",
        "\tcvt.u64.u32 \t%rd21, %r30;",
    ] + mask("%vm0", "%r1") + mask("%vm1", "%r31") + [
        "CHECK_LOOP:",
        "\tsetp.ge.u64 \t%p1, %rd3, %rd6;",
        "\t@%p1 bra \tCHECK_DONE;",
        "\tshl.b64 \t%rd7, %rd3, 2;",        # first word index
        "\tshl.b64 \t%rd8, %rd3, 4;",
        "\tadd.s64 \t%rd8, %rd1, %rd8;",     # its address
        "\tld.global.v4.u32 \t{%g0, %g1, %g2, %g3}, [%rd8];",
    ]
    L += value4(["%e0", "%e1", "%e2", "%e3"], "%rd7", "%p3", "%p2", "%r2", "%vm0", "C")
    for k in range(4):
        L += [
            f"\tsetp.eq.u32 \t%p4, %g{k}, %e{k};",
            f"\t@%p4 bra \tCHECK_OK{k};",
            "\t// A mismatch: count it, and log it while slots remain.",
            "\tatom.global.add.u64 \t%rd9, [%rd20], 1;",
            "\tatom.global.add.u64 \t%rd10, [%rd20+8], 1;",
            "\tsetp.ge.u64 \t%p8, %rd10, %rd21;",
            f"\t@%p8 bra \tCHECK_OK{k};",
            "\tshl.b64 \t%rd11, %rd10, 4;",
            "\tadd.s64 \t%rd12, %rd20, %rd11;",
            f"\tadd.s64 \t%rd15, %rd7, {k};",
            "\tst.global.u64 \t[%rd12+16], %rd15;",
            f"\tcvt.u64.u32 \t%rd13, %e{k};",
            "\tshl.b64 \t%rd13, %rd13, 32;",
            f"\tcvt.u64.u32 \t%rd14, %g{k};",
            "\tor.b64 \t%rd13, %rd13, %rd14;",
            "\tst.global.u64 \t[%rd12+24], %rd13;",
            f"CHECK_OK{k}:",
        ]
    L += [
        "\t@!%p7 bra \tCHECK_NEXT;",
    ]
    L += value4(["%w0", "%w1", "%w2", "%w3"], "%rd7", "%p6", "%p5", "%r32", "%vm1", "R")
    L += [
        "\tst.global.v4.u32 \t[%rd8], {%w0, %w1, %w2, %w3};",
        "CHECK_NEXT:",
        "\tadd.s64 \t%rd3, %rd3, %rd5;",
        "\tbra.uni \tCHECK_LOOP;",
        "CHECK_DONE:",
        "\tret;",
        "}",
    ]
    return L


if __name__ == "__main__":
    print("\n".join(fill()))
    print()
    print("\n".join(check()))
