#!/usr/bin/env bash
# Benchmark: `gpudoctor explain` on logs shaped like real ones, beside `grep -c -F` on the same
# file (the peer named in design.md and issue 30).
#
#   scripts/bench-explain.sh [MB] [RUNS] [SHAPE...]   # default: 200 MB, 5 runs, every shape
#
# Shapes (scripts/bench-explain-gen.py says where each line shape comes from): pytorch (cuda:0
# on every line), nccl (NCCL_DEBUG=INFO), tqdm (progress redrawn with \r: lines of up to most of
# the file), vllm (server log), hf (Hugging Face Trainer), journal (journalctl -k with many
# NVRM lines), plain (the earlier benchmark: training lines that never say cuda or GPU). Each
# has a real error near its end; grep counts the error's key phrase.
#
# For each log, generated into a temporary folder, read once so that every command reads it from
# the page cache, and deleted after: RUNS paired runs of
#   LC_ALL=C grep -c -F KEY FILE
#   gpudoctor explain --json --log FILE
#   gpudoctor explain --json < FILE          (standard input, a regular file)
#   cat FILE | gpudoctor explain --json      (standard input, a pipe)
#   cat FILE | LC_ALL=C grep -c -F KEY       (grep through the same pipe: the peer of the pipe)
# each with its output to a file (GNU grep stops at the first match when its output is
# /dev/null). Per pair, the ratio grep time / explain time (>= 1.0: explain at least as fast;
# through a pipe, against grep through the same pipe, since cat's copy is in both);
# the table gives the median ratio and the median times, and the peak RSS of each explain
# command from /usr/bin/time -v (one more run). Checks that explain found the error (its key
# phrase in the output); asserts nothing about speed.
# On a loaded machine, scripts/bench-explain-instructions.sh counts instructions instead.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-200}
RUNS=${2:-5}
shift $(( $# >= 2 ? 2 : $# ))
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(pytorch nccl tqdm vllm hf journal plain)
BIN=${GPUDOCTOR_BIN:-target/release/gpudoctor}
[ -x "$BIN" ] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f\n", m}'; }
rss_kib() { # command... : peak RSS in KiB
  /usr/bin/time -v "$@" 2>"$work/time" >"$work/out" || true
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time"
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg), $("$BIN" --version 2>/dev/null | head -1)"
printf '| log | MB | lines | grep -c -F s | --log s | ratio --log | < file s | ratio < file | cat \\| grep s | pipe s | ratio pipe | RSS --log / < / pipe MiB |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for shape in "${SHAPES[@]}"; do
  log="$work/$shape.log"
  key=$(python3 scripts/bench-explain-gen.py "$shape" "$log" "$MB")
  size=$(stat -c %s "$log")
  lines=$(wc -l <"$log")
  cat "$log" >/dev/null # into the page cache
  tg=(); tl=(); ts=(); tp=(); tc=(); rl=(); rs=(); rp=()
  for _ in $(seq "$RUNS"); do
    s=$(now); LC_ALL=C grep -c -F "$key" "$log" >"$work/out" || true; e=$(now)
    g=$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')
    s=$(now); "$BIN" explain --json --log "$log" >"$work/out.log"; e=$(now)
    l=$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')
    s=$(now); "$BIN" explain --json <"$log" >"$work/out.stdin"; e=$(now)
    i=$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')
    s=$(now); cat "$log" | "$BIN" explain --json >"$work/out.pipe"; e=$(now)
    p=$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')
    s=$(now); cat "$log" | LC_ALL=C grep -c -F "$key" >"$work/out" || true; e=$(now)
    c=$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')
    tg+=("$g"); tl+=("$l"); ts+=("$i"); tp+=("$p"); tc+=("$c")
    rl+=("$(awk -v a="$g" -v b="$l" 'BEGIN{print a/b}')")
    rs+=("$(awk -v a="$g" -v b="$i" 'BEGIN{print a/b}')")
    rp+=("$(awk -v a="$c" -v b="$p" 'BEGIN{print a/b}')")
  done
  for o in out.log out.stdin out.pipe; do
    grep -q -i -F "$key" "$work/$o" || echo "WARNING: $shape: explain ($o) did not report the error ($key)" >&2
  done
  m1=$(rss_kib "$BIN" explain --json --log "$log")
  m2=$(rss_kib sh -c "\"$BIN\" explain --json <\"$log\"")
  m3=$(rss_kib sh -c "cat \"$log\" | \"$BIN\" explain --json")
  med() { printf '%s\n' "$@" | median; }
  printf '| %s | %.0f | %s | %s | %s | **%s** | %s | **%s** | %s | %s | **%s** | %.0f / %.0f / %.0f |\n' \
    "$shape" "$(awk -v s="$size" 'BEGIN{print s/1048576}')" "$lines" \
    "$(med "${tg[@]}")" "$(med "${tl[@]}")" "$(med "${rl[@]}")" "$(med "${ts[@]}")" "$(med "${rs[@]}")" \
    "$(med "${tc[@]}")" "$(med "${tp[@]}")" "$(med "${rp[@]}")" "$((m1 / 1024))" "$((m2 / 1024))" "$((m3 / 1024))"
  rm -f "$log"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
