#!/usr/bin/env bash
# Benchmark of `gpudoctor stress` on a GPU machine (the stress issue's three ratios), from the
# JSON report of one run:
#   - memory-pattern throughput / device-to-device copy bandwidth measured in the same run
#     (design.md target >= 0.85);
#   - fraction of the memory free at start that the pattern test held (target >= 0.95);
#   - FMA burn rate / cuBLAS SGEMM rate on the same GPU (target >= 0.9).
#
#   scripts/bench-stress.sh [SECONDS]       # default 120; GPUDOCTOR_BIN to use another binary
#
# Prints one table row per GPU and keeps the report as stress-bench.json. Asserts nothing. Needs
# an NVIDIA driver (exit 1 without one, as gpudoctor stress does).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-120}
BIN=${GPUDOCTOR_BIN:-target/release/gpudoctor}
[ -x "$BIN" ] || cargo build --release --quiet
rc=0
"$BIN" stress --seconds "$SECONDS_" --json >stress-bench.json || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
  echo "gpudoctor stress failed (exit $rc)" >&2
  exit "$rc"
fi
python3 - stress-bench.json <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["snapshot"].get("stress") or {}
if s.get("error"):
    print("stress could not run:", s["error"].get("message"))
    sys.exit(1)
print(f"stress for {s['seconds']:.0f} s ({s['planned_seconds']:.0f} asked), verdict {r['verdict']}")
print("| GPU | memory GB/s | copy GB/s | memory/copy | covered/free | FMA GFLOP/s | SGEMM GFLOP/s | FMA/SGEMM | errors (mem, fma, gemm) |")
print("|---|---|---|---|---|---|---|---|---|")
for g in s["gpus"]:
    mem, copy = g.get("memory_gbps"), g.get("copy_gbps")
    fma, gemm = g.get("fma_gflops"), g.get("sgemm_gflops")
    ratio = lambda a, b: f"{a / b:.3f}" if a and b else "n/a"
    cov = g["tested_bytes"] / g["free_bytes"] if g.get("free_bytes") else 0
    name = g.get("name", "?")
    print(f"| {g.get('index', g['ordinal'])} {name} | {mem} | {copy} | {ratio(mem, copy)} | {cov:.3f} | {fma} | {gemm} | {ratio(fma, gemm)} | {g['memory_errors']}, {g['compute_errors']}, {g.get('gemm_errors', 0)} |")
PYEOF
