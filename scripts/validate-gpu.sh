#!/usr/bin/env bash
# The GPU validation kit: runs everything the issue "Validate everything on a real GPU machine"
# lists, with prebuilt binaries, and writes the redacted outputs and figures into one folder of at
# most 8 files (so they come back from a lent GPU machine).
#
#   scripts/validate-gpu.sh [-b BIN] [-o OUTDIR] [-s STANDIN] [-g GPUBURN_SRC] [--stress-seconds N]
#                           [--inject-seconds N] [--side-seconds N] [--quick]
#
#   -b BIN              the gpudoctor binary (default: .device-bin/gpudoctor, else target/release/gpudoctor)
#   -s STANDIN          the tests' stand-in driver (libstandin_cuda.so from `cargo build -p
#                       standin-cuda`; default: .device-bin/libstandin_cuda.so when there): the
#                       smoke tests and a short stress run go through it too, beside the real
#                       ones, so what CI sees and what the GPU does can be compared step by step
#   -o OUTDIR           where the 8 files go (default: $OUT if set, else validation-out/)
#   --stress-seconds N  length of the main stress run (default 180: `stress --minutes 3`)
#   --inject-seconds N  length of the fault-injection run (default 60)
#   -g GPUBURN_SRC      gpu-burn's public source (github.com/wilicc/gpu-burn, kept in a git-ignored
#                       folder; default .device-bin/gpu-burn when there): built there with its nvcc
#                       and run for the main stress run's seconds, right after it, both GFLOP/s
#                       in summary.md
#   --side-seconds N    length of the shorter stress runs (Xid, --memory-fraction 0.97, --gpu 0;
#                       default 20)
#   --quick             short runs everywhere (for testing the kit itself)
#
# Also recorded: each GPU's compute mode (EXCLUSIVE_PROCESS changes what the smoke tests may
# do) and driver model, and `--gpu 0` runs of check and stress (the selection path, which on a
# one-GPU machine must give the same results as no selection).
#
# Every step has its own deadline (`timeout -k`), so a wedged driver costs that step, not the
# run; each step's exit status and wall time go into summary.md. Without a GPU (or with the
# simulated GPUs: GPUDOCTOR_SIM_GPUS=N for stress) the steps that need one say "not here".
#
# Files written (8 at most):
#   summary.md     machine, every step with exit status and time, the figures
#   check.txt      check in every format, --deep, recommend, smoke step times
#   check.json     check --format json (with the snapshot)
#   snapshot.json  snapshot --redact
#   stress.txt     stress runs: main, --inject-faults, Xid from another process, --memory-fraction 0.97
#                  under lazy and eager module loading, 1.0 refused
#   stress.json    the main stress run's JSON report
#   probes.txt     first-run list: NVML event types, NVML call times, persistence, cuBLAS on the
#                  library path, kernel-log Xid lines
#   explain.txt    a real PyTorch OOM with a second process holding memory; explain --with-check
# UUIDs, serial numbers and the host name are redacted from every file at the end.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

BIN=""
STANDIN=""
OUTDIR="${OUT:-validation-out}"
STRESS_S=180
INJECT_S=60
SIDE_S=20
GPUBURN=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    -b) BIN="$2"; shift 2 ;;
    -o) OUTDIR="$2"; shift 2 ;;
    --stress-seconds) STRESS_S="$2"; shift 2 ;;
    --inject-seconds) INJECT_S="$2"; shift 2 ;;
    --side-seconds) SIDE_S="$2"; shift 2 ;;
    -g) GPUBURN="$2"; shift 2 ;;
    --quick) QUICK=1; STRESS_S=6; INJECT_S=4; SIDE_S=3; shift ;;
    -s) STANDIN="$2"; shift 2 ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "validate-gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$BIN" ]; then
  for c in .device-bin/gpudoctor target/release/gpudoctor; do
    [ -x "$c" ] && { BIN="$c"; break; }
  done
fi
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "validate-gpu.sh: no gpudoctor binary: build one (cargo build --release) or pass -b BIN" >&2
  exit 2
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
if [ -z "$STANDIN" ]; then
  [ -f .device-bin/libstandin_cuda.so ] && STANDIN=.device-bin/libstandin_cuda.so
fi
if [ -z "$GPUBURN" ]; then
  [ -f .device-bin/gpu-burn/gpu_burn-drv.cpp ] && GPUBURN=.device-bin/gpu-burn
fi
[ -n "$STANDIN" ] && STANDIN="$(cd "$(dirname "$STANDIN")" && pwd)/$(basename "$STANDIN")"
mkdir -p "$OUTDIR" || { echo "validate-gpu.sh: cannot create $OUTDIR" >&2; exit 2; }
OUTDIR="$(cd "$OUTDIR" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
S="$OUTDIR/summary.md"
PY=python3
command -v "$PY" >/dev/null 2>&1 || PY=""
HAVE_SMI=0; command -v nvidia-smi >/dev/null 2>&1 && HAVE_SMI=1
HAVE_TORCH=0; [ -n "$PY" ] && "$PY" -c 'import torch' >/dev/null 2>&1 && HAVE_TORCH=1
HAVE_CUPY=0; [ -n "$PY" ] && "$PY" -c 'import cupy' >/dev/null 2>&1 && HAVE_CUPY=1
HAVE_PYNVML=0; [ -n "$PY" ] && "$PY" -c 'import pynvml' >/dev/null 2>&1 && HAVE_PYNVML=1
SIM=${GPUDOCTOR_SIM_GPUS:-}

: >"$S"
for f in check.txt probes.txt stress.txt explain.txt; do : >"$OUTDIR/$f"; done

