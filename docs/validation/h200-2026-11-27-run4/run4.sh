#!/usr/bin/env bash
# Fourth call of 2026-11-27 on the H200: the NVML helper's calls traced group by group, and the
# health calls on a thread beside the identity calls (gpudoctor-par) against one after the other
# (gpudoctor), with e8fee97 and nvidia-smi -q, timed with a blocking wait on the same machine.
set -uo pipefail
D=.device-bin; O=${OUT:-/tmp/out}; mkdir -p "$O"
{
for b in gpudoctor gpudoctor-par; do
  echo "== $b: traces, 2 runs"
  for i in 1 2; do GPUDOCTOR_TRACE=1 timeout 30 $D/$b check --no-smoke --format line 2>&1 | grep -E 'nvml|helper|probes done|output written|kernel-log done|install'; echo; done
done
echo "== the GPU as each reports it (volatile readings left out): identical?"
for b in gpudoctor gpudoctor-par; do
  timeout 30 $D/$b snapshot | python3 -c '
import json, sys
s = json.load(sys.stdin); g = s["gpus"]["value"][0]
for k in ("temperature_c", "power_w", "clocks", "memory", "processes"): g.pop(k, None)
h = (g.get("health") or {}).get("value") or {}
for k in ("clocks_event_reasons", "utilization", "performance_state", "throttle"): h.pop(k, None)
print(json.dumps(g, sort_keys=True))' > "/tmp/$b.gpu.json"
done
cmp /tmp/gpudoctor.gpu.json /tmp/gpudoctor-par.gpu.json && echo "identical" || diff <(tr ',' '\n' </tmp/gpudoctor.gpu.json) <(tr ',' '\n' </tmp/gpudoctor-par.gpu.json) | head -20
head -c 3000 /tmp/gpudoctor-par.gpu.json; echo
echo "== paired timing, blocking wait"
timeout 240 python3 - <<'PY'
import os, shutil, statistics, time
D = ".device-bin"
rows = [("check --no-smoke (this change, health beside identity)", [f"{D}/gpudoctor-par", "check", "--no-smoke", "--format", "json"]),
        ("check --no-smoke (this change, one after the other)", [f"{D}/gpudoctor", "check", "--no-smoke", "--format", "json"]),
        ("check --no-smoke (e8fee97)", [f"{D}/gpudoctor-e8fee97", "check", "--no-smoke", "--format", "json"]),
        ("nvidia-smi -q", [shutil.which("nvidia-smi") or "/usr/bin/nvidia-smi", "-q"])]
null = os.open(os.devnull, os.O_WRONLY)
def once(cmd):
    t = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    os.waitpid(pid, 0)
    return (time.perf_counter() - t) * 1000
for _, c in rows: once(c)
ts = {n: [] for n, _ in rows}
for _ in range(15):
    for n, c in rows: ts[n].append(once(c))
print("15 rounds of the four in turn, after one warm-up each; wall ms, os.posix_spawn + blocking waitpid\n")
print("| command | median | min | max |\n|---|---|---|---|")
for n, _ in rows:
    print(f"| `{n}` | {statistics.median(ts[n]):.1f} | {min(ts[n]):.1f} | {max(ts[n]):.1f} |")
smi = statistics.median(ts["nvidia-smi -q"])
for n, _ in rows[:3]:
    print(f"- {n} / nvidia-smi -q: {statistics.median(ts[n]) / smi:.3f} (target at most 0.333)")
PY
} > "$O/check-speed-3.txt" 2>&1
h=$(hostname); [ ${#h} -gt 3 ] && sed -i "s/$h/HOSTNAME/g" "$O"/*.txt
sed -i -E 's/GPU-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/GPU-REDACTED/g; s/"serial": "[^"]*"/"serial": "REDACTED"/g' "$O"/*.txt
tail -c 11000 "$O/check-speed-3.txt"
