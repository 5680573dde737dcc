#!/usr/bin/env bash
# Benchmark: `gpudoctor run -- COMMAND` against the bare COMMAND, on commands that print 1 GiB,
# with the output going to a file (as a job's log does); and the sampler's own CPU time on an
# idle command (what `run` costs a long training job).
#
#   scripts/bench-run.sh [RUNS] [GIB]      # default: 3 runs each, 1 GiB; CMDS="cat" for one command
#
# Commands: `cat` of a 1 GiB file in the page cache (the fastest writer there is: the worst
# case for a relay), and a Python loop printing training-log lines (an ordinary chatty job);
# each with its output to a file (a batch job's log: gpudoctor hands the file to the command and
# reads the tail back at the end) and through a pipe (`| cat > file`, as under srun or a
# container runtime: gpudoctor passes every byte on with splice(2), keeping the tail in capture
# pipes; the copying relay, GPUDOCTOR_RUN_COPY=1, as through a terminal, is timed beside it).
# Prints the median, min and max wall time of each and the ratio run / bare; then the sampler's
# CPU seconds per wall second over `sleep` (read from the run's own JSON report, where the
# sampler measures its thread's CPU time) and gpudoctor's whole CPU time (getrusage of the
# process, all threads). Asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
GIB=${2:-1}
BIN=${GPUDOCTOR_BIN:-target/release/gpudoctor}
[ -x "$BIN" ] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes=$((GIB << 30))
head -c "$bytes" /dev/urandom >"$work/data"
cat "$work/data" >/dev/null
cat >"$work/chatty.py" <<PYEOF
import sys
w = sys.stdout.write
n, i = 0, 0
while n < $bytes:
    line = f"2026-11-23 07:{i % 60:02d}:{i % 60:02d} INFO train.py:212 epoch 3 step {i} loss {0.5 + (i % 97) / 1000:.4f} lr 3.0e-04 tokens/s {41000 + i % 777}\n"
    w(line)
    n += len(line)
    i += 1
PYEOF

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f %.3f %.3f\n", m, a[1], a[NR]}'; }
once() { # sink, command...: wall seconds of one run, output to a file directly or through a pipe
  local sink=$1; shift
  local s e
  rm -f "$work/out"
  s=$(date +%s.%N)
  if [ "$sink" = file ]; then "$@" >"$work/out" 2>"$work/err"; else "$@" 2>"$work/err" | cat >"$work/out"; fi
  e=$(date +%s.%N)
  awk -v a="$s" -v b="$e" 'BEGIN{print b-a}'
}

echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); files on $(df --output=fstype "$work" | tail -1)"
for name in ${CMDS:-cat python}; do
  case $name in
    cat) cmd=(cat "$work/data") ;;
    python) cmd=(python3 "$work/chatty.py") ;;
  esac
  for sink in file pipe; do
    # Alternate bare and run so that drift hits both.
    bare=(); wrapped=(); copied=()
    for _ in $(seq "$RUNS"); do
      bare+=("$(once $sink "${cmd[@]}")")
      wrapped+=("$(once $sink "$BIN" run --quiet -- "${cmd[@]}")")
      if [ $sink = pipe ]; then copied+=("$(once $sink env GPUDOCTOR_RUN_COPY=1 "$BIN" run --quiet -- "${cmd[@]}")"); fi
    done
    b=$(printf '%s\n' "${bare[@]}" | median)
    r=$(printf '%s\n' "${wrapped[@]}" | median)
    awk -v b="$b" -v r="$r" -v n="$name" -v s="$sink" 'BEGIN{split(b,x," "); split(r,y," "); printf "%-6s to a %-4s  bare %s s (min %s, max %s)  run %s s (min %s, max %s)  run / bare = %.3f\n", n, s, x[1], x[2], x[3], y[1], y[2], y[3], y[1]/x[1]}'
    if [ $sink = pipe ]; then
      c=$(printf '%s\n' "${copied[@]}" | median)
      awk -v b="$b" -v r="$c" -v n="$name" 'BEGIN{split(b,x," "); split(r,y," "); printf "%-6s to a pipe  copying relay (GPUDOCTOR_RUN_COPY=1) %s s (min %s, max %s)  / bare = %.3f\n", n, y[1], y[2], y[3], y[1]/x[1]}'
    fi
  done
done

# The sampler's cost on an idle command (no GPU here unless the machine has one; with
# SIM=N, N simulated GPUs are sampled too).
secs=${IDLE_SECS:-30}
env ${SIM:+GPUDOCTOR_SIM_GPUS=$SIM} "$BIN" run --format json --report "$work/idle.json" -- sleep "$secs" 2>/dev/null
python3 - "$work/idle.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["timeline"]
print(f"idle {r['duration_s']:.1f} s: {t['samples']} samples, sampler CPU {t['sampler_cpu_s']*1000:.1f} ms "
      f"= {100 * t['sampler_cpu_s'] / r['duration_s']:.3f} % of one core; GPUs sampled: {len(t['gpus'])}")
PYEOF
/usr/bin/time -f "idle $secs s: gpudoctor run used %U s user + %S s system (all threads), max RSS %M KiB" \
  "$BIN" run --quiet -- sleep "$secs"