# step NAME FILE DEADLINE CMD...: runs CMD with a deadline, appends its output to FILE under a
# header, and a row (exit status, seconds) to the summary's table.
STEPS="$WORK/steps"
: >"$STEPS"
step() {
  local name="$1" file="$2" deadline="$3"; shift 3
  local t0 t1 rc
  t0=$(date +%s.%N)
  {
    echo
    echo "===== $name"
    echo "\$ $*"
  } >>"$file"
  timeout -k 5 "$deadline" "$@" >>"$file" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  echo "----- exit $rc, ${secs} s" >>"$file"
  # 124/137 are the deadline's only when the step lasted that long (a job killed by SIGKILL on
  # purpose also exits 137).
  if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && awk -v s="$secs" -v d="$deadline" 'BEGIN{exit !(s >= d)}'; then
    rc="$rc (deadline ${deadline}s)"
  fi
  echo "| $name | $rc | $secs |" >>"$STEPS"
  return 0
}
note() { echo "$*" >>"$WORK/notes"; }
: >"$WORK/notes"

# ---------------------------------------------------------------- machine
{
  echo "# gpudoctor GPU validation"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- gpudoctor: $("$BIN" --version 2>&1 | head -1)"
  echo "- kernel: $(uname -srm)"
  echo "- CPUs: $(nproc), memory: $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  if [ -r /proc/driver/nvidia/version ]; then
    echo "- driver: $(head -1 /proc/driver/nvidia/version)"
  else
    echo "- driver: none (/proc/driver/nvidia/version absent)"
  fi
  if [ "$HAVE_SMI" = 1 ]; then
    echo "- GPUs: $(timeout 20 nvidia-smi --query-gpu=name,memory.total,persistence_mode,pstate --format=csv,noheader 2>&1 | paste -sd ';')"
    # Compute mode (Default, Exclusive_Process, Prohibited) and, on Windows, the driver model
    # (WDDM caps stress's memory test): the smoke tests release the GPU before the cuDNN
    # helper because of EXCLUSIVE_PROCESS, so say which mode this run saw.
    echo "- compute mode: $(timeout 20 nvidia-smi --query-gpu=index,compute_mode --format=csv,noheader 2>&1 | paste -sd ';')"
    echo "- driver model: $(timeout 20 nvidia-smi --query-gpu=index,driver_model.current --format=csv,noheader 2>&1 | paste -sd ';')"
  fi
  echo "- stand-in driver: ${STANDIN:-none (no -s, no .device-bin/libstandin_cuda.so)}"
  [ -n "$SIM" ] && echo "- simulated GPUs for stress: $SIM (GPUDOCTOR_SIM_GPUS)"
  echo "- python3: ${PY:+$("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1)}; torch $([ "$HAVE_TORCH" = 1 ] && "$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo absent); cupy $([ "$HAVE_CUPY" = 1 ] && echo present || echo absent)"
} >>"$S"

# ---------------------------------------------------------------- check, every format
C="$OUTDIR/check.txt"
step "check (human, cold: first run of this script)" "$C" 60 "$BIN" check --color never
step "check --verbose" "$C" 60 "$BIN" check --verbose --color never
step "check --format json" "$WORK/misc.log" 60 sh -c "\"$BIN\" check --format json >\"$OUTDIR/check.json\""
step "check --format markdown" "$C" 60 "$BIN" check --format markdown
step "check --format line" "$C" 60 "$BIN" check --format line
step "check --format prometheus" "$C" 60 "$BIN" check --format prometheus
step "check --format junit" "$C" 60 "$BIN" check --format junit
step "check --no-smoke --format line" "$C" 60 "$BIN" check --no-smoke --format line
# --gpu 0: on a one-GPU machine the same smoke results as without it; on several, only GPU 0
# gets a context (the others are described, not opened).
step "check --gpu 0 --format line" "$C" 60 "$BIN" check --gpu 0 --format line
step "check --deep (real torch, JAX, ...)" "$C" 120 "$BIN" check --deep --verbose --color never --timeout 60
step "recommend" "$C" 60 "$BIN" recommend
step "recommend --json" "$C" 60 "$BIN" recommend --json
step "snapshot --redact" "$WORK/misc.log" 60 sh -c "\"$BIN\" snapshot --redact >\"$OUTDIR/snapshot.json\""
# The same smoke tests through the tests' stand-in driver (our PTX in the PTX interpreter),
# beside the real run: the steps and their verdicts should agree with the GPU's.
if [ -n "$STANDIN" ]; then
  mkdir -p "$WORK/standin"
  cp "$STANDIN" "$WORK/standin/libcuda.so.1"
  step "stand-in: check --format json (smoke through the stand-in driver)" "$WORK/misc.log" 120 sh -c "LD_LIBRARY_PATH=\"$WORK/standin\" \"$BIN\" check --format json --timeout 100 >\"$WORK/standin-check.json\""
  step "stand-in: check --format line" "$C" 120 env LD_LIBRARY_PATH="$WORK/standin" "$BIN" check --format line --timeout 100
fi
# Smoke step times, from the JSON report.
if [ -n "$PY" ] && [ -s "$OUTDIR/check.json" ]; then
  "$PY" - "$OUTDIR/check.json" >>"$WORK/smoke.md" 2>&1 <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"check.json unreadable: {e}"); sys.exit(0)
print(f"check verdict: {r.get('verdict')}, summary {r.get('summary')}")
for f in r.get("findings", []):
    print(f"- finding {f.get('severity')} {f.get('rule')}: {f.get('title')}")
sm = (r.get("snapshot") or {}).get("smoke") or {}
v = sm.get("value", sm) if isinstance(sm, dict) else {}
if not isinstance(v, dict) or not v.get("gpus"):
    print(f"\nsmoke tests: none ran ({json.dumps(sm)[:300]})")
    sys.exit(0)
