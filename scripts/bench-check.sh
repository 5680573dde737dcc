#!/usr/bin/env bash
# Median wall time of `gpudoctor check --no-smoke --format json` beside its peers on the same machine:
# `nvidia-smi -q` and `python -m torch.utils.collect_env`, where they exist.
#
#   scripts/bench-check.sh [RUNS]          (default 21 runs each)
#   GPUDOCTOR=path/to/gpudoctor            (default: target/release/gpudoctor, built if missing)
#   TORCH_PYTHON=path/to/python            (an interpreter with torch; default: python3 if it has torch)
#
# Prints a Markdown table with medians and the ratios design.md asks for (check at most 1/3 of
# nvidia-smi -q and 1/10 of collect_env; under 50 ms on a machine with no driver).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-21}
BIN=${GPUDOCTOR:-target/release/gpudoctor}
if [ ! -x "$BIN" ]; then
  cargo build --release -q
fi
TORCH_PY=${TORCH_PYTHON:-}
if [ -z "$TORCH_PY" ] && python3 -c 'import torch' >/dev/null 2>&1; then
  TORCH_PY=python3
fi
exec python3 - "$RUNS" "$BIN" "$TORCH_PY" <<'PYEOF'
import os, platform, shutil, statistics, subprocess, sys, time
runs, binary, torch_py = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def median_ms(cmd):
    # One warm-up run, then `runs` timed runs; output is discarded.
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), min(times), max(times)

# design.md's target is for `check` without GPU kernels: the first row. The smoke tests are timed
# apart (their own target: under 3 s per GPU).
rows = [("gpudoctor check --no-smoke --format json", [binary, "check", "--no-smoke", "--format", "json"])]
if shutil.which("nvidia-smi"):
    rows.append(("nvidia-smi -q", ["nvidia-smi", "-q"]))
if torch_py:
    rows.append(("python -m torch.utils.collect_env", [torch_py, "-m", "torch.utils.collect_env"]))

cpu = "unknown CPU"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
driver = "no NVIDIA driver" if not os.path.exists("/proc/driver/nvidia/version") else open("/proc/driver/nvidia/version").readline().strip()
print(f"Machine: {os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}; {driver}")
print(f"Runs: {runs} each (after one warm-up), medians in ms\n")
print("| command | median ms | min | max |")
print("|---|---|---|---|")
res = {}
for name, cmd in rows:
    med, lo, hi = median_ms(cmd)
    res[name] = med
    print(f"| `{name}` | {med:.1f} | {lo:.1f} | {hi:.1f} |")
base = res[rows[0][0]]
if os.path.exists("/proc/driver/nvidia/version"):
    med, lo, hi = median_ms([binary, "check", "--format", "json"])
    print(f"| `gpudoctor check --format json` (smoke tests too) | {med:.1f} | {lo:.1f} | {hi:.1f} |")
print()
for name, _ in rows[1:]:
    print(f"- check / {name}: {base / res[name]:.3f} (target: at most {'0.333' if 'nvidia-smi' in name else '0.100'})")
if len(rows) == 1:
    print("- neither nvidia-smi nor a Python with torch is here: only the absolute time is measured")
PYEOF
