#!/usr/bin/env bash
# Benchmark: `gpudoctor explain --log FILE` on a generated multi-GB training + kernel log, beside
# `grep -c` on the same file (the peer named in the explain issue and design.md).
#
#   scripts/bench-explain.sh [GIB] [RUNS]      # default: 2 GiB, 5 runs each
#
# The log is built from a block of ordinary training lines with a few real error lines mixed in
# (an Xid, a CUDA error, an OOM, a cuDNN mismatch), repeated to the size asked; every command
# writes its output to a file. The file is read
# once before timing so that every command reads it from the page cache. Prints the median, min
# and max wall time of each command and the ratio of their throughputs; asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
GIB=${1:-2}
RUNS=${2:-5}
BIN=${GPUDOCTOR_BIN:-target/release/gpudoctor}
[ -x "$BIN" ] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/train.log"

python3 - "$log" "$GIB" <<'PYEOF'
import sys
path, gib = sys.argv[1], float(sys.argv[2])
lines = []
for i in range(20000):
    lines.append(f"2026-11-21 10:{i % 60:02d}:{i % 60:02d} INFO train.py:212 epoch 3 step {i} "
                 f"loss {0.5 + (i % 97) / 1000:.4f} lr 3.0e-04 grad_norm {1 + (i % 13) / 10:.2f} "
                 f"tokens/s {41000 + i % 777}\n")
    if i % 5000 == 17:
        lines.append("[ 9123.447] NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n")
    if i % 5000 == 2500:
        lines.append("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    if i % 10000 == 4000:
        lines.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.12 GiB is free.\n")
    if i % 20000 == 9000:
        lines.append("Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0.\n")
block = "".join(lines).encode()
target = int(gib * (1 << 30))
with open(path, "wb") as f:
    written = 0
    while written < target:
        f.write(block)
        written += len(block)
PYEOF

size=$(stat -c %s "$log")
cat "$log" >/dev/null   # into the page cache

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f %.3f %.3f\n", m, a[1], a[NR]}'; }
time_runs() { # name, command...
  local name=$1; shift
  local t=()
  for _ in $(seq "$RUNS"); do
    local s e
    # Output to a file, not /dev/null: GNU grep stops at the first match when its output is
    # /dev/null, which would time nothing.
    s=$(date +%s.%N); "$@" >"$work/out"; e=$(date +%s.%N)
    t+=("$(awk -v a="$s" -v b="$e" 'BEGIN{print b-a}')")
  done
  printf '%s\n' "${t[@]}" | median | { read -r m lo hi; echo "$name $m $lo $hi"; }
}

echo "log: $size bytes ($(wc -l <"$log") lines), $RUNS runs each, $(nproc) CPUs"
r1=$(time_runs gpudoctor "$BIN" explain --json --log "$log")
r0=$(time_runs gpudoctor-1t env GPUDOCTOR_SCAN_THREADS=1 "$BIN" explain --json --log "$log")
r2=$(time_runs grep-c-F env LC_ALL=C grep -c -F 'Xid' "$log")
r3=$(time_runs grep-c-E env LC_ALL=C grep -c -E 'Xid|CUDA error|out of memory|CuDNN library' "$log")
r4=$(time_runs grep-c-iF env LC_ALL=C grep -c -i -F 'Xid' "$log")
# The same work as gpudoctor's: every pattern of the explain catalog, case-insensitively.
python3 - explain-catalog/*.yaml >"$work/patterns" <<'PYEOF'
import sys, re
for f in sys.argv[1:]:
    inside = False
    for line in open(f, encoding="utf-8"):
        if re.match(r"^  patterns:", line):
            inside = True
            continue
        if inside and re.match(r"^  - ", line):
            p = line[4:].strip()
            if p[:1] in "'\"":
                p = p[1:-1].replace("''", "'")
            print(" ".join(p.split()))
            continue
        if inside and not line.startswith("  - "):
            inside = False
PYEOF
r5=$(time_runs grep-c-iFf env LC_ALL=C grep -c -i -F -f "$work/patterns" "$log")
printf '| command | median s | min | max | GB/s (median) |\n|---|---|---|---|---|\n'
for r in "$r1" "$r0" "$r2" "$r3" "$r4" "$r5"; do
  read -r name m lo hi <<<"$r"
  case $name in
    gpudoctor) cmd="\`gpudoctor explain --json --log FILE\` ($(nproc) threads)" ;;
    gpudoctor-1t) cmd='`GPUDOCTOR_SCAN_THREADS=1 gpudoctor explain --json --log FILE`' ;;
    grep-c-F) cmd="\`LC_ALL=C grep -c -F 'Xid' FILE\`" ;;
    grep-c-E) cmd="\`LC_ALL=C grep -c -E 'Xid|CUDA error|out of memory|CuDNN library' FILE\`" ;;
    grep-c-iF) cmd="\`LC_ALL=C grep -c -i -F 'Xid' FILE\`" ;;
    grep-c-iFf) cmd="\`LC_ALL=C grep -c -i -F -f PATTERNS FILE\` ($(wc -l <"$work/patterns") catalog patterns)" ;;
  esac
  printf '| %s | %s | %s | %s | %.2f |\n' "$cmd" "$m" "$lo" "$hi" "$(awk -v s="$size" -v m="$m" 'BEGIN{print s/m/1e9}')"
done
g=$(awk '{print $2}' <<<"$r1"); f=$(awk '{print $2}' <<<"$r2"); e=$(awk '{print $2}' <<<"$r3"); i=$(awk '{print $2}' <<<"$r4"); p=$(awk '{print $2}' <<<"$r5")
printf 'gpudoctor speed as a fraction of grep -c -F: %.2f; of grep -c -i -F: %.2f; of grep -c -E (4 patterns): %.2f; of grep -c -i -F -f (the catalog patterns): %.2f\n' \
  "$(awk -v a="$f" -v b="$g" 'BEGIN{print a/b}')" "$(awk -v a="$i" -v b="$g" 'BEGIN{print a/b}')" "$(awk -v a="$e" -v b="$g" 'BEGIN{print a/b}')" "$(awk -v a="$p" -v b="$g" 'BEGIN{print a/b}')"
# What gpudoctor found, to show the scan is real work (counts of each distinct match).
"$BIN" explain --json --log "$log" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("matches:", [(m["name"], m.get("count")) for m in d["matches"]])'