print(f"\nsmoke tests: {v.get('millis')} ms in all; cuBLAS: {json.dumps(v.get('cublas'))[:200]}")
print("\n| GPU | step | status | ms | detail |")
print("|---|---|---|---|---|")
for g in v["gpus"]:
    for s in g.get("steps", []):
        d = (s.get("detail") or "").replace("|", "/")[:120]
        print(f"| {g.get('ordinal')} {g.get('name','')} | {s['name']} | {s['status']} | {s.get('millis')} | {d} |")
    print(f"\nGPU {g.get('ordinal')}: H2D {g.get('h2d_gbps')} GB/s, D2H {g.get('d2h_gbps')} GB/s, D2D {g.get('d2d_gbps')} GB/s, SGEMM {g.get('sgemm_gflops')} GFLOP/s")
PYEOF
  if [ -s "$WORK/standin-check.json" ]; then
    {
      echo
      echo "### beside it: the smoke steps through the stand-in driver"
      echo
      "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = ((r.get("snapshot") or {}).get("smoke") or {}).get("value") or {}
for g in v.get("gpus", []):
    print("stand-in GPU", g.get("ordinal"), ":", ", ".join(s["name"] + " " + s["status"] for s in g.get("steps", [])))
' "$WORK/standin-check.json" 2>&1
    } >>"$WORK/smoke.md"
  fi
fi

# ---------------------------------------------------------------- benchmarks
B="$WORK/bench.md"
RUNS=$([ "$QUICK" = 1 ] && echo 3 || echo 11)
if [ -n "$PY" ]; then
  timeout -k 5 300 "$PY" - "$RUNS" "$BIN" "$HAVE_SMI" "$HAVE_TORCH" >"$B" 2>&1 <<'PYEOF'
import statistics, subprocess, sys, time
runs, binary, smi, torch = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
# check --no-smoke and nvidia-smi -q are timed in pairs (one of each, in turn, RUNS times after
# one warm-up of each), so a drift of the machine touches both alike; the slower peers get fewer runs.
rows = [("gpudoctor check --no-smoke --format json", [binary, "check", "--no-smoke", "--format", "json"], runs)]
if smi:
    rows.append(("nvidia-smi -q", ["nvidia-smi", "-q"], runs))
