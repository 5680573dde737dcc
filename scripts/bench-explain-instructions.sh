#!/usr/bin/env bash
# Benchmark that a loaded machine does not disturb: the instructions (valgrind's callgrind, all
# threads) that `gpudoctor explain --log FILE` and `gpudoctor explain` reading the file through a
# pipe execute, beside those of `LC_ALL=C grep -c -F KEY FILE` on the same log (the peer named in
# design.md), on the logs of scripts/bench-explain-gen.py.
#
#   scripts/bench-explain-instructions.sh [MB] [SHAPE...]   # default: 30 MB, every shape
#
# Ratio = grep's instructions / explain's (>= 1.0: explain executes no more than grep). An
# instruction is not a cycle (a vectorised one does more), so scripts/bench-explain.sh's wall
# times stay the verdict on a quiet machine; this is the figure to compare builds with while the
# machine is shared. valgrind runs the AVX2 code paths (it has no AVX-512), for grep's libc too.
# Checks that explain found the error (its key phrase in the output).
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-30}
shift $(( $# >= 1 ? 1 : 0 ))
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(pytorch nccl tqdm vllm hf journal plain)
BIN=${GPUDOCTOR_BIN:-target/release/gpudoctor}
[ -x "$BIN" ] || cargo build --release --quiet
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

icount() { # command... : instructions executed, all threads
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$@" >"$work/out" 2>"$work/err" || true
  grep -o 'Collected : [0-9]*' "$work/err" | awk '{print $3}'
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg), $("$BIN" --version 2>/dev/null | head -1)"
printf '| log | MB | grep -c -F instructions | --log instructions | ratio --log | pipe instructions | ratio pipe |\n'
printf '|---|---|---|---|---|---|---|\n'
for shape in "${SHAPES[@]}"; do
  log="$work/$shape.log"
  key=$(python3 scripts/bench-explain-gen.py "$shape" "$log" "$MB")
  size=$(stat -c %s "$log")
  g=$(LC_ALL=C icount grep -c -F "$key" "$log")
  l=$(icount "$BIN" explain --json --log "$log")
  grep -q -i -F "$key" "$work/out" || echo "WARNING: $shape: explain --log did not report the error ($key)" >&2
  # Through a pipe: the explain process alone is counted (cat is not).
  p=$( { cat "$log" | valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$BIN" explain --json >"$work/out" 2>"$work/err"; } || true; grep -o 'Collected : [0-9]*' "$work/err" | awk '{print $3}')
  grep -q -i -F "$key" "$work/out" || echo "WARNING: $shape: explain (pipe) did not report the error ($key)" >&2
  printf '| %s | %.0f | %s | %s | **%s** | %s | **%s** |\n' "$shape" "$(awk -v s="$size" 'BEGIN{print s/1048576}')" \
    "$g" "$l" "$(awk -v a="$g" -v b="$l" 'BEGIN{printf "%.3f", a/b}')" \
    "$p" "$(awk -v a="$g" -v b="$p" 'BEGIN{printf "%.3f", a/b}')"
  rm -f "$log"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
