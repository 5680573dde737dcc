#!/usr/bin/env bash
# Third call of 2026-11-27 on the H200: check --no-smoke against nvidia-smi -q timed with a
# blocking wait (the earlier harness passed a timeout to subprocess.run, whose wait then polls
# with sleeps of up to 50 ms: every time it gave was 14 + 50k ms), with the binary of e8fee97
# beside this change (dpkg's lists read, the matrix parsed beside the probes, the driver's
# message table embedded as JSON), on the same machine.
set -uo pipefail
D=.device-bin; O=${OUT:-/tmp/out}; mkdir -p "$O"
NEW=$D/gpudoctor; OLD=$D/gpudoctor-e8fee97
{
echo "== traces (this change), 3 runs"
for i in 1 2 3; do GPUDOCTOR_TRACE=1 timeout 30 $NEW check --no-smoke --format line 2>&1 | grep -v 'helper "__probe-nvml": \[+[0-9.]* ms\] GPU 0: nvmlDevice[G]'; echo; done
echo "== paired timing, blocking wait"
timeout 240 python3 - "$NEW" "$OLD" <<'PY'
import os, statistics, sys, time
new, old = sys.argv[1], sys.argv[2]
rows = [("gpudoctor check --no-smoke --format json (this change)", [new, "check", "--no-smoke", "--format", "json"]),
        ("gpudoctor check --no-smoke --format json (e8fee97)", [old, "check", "--no-smoke", "--format", "json"]),
        ("nvidia-smi -q", [__import__("shutil").which("nvidia-smi") or "/usr/bin/nvidia-smi", "-q"]),
        ("gpudoctor check --format json (this change, with smoke tests)", [new, "check", "--format", "json"])]
null = os.open(os.devnull, os.O_WRONLY)
fa = os.posix_spawn_file_actions if hasattr(os, "posix_spawn_file_actions") else None
def once(cmd):
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    os.waitpid(pid, 0)
    return (time.perf_counter() - t) * 1000
for _, c in rows: once(c)
ts = {n: [] for n, _ in rows}
for _ in range(11):
    for n, c in rows[:3]: ts[n].append(once(c))
for _ in range(5): ts[rows[3][0]].append(once(rows[3][1]))
print("11 rounds of the first three in turn (5 of the last), after one warm-up each; wall ms, os.posix_spawn + blocking waitpid\n")
print("| command | runs | median | min | max |\n|---|---|---|---|---|")
for n, _ in rows:
    print(f"| `{n}` | {len(ts[n])} | {statistics.median(ts[n]):.1f} | {min(ts[n]):.1f} | {max(ts[n]):.1f} |")
smi = statistics.median(ts["nvidia-smi -q"])
for n, _ in rows[:2]:
    print(f"- {n} / nvidia-smi -q: {statistics.median(ts[n]) / smi:.3f} (target at most 0.333)")
PY
} > "$O/check-speed-2.txt" 2>&1
h=$(hostname); [ ${#h} -gt 3 ] && sed -i "s/$h/HOSTNAME/g" "$O"/*.txt
sed -i -E 's/GPU-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/GPU-REDACTED/g' "$O"/*.txt
tail -c 9000 "$O/check-speed-2.txt"