rows.append(("gpudoctor check --format json (with smoke tests)", [binary, "check", "--format", "json"], max(3, runs // 2)))
if torch:
    rows.append(("python3 -m torch.utils.collect_env", [sys.executable, "-m", "torch.utils.collect_env"], 3))
def once(cmd):
    # No timeout= here: with one, subprocess's wait polls with sleeps of up to 50 ms, and every
    # time the first H200 run gave was 14 + 50k ms (docs/validation/h200-2026-11-27-run3). The
    # step's own deadline bounds the whole benchmark.
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
times = {name: [] for name, _, _ in rows}
for name, cmd, _ in rows:
    once(cmd)
paired = rows[:2] if smi else rows[:1]
for _ in range(runs):
    for name, cmd, _ in paired:
        times[name].append(once(cmd))
for name, cmd, n in rows[len(paired):]:
    times[name] = [once(cmd) for _ in range(n)]
print(f"Wall time in ms, after one warm-up each; check --no-smoke and nvidia-smi -q in {runs} alternating pairs\n")
print("| command | runs | median | min | max |")
print("|---|---|---|---|---|")
res = {}
for name, _, _ in rows:
    ts = times[name]
    res[name] = statistics.median(ts)
    print(f"| `{name}` | {len(ts)} | {res[name]:.1f} | {min(ts):.1f} | {max(ts):.1f} |")
base = res[rows[0][0]]
print()
for name, _, _ in rows[1:]:
    if "with smoke" in name:
        continue
    tgt = "0.333" if "nvidia-smi" in name else "0.100"
    print(f"- check --no-smoke / {name}: {base / res[name]:.3f} (target at most {tgt})")
PYEOF
fi

# ---------------------------------------------------------------- explain on a real OOM
E="$OUTDIR/explain.txt"
if [ "$HAVE_TORCH" = 1 ] && "$PY" -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat >"$WORK/hold.py" <<'PYEOF'
import sys, time, torch
# Hold a quarter of the GPU's memory until killed (the "other process").
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total * 0.25), dtype=torch.uint8, device="cuda")
print(f"holder: holding {x.numel() / 2**30:.1f} GiB", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
PYEOF
  cat >"$WORK/oom.py" <<'PYEOF'
import torch
# Ask for more than the GPU has: a real torch.OutOfMemoryError.
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
y = torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
PYEOF
  "$PY" "$WORK/hold.py" 90 >"$WORK/hold.log" 2>&1 &
  HOLD=$!
  sleep 8
  step "python3 oom.py (second process holds 25%)" "$WORK/oom.out" 60 "$PY" "$WORK/oom.py"
  cat "$WORK/oom.out" >>"$E"
  ERRLINE=$(grep -E 'OutOfMemoryError|out of memory' "$WORK/oom.out" | tail -1)
  echo "holder: $(cat "$WORK/hold.log")" >>"$E"
  if [ -n "$ERRLINE" ]; then
    step "explain --with-check <the error line>" "$E" 60 "$BIN" explain --with-check "$ERRLINE"
    step "explain --json <the error line>" "$E" 60 "$BIN" explain --json "$ERRLINE"
    grep -v -e '^=====' -e '^\$ ' -e '^-----' "$WORK/oom.out" | head -60 >"$WORK/oom.log"
    step "explain --log <the whole traceback>" "$E" 60 "$BIN" explain --log "$WORK/oom.log"
  else
    note "- the OOM script printed no out-of-memory line (see explain.txt)"
  fi
  kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
else
  echo "not here: no python3 with torch and a usable GPU" >>"$E"
fi
# ---------------------------------------------------------------- gpudoctor run on real failures
# A real CUDA OOM while a second process holds a third of the GPU (the verdict must name that
# process and its share), a real device-side assert, a SIGKILL from outside, and an exit status
# passed through. Each run's JSON report is appended after its verdict.
if "$BIN" run --help >/dev/null 2>&1 && [ "$HAVE_TORCH" = 1 ]; then
  cat >"$WORK/assert.py" <<'PYEOF'
import torch
# Labels out of range for a 10-class loss on the GPU: a real device-side assert.
logits = torch.randn(64, 10, device="cuda")
labels = torch.full((64,), 12, dtype=torch.long, device="cuda")
loss = torch.nn.functional.cross_entropy(logits, labels)
print(loss.item())
PYEOF
  cat >"$WORK/sleeper.py" <<'PYEOF'
import time, torch
x = torch.ones(1 << 28, device="cuda")  # 1 GiB on the GPU, so the run has a GPU to watch
print("sleeper: waiting to be killed", flush=True)
time.sleep(120)
PYEOF
  cat >"$WORK/hold3.py" <<'PYEOF'
import time, torch
# Hold a third of the GPU's memory until killed (the "other process" that run must name).
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total * 0.34), dtype=torch.uint8, device="cuda")
print(f"holder: holding {x.numel() / 2**30:.1f} GiB of {total / 2**30:.1f} GiB", flush=True)
time.sleep(120)
PYEOF
  "$PY" "$WORK/hold3.py" >"$WORK/hold3.log" 2>&1 &
  HOLD=$!
  sleep 8
  echo "holder (pid $HOLD): $(cat "$WORK/hold3.log")" >>"$E"
  step "run -- python3 oom.py (another process holds a third of the GPU)" "$E" 90 "$BIN" run --format json --report "$WORK/run-oom.json" -- "$PY" "$WORK/oom.py"
  { echo "--- run-oom.json (verdict)"; "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r[k] for k in r if k not in ("timeline", "snapshot", "output_tail")}, indent=1)[:6000])' "$WORK/run-oom.json" 2>&1; } >>"$E"
  kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
  step "run -- python3 assert.py (device-side assert)" "$E" 90 "$BIN" run --format json --report "$WORK/run-assert.json" -- "$PY" "$WORK/assert.py"
  { echo "--- run-assert.json (verdict)"; "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r[k] for k in r if k not in ("timeline", "snapshot", "output_tail")}, indent=1)[:4000])' "$WORK/run-assert.json" 2>&1; } >>"$E"
  # Only the job: gpudoctor's own command line names sleeper.py too (the first H200 run's kit
  # killed gpudoctor run itself with a plain pkill -f).
  ( sleep 10; pkill -KILL -f "^$PY $WORK/sleeper.py" ) &
  KILLER=$!
  step "run -- python3 sleeper.py (SIGKILL from outside at ~10 s)" "$E" 90 "$BIN" run --format json --report "$WORK/run-kill.json" -- "$PY" "$WORK/sleeper.py"
  wait "$KILLER" 2>/dev/null
  { echo "--- run-kill.json (verdict)"; "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r[k] for k in r if k not in ("timeline", "snapshot", "output_tail")}, indent=1)[:4000])' "$WORK/run-kill.json" 2>&1; } >>"$E"
  step "run -- python3 -c 'sys.exit(3)' (exit status passed through: 3 expected)" "$E" 60 "$BIN" run -- "$PY" -c 'import sys, torch; torch.zeros(1, device="cuda"); sys.exit(3)'
else
  echo "gpudoctor run: not in this build, or no torch" >>"$E"
fi

# ---------------------------------------------------------------- first-run list
P="$OUTDIR/probes.txt"
if [ "$HAVE_SMI" = 1 ]; then
  step "nvidia-smi (persistence, MIG, clocks)" "$P" 30 nvidia-smi
  step "nvidia-smi -q -d PERFORMANCE,ECC,PAGE_RETIREMENT,ROW_REMAPPER" "$P" 30 nvidia-smi -q -d PERFORMANCE,ECC,PAGE_RETIREMENT,ROW_REMAPPER
fi
step "libraries on the loader path (cuBLAS, cudart, cuDNN, libcuda)" "$P" 20 sh -c "ldconfig -p | grep -E 'libcublas|libcudart|libcudnn|libcuda\\.|libnvidia-ml' ; echo LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}"
if [ -n "$PY" ]; then
  step "pip-wheel CUDA libraries (nvidia/*/lib)" "$P" 30 "$PY" -c '
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("site-packages")])
for r in sorted(roots):
    for p in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib", "lib*.so*"))):
        if any(k in p for k in ("cublas", "cudart", "cudnn.so", "nvrtc")):
            print(p)'
fi
if [ "$HAVE_PYNVML" = 1 ]; then
  cat >"$WORK/nvml.py" <<'PYEOF'
import time, pynvml as n
n.nvmlInit()
print("driver", n.nvmlSystemGetDriverVersion(), "NVML", n.nvmlSystemGetNVMLVersion())
names = {getattr(n, k): k for k in dir(n) if k.startswith("nvmlEventType") and isinstance(getattr(n, k), int)}
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    try:
        sup = n.nvmlDeviceGetSupportedEventTypes(h)
        print(f"GPU {i}: supported event types 0x{sup:x}: " + ", ".join(v for k, v in sorted(names.items()) if k and sup & k == k and bin(k).count('1') == 1))
    except n.NVMLError as e:
        sup = 0; print(f"GPU {i}: nvmlDeviceGetSupportedEventTypes: {e}")
    for k, v in sorted(names.items()):
        if not k or bin(k).count("1") != 1:
            continue
        s = n.nvmlEventSetCreate()
        try:
            n.nvmlDeviceRegisterEvents(h, k, s); r = "registered"
        except n.NVMLError as e:
            r = f"refused: {e}"
        n.nvmlEventSetFree(s)
        print(f"  register {v}: {r}")
    # The time of each call a watcher or health probe makes, median of 5, in ms.
    calls = {
        "GetTemperature": lambda: n.nvmlDeviceGetTemperature(h, 0),
        "GetPowerUsage": lambda: n.nvmlDeviceGetPowerUsage(h),
        "GetClockInfo(SM)": lambda: n.nvmlDeviceGetClockInfo(h, 1),
        "GetCurrentClocksEventReasons": lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h),
        "GetUtilizationRates": lambda: n.nvmlDeviceGetUtilizationRates(h),
        "GetMemoryInfo": lambda: n.nvmlDeviceGetMemoryInfo(h),
        "GetTotalEccErrors(volatile,uncorr)": lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0),
        "GetRetiredPages(DBE)": lambda: n.nvmlDeviceGetRetiredPages(h, 1),
        "GetRemappedRows": lambda: n.nvmlDeviceGetRemappedRows(h),
        "GetPcieReplayCounter": lambda: n.nvmlDeviceGetPcieReplayCounter(h),
        "GetCurrPcieLinkGeneration": lambda: n.nvmlDeviceGetCurrPcieLinkGeneration(h),
        "GetCurrPcieLinkWidth": lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h),
        "GetComputeRunningProcesses": lambda: n.nvmlDeviceGetComputeRunningProcesses(h),
        "GetNvLinkState(0)": lambda: n.nvmlDeviceGetNvLinkState(h, 0),
        "GetNvLinkErrorCounter(0,replay)": lambda: n.nvmlDeviceGetNvLinkErrorCounter(h, 0, 0),
        "GetPersistenceMode": lambda: n.nvmlDeviceGetPersistenceMode(h),
        "GetMigMode": lambda: n.nvmlDeviceGetMigMode(h),
        "GetInforomConfigurationChecksum": lambda: n.nvmlDeviceGetInforomConfigurationChecksum(h),
    }
    for name, f in calls.items():
        ts, res = [], ""
        for _ in range(5):
            t = time.perf_counter()
            try:
                res = repr(f())[:80]
            except Exception as e:
                res = f"error: {e}"
            ts.append((time.perf_counter() - t) * 1000)
        ts.sort()
        print(f"  {name}: {ts[2]:.3f} ms  -> {res}")
n.nvmlShutdown()
PYEOF
  step "NVML: event types, registration one by one, call times (pynvml)" "$P" 90 "$PY" "$WORK/nvml.py"
fi

# Where check's time goes: every probe thread and NVML call, timed (GPUDOCTOR_TRACE).
step "GPUDOCTOR_TRACE=1 check --no-smoke --format line" "$P" 60 env GPUDOCTOR_TRACE=1 "$BIN" check --no-smoke --format line
step "GPUDOCTOR_TRACE=1 check --format line (with smoke tests)" "$P" 60 env GPUDOCTOR_TRACE=1 "$BIN" check --format line
# CUDA toolkits: what their version files say.
for t in /usr/local/cuda /usr/local/cuda-*; do
  [ -d "$t" ] || continue
  step "toolkit $t: version files" "$P" 10 sh -c "ls '$t' | head -30; head -c 800 '$t/version.json' 2>&1; cat '$t/version.txt' 2>/dev/null"
done
# cuBLAS with only the pip wheels: hide the toolkit directories in a private mount namespace.
if [ -z "$SIM" ] && command -v unshare >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  hide=""
  for t in /usr/local/cuda-*; do [ -d "$t" ] && hide="$hide $(readlink -f "$t")"; done
  if [ -n "$hide" ]; then
    step "check with the toolkits hidden (cuBLAS from pip wheels only):$hide" "$P" 90 unshare -m sh -c "for d in $hide; do mount -t tmpfs none \$d || exit 3; done; \"$BIN\" check --format json | $PY -c 'import json,sys; r=json.load(sys.stdin); s=r[\"snapshot\"][\"smoke\"]; v=s.get(\"value\") or {}; print(\"verdict\", r[\"verdict\"]); print(\"cublas\", json.dumps(v.get(\"cublas\"))); [print(g.get(\"ordinal\"), st[\"name\"], st[\"status\"], st.get(\"millis\"), (st.get(\"detail\") or \"\")[:100], json.dumps(st.get(\"error\"))[:200]) for g in v.get(\"gpus\", []) for st in g[\"steps\"]]; [print(\"finding\", f[\"severity\"], f[\"rule\"], f[\"title\"]) for f in r[\"findings\"]]'"
  fi
fi

# ---------------------------------------------------------------- an Xid from another process
X="$OUTDIR/stress.txt"
if [ "$HAVE_CUPY" = 1 ] && [ -z "$SIM" ]; then
  cat >"$WORK/xid.py" <<'PYEOF'
import time, cupy as cp
# A kernel that writes far outside any allocation: an illegal address, which the driver logs as
# an Xid (13 or 31) and which kills this context only.
k = cp.RawKernel(r'''
extern "C" __global__ void wild(float *p) { p[(size_t)1 << 40] = 1.0f; }
''', "wild")
a = cp.zeros(16, dtype=cp.float32)
time.sleep(float(__import__("sys").argv[1]) if len(__import__("sys").argv) > 1 else 0)
try:
    k((1,), (1,), (a,)); cp.cuda.runtime.deviceSynchronize()
    print("no error?")
except Exception as e:
    print("kernel failed as meant:", type(e).__name__, e)
PYEOF
  "$PY" "$WORK/xid.py" $((SIDE_S / 2)) >"$WORK/xid.log" 2>&1 &
  XP=$!
  step "stress --seconds $SIDE_S --tests compute, while another process provokes an Xid at ~$((SIDE_S / 2)) s" "$X" 90 "$BIN" stress --seconds "$([ "$QUICK" = 1 ] && echo 5 || echo "$SIDE_S")" --tests compute --format jsonl
  wait "$XP" 2>/dev/null
  echo "xid.py: $(cat "$WORK/xid.log")" >>"$X"
  step "kernel log after the Xid (NVRM lines)" "$P" 20 sh -c "dmesg 2>&1 | grep -E 'NVRM|Xid' | tail -20"
  step "check --only faults --verbose (the provoked Xid)" "$P" 60 "$BIN" check --only faults --verbose --color never --no-smoke
  step "check --format line (after the Xid)" "$P" 60 "$BIN" check --format line
else
  echo "not here: no cupy or simulated GPUs (no Xid provoked)" >>"$P"
fi

# ---------------------------------------------------------------- stress
# The clocks, power and temperature NVML reports, every 2 s, during the main run and gpu-burn's
# (the FP32 peak below is taken at the SM clock seen during the burn).
smi_watch() { # FILE: samples until killed
  [ "$HAVE_SMI" = 1 ] || return 0
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active --format=csv,noheader -lms 2000 >"$1" 2>&1 &
  echo $!
}
W1=$(smi_watch "$WORK/clocks-stress.csv")
step "stress --seconds $STRESS_S (main run, JSON report)" "$WORK/misc.log" $((STRESS_S + 120)) sh -c "\"$BIN\" stress --seconds $STRESS_S --json >\"$OUTDIR/stress.json\" 2>\"$WORK/stress.err\""
[ -n "$W1" ] && kill "$W1" 2>/dev/null
# gpu-burn, the peer, for the same seconds, built here with this machine's nvcc.
PEERS="$WORK/peers.md"
if [ -n "$GPUBURN" ] && [ -z "$SIM" ] && command -v nvcc >/dev/null 2>&1; then
  GB="$WORK/gpu-burn"
  cp -r "$GPUBURN" "$GB"
  NVCC=$(command -v nvcc)
  CUDAPATH=$(dirname "$(dirname "$NVCC")")
  # cuda.h, cublas_v2.h and unversioned libcublas/libcudart, wherever this machine keeps them
  # (a toolkit, or the pip wheels): gpu-burn's Makefile expects a classic toolkit tree.
  ROOTS="$CUDAPATH /usr/local/cuda /usr/local/cuda-* /usr/local/nvidia"
  [ -n "$PY" ] && ROOTS="$ROOTS $("$PY" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)"
  EXTRA_I="" ; LINKS="$WORK/gb-libs"; mkdir -p "$LINKS"
  for h in cuda.h cublas_v2.h cuda_runtime.h; do
    f=$(find $ROOTS -name "$h" -path '*include*' 2>/dev/null | head -1)
    [ -n "$f" ] && EXTRA_I="$EXTRA_I -I$(dirname "$f")"
  done
  for l in cublas cublasLt cudart; do
    f=$(find $ROOTS \( -name "lib$l.so" -o -name "lib$l.so.[0-9]*" \) 2>/dev/null | grep -v stubs | head -1)
    [ -n "$f" ] && ln -sf "$(readlink -f "$f")" "$LINKS/lib$l.so" && ln -sf "$(readlink -f "$f")" "$LINKS/$(basename "$f")"
  done
  EXTRA_L="-L$LINKS -Wl,-rpath=$LINKS"
  echo "gpu-burn build: CUDAPATH=$CUDAPATH includes:$EXTRA_I libs: $(ls "$LINKS" | paste -sd ' ')" >>"$X"
  step "gpu-burn: build (nvcc $("$NVCC" --version | tail -1), COMPUTE=90)" "$X" 180 sh -c "cd '$GB' && make COMPUTE=90 CUDAPATH='$CUDAPATH' CFLAGS='$EXTRA_I' LDFLAGS='$EXTRA_L' 2>&1 | tail -20"
  if [ -x "$GB/gpu_burn" ]; then
    W2=$(smi_watch "$WORK/clocks-burn.csv")
    step "gpu-burn $STRESS_S (float, cuBLAS SGEMM)" "$WORK/gpuburn.log" $((STRESS_S + 60)) sh -c "cd '$GB' && ./gpu_burn $STRESS_S"
    [ -n "$W2" ] && kill "$W2" 2>/dev/null
    { echo; echo "===== gpu-burn $STRESS_S: its last lines"; tr '\r' '\n' <"$WORK/gpuburn.log" | grep -v '^$' | tail -25; } >>"$X"
  else
    note "- gpu-burn did not build (stress.txt has the make output)"
  fi
else
  note "- gpu-burn: not run (no -g source, no nvcc, or simulated GPUs)"
fi
if command -v dcgmi >/dev/null 2>&1; then
  step "dcgmi diag -r 2" "$X" 240 dcgmi diag -r 2
else
  note "- dcgmi: not on this machine"
fi
{ echo; echo "===== clocks during the main stress run (nvidia-smi every 2 s)"; cat "$WORK/clocks-stress.csv" 2>/dev/null | tail -60
  echo; echo "===== clocks during gpu-burn"; cat "$WORK/clocks-burn.csv" 2>/dev/null | tail -60; } >>"$X"
# The machine's own ceilings: cudaMemcpy device-to-device through torch, the spec bandwidth, and
# the FP32 peak at the SM clock NVML reported during the burns; stress's and gpu-burn's rates
# beside them.
if [ -n "$PY" ]; then
  "$PY" - "$OUTDIR/stress.json" "$WORK/gpuburn.log" "$WORK/clocks-stress.csv" "$WORK/clocks-burn.csv" "$HAVE_TORCH" >"$PEERS" 2>&1 <<'PYEOF'
import json, re, statistics, sys
stress_json, burn_log, clk_stress, clk_burn, have_torch = sys.argv[1:6]
def sm_clock(path):
    vals = []
    try:
        for line in open(path, errors="replace"):
            f = [x.strip() for x in line.split(",")]
            if len(f) > 3:
                m = re.match(r"(\d+)", f[2])
                u = re.match(r"(\d+)", f[6]) if len(f) > 6 else None
                if m and (not u or int(u.group(1)) >= 50):
                    vals.append(int(m.group(1)))
    except OSError:
        pass
    return statistics.median(vals) if vals else None
sms, name, d2d = None, "?", None
if have_torch == "1":
    try:
        import torch
        p = torch.cuda.get_device_properties(0)
        sms, name = p.multi_processor_count, p.name
        n = 8 << 30
        a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
        for _ in range(3): b.copy_(a)
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(10): b.copy_(a)
        e1.record(); torch.cuda.synchronize()
        d2d = 2 * n * 10 / (e0.elapsed_time(e1) / 1000) / 1e9  # bytes read and written
        del a, b
    except Exception as e:
        print(f"torch measurement failed: {e}")
spec = {"H200": 4800, "H100 80GB HBM3": 3350, "H100 PCIe": 2000, "A100-SXM4-80GB": 2039, "A100-SXM4-40GB": 1555}
spec_bw = next((v for k, v in spec.items() if k in name), None)
try:
    s = json.load(open(stress_json))["snapshot"]["stress"]
    g = s["gpus"][0]
except Exception as e:
    print(f"stress.json unreadable: {e}"); g = {}
burn = None
try:
    txt = open(burn_log, errors="replace").read().replace("\r", "\n")
    rates = [float(x) for x in re.findall(r"\((\d+(?:\.\d+)?) Gflop/s\)", txt)]
    burn = statistics.median(rates[len(rates) // 2:]) if rates else None
    burn_err = re.findall(r"errors: *([0-9]+)", txt)[-1:] or ["?"]
except OSError:
    burn_err = ["?"]
cs, cb = sm_clock(clk_stress), sm_clock(clk_burn)
peak = lambda mhz: sms * 128 * 2 * mhz / 1000 if sms and mhz else None
r = lambda a, b: f"{a / b:.3f}" if a and b else "n/a"
print(f"GPU: {name}, {sms} SMs; spec memory bandwidth {spec_bw} GB/s (vendor datasheet)")
print(f"- cudaMemcpy device-to-device (torch copy_, 8 GiB, read+written): {d2d and round(d2d)} GB/s")
mem = g.get("memory_gbps")
print(f"- stress memory test: {mem} GB/s = {r(mem, d2d)} of cudaMemcpy D2D, {r(mem, spec_bw)} of the spec bandwidth; covered {r(g.get('tested_bytes'), g.get('free_bytes'))} of free memory")
print(f"- SM clock (median while busy): stress {cs} MHz, gpu-burn {cb} MHz; FP32 peak at those clocks: {peak(cs) and round(peak(cs))} / {peak(cb) and round(peak(cb))} GFLOP/s")
fma, sg = g.get("fma_gflops"), g.get("sgemm_gflops")
print(f"- stress FMA burn: {fma} GFLOP/s = {r(fma, peak(cs))} of the FP32 peak at its clock; stress SGEMM {sg} GFLOP/s")
print(f"- gpu-burn (cuBLAS SGEMM, float): {burn} GFLOP/s (median of the second half of its reports), errors {burn_err[0]}; = {r(burn, peak(cb))} of the FP32 peak at its clock")
print(f"- stress FMA / gpu-burn: {r(fma, burn)}; stress SGEMM / gpu-burn: {r(sg, burn)}")
others = {k: v for k, v in g.items() if k.endswith("_gflops") and k not in ("fma_gflops", "sgemm_gflops")}
if others:
    print(f"- stress's other GEMMs: {others} (dense bf16/fp16 peak by the datasheet: about 990 TFLOP/s on H100/H200 SXM)")
PYEOF
fi
{ echo; echo "===== main stress run: progress lines (stderr)"; tail -40 "$WORK/stress.err"; } >>"$X"
step "stress --seconds $INJECT_S --inject-faults 100" "$X" $((INJECT_S + 120)) "$BIN" stress --seconds "$INJECT_S" --inject-faults 100 --color never
# The most memory stress takes (0.97, the cap), under lazy and eager module loading: every
# kernel is loaded before the fill, so neither may run out of memory; 1.0 is refused (exit 2).
step "stress --memory-fraction 0.97 (CUDA_MODULE_LOADING=LAZY)" "$X" 120 env CUDA_MODULE_LOADING=LAZY "$BIN" stress --seconds "$SIDE_S" --memory-fraction 0.97 --tests memory,compute --format line
step "stress --memory-fraction 0.97 (CUDA_MODULE_LOADING=EAGER)" "$X" 120 env CUDA_MODULE_LOADING=EAGER "$BIN" stress --seconds "$SIDE_S" --memory-fraction 0.97 --tests memory,compute --format line
step "stress --memory-fraction 1.0 (refused: exit 2)" "$X" 20 "$BIN" stress --seconds 1 --memory-fraction 1.0
# --gpu 0 (on a one-GPU machine: the whole machine through the selection path).
step "stress --gpu 0" "$X" 120 "$BIN" stress --gpu 0 --seconds "$SIDE_S" --format line
if [ -n "$STANDIN" ] && [ -d "$WORK/standin" ]; then
  # The tests' stress runs through the stand-in (4 MiB, our PTX interpreted), beside the real.
  step "stand-in: stress --tests memory --seconds 3" "$X" 60 env LD_LIBRARY_PATH="$WORK/standin" STANDIN_MEM_MIB=4 STANDIN_SMS=1 "$BIN" stress --tests memory --seconds 3 --format line
  step "stand-in: stress --tests compute --seconds 1" "$X" 60 env LD_LIBRARY_PATH="$WORK/standin" STANDIN_MEM_MIB=4 STANDIN_SMS=1 STANDIN_THREADS=fma_burn:64 "$BIN" stress --tests compute --seconds 1 --format line
fi

# Stress figures: memory/copy, coverage, FMA/SGEMM, fp16/bf16, found == injected.
if [ -n "$PY" ] && [ -s "$OUTDIR/stress.json" ]; then
  "$PY" - "$OUTDIR/stress.json" "$X" >>"$WORK/stressfig.md" 2>&1 <<'PYEOF'
import json, re, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"stress.json unreadable: {e}"); sys.exit(0)
s = (r.get("snapshot") or {}).get("stress") or {}
if s.get("error"):
    print("stress could not run:", s["error"]); sys.exit(0)
print(f"stress {s.get('seconds', 0):.0f} s ({s.get('planned_seconds', 0):.0f} asked), verdict {r.get('verdict')}")
for f in r.get("findings", []):
    print(f"- finding {f.get('severity')} {f.get('rule')}: {f.get('title')}")
print("\n| GPU | memory GB/s | copy GB/s | memory/copy | covered/free | rounds | FMA GFLOP/s | SGEMM GFLOP/s | FMA/SGEMM | other GEMMs | errors (mem, compute, gemm) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
ratio = lambda a, b: f"{a / b:.3f}" if a and b else "n/a"
for g in s.get("gpus", []):
    mem, copy, fma, gemm = g.get("memory_gbps"), g.get("copy_gbps"), g.get("fma_gflops"), g.get("sgemm_gflops")
    cov = g.get("tested_bytes", 0) / g["free_bytes"] if g.get("free_bytes") else 0
    other = {k: v for k, v in g.items() if k.endswith("_gflops") and k not in ("fma_gflops", "sgemm_gflops")}
    rounds = g.get("memory_rounds", g.get("rounds"))
    print(f"| {g.get('index', g.get('ordinal'))} {g.get('name', '?')} | {mem} | {copy} | {ratio(mem, copy)} | {cov:.3f} | {rounds} | {fma} | {gemm} | {ratio(fma, gemm)} | {other} | {g.get('memory_errors')}, {g.get('compute_errors')}, {g.get('gemm_errors', 0)} |")
txt = open(sys.argv[2], errors="replace").read()
m = txt.split("--inject-faults 100", 1)
if len(m) > 1:
    seg = m[1][:20000]
    found = re.findall(r"(\d+) (?:memory )?errors?", seg)
    print(f"\ninject-faults run: numbers of errors mentioned: {found[:10]} (100 flips injected; read stress.txt)")
PYEOF
fi

# ---------------------------------------------------------------- summary and redaction
{ echo; echo "===== steps whose output went to a file (their stderr)"; cat "$WORK/misc.log"; } >>"$C"
{
  echo
  echo "## Steps"
  echo
  echo "| step | exit | seconds |"
  echo "|---|---|---|"
  cat "$STEPS"
  for part in smoke.md stressfig.md peers.md bench.md; do
    if [ -s "$WORK/$part" ]; then
      case "$part" in
        smoke.md) echo; echo "## check and the smoke tests" ;;
        stressfig.md) echo; echo "## stress figures" ;;
        peers.md) echo; echo "## beside the machine's ceilings and gpu-burn" ;;
        bench.md) echo; echo "## check beside its peers" ;;
      esac
      echo
      cat "$WORK/$part"
    fi
  done
  if [ -s "$WORK/notes" ]; then echo; echo "## Notes"; echo; cat "$WORK/notes"; fi
} >>"$S"

HOST=$(hostname 2>/dev/null || echo "")
for f in "$OUTDIR"/*; do
  [ -f "$f" ] || continue
  sed -E -i \
    -e 's/GPU-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/GPU-REDACTED/g' \
    -e 's/MIG-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/MIG-REDACTED/g' \
    -e 's/(Serial Number[[:space:]]*:[[:space:]]*)[^[:space:]]+/\1REDACTED/g' \
    -e 's/("serial(_number)?"[[:space:]]*:[[:space:]]*")[^"]*"/\1REDACTED"/g' \
    -e 's/(Board Part Number[[:space:]]*:[[:space:]]*)[^[:space:]]+/\1REDACTED/g' \
    -e 's/(GPU UUID[[:space:]]*:[[:space:]]*)[^[:space:]]+/\1REDACTED/g' \
    "$f"
  if [ -n "$HOST" ] && [ "${#HOST}" -gt 3 ]; then
    sed -i "s/$(printf '%s' "$HOST" | sed 's/[.[\*^$/]/\\&/g')/HOSTNAME/g" "$f"
  fi
done
echo "validate-gpu.sh: wrote $(ls "$OUTDIR" | wc -l) files to $OUTDIR"
ls -la "$OUTDIR"
