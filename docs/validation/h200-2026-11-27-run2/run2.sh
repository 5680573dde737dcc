#!/usr/bin/env bash
# Second call of 2026-11-27 on the H200: where check --no-smoke's time goes after the dpkg-list
# owner lookup, the matrix parsed beside the probes, and the helper's trace forwarded; the same
# paired timing with the binary of the first call (e8fee97) on the same machine; kmsg read
# record by record against klogctl(READ_ALL); and `run` with a SIGKILL sent to the job alone.
set -uo pipefail
export PYTHONUNBUFFERED=1
D=.device-bin; O=${OUT:-/tmp/out}; mkdir -p "$O"
NEW=$D/gpudoctor; OLD=$D/gpudoctor-e8fee97
{
echo "== traces (new binary), 3 runs"
for i in 1 2 3; do GPUDOCTOR_TRACE=1 timeout 30 $NEW check --no-smoke --format line 2>&1; echo; done
echo "== trace of the e8fee97 binary, 1 run"
GPUDOCTOR_TRACE=1 timeout 30 $OLD check --no-smoke --format line 2>&1
echo "== dpkg -S timing (what the old install probe ran)"
python3 -c '
import subprocess, time
for p in ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/bin/dpkg"]:
    for _ in range(3):
        t = time.perf_counter(); r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        print(f"dpkg -S {p}: {(time.perf_counter() - t) * 1000:.1f} ms, exit {r.returncode}: {(r.stdout or r.stderr).strip()[:100]}")
' 
ls /var/lib/dpkg/info/*.list | wc -l
echo "== kmsg records vs klogctl READ_ALL (ctypes)"
timeout 60 python3 - <<'PY'
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
for rep in range(3):
    t = time.perf_counter(); n = 0
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    while True:
        try:
            b = os.read(fd, 16384)
        except BlockingIOError:
            break
        except BrokenPipeError:
            continue
        if not b: break
        n += 1
    os.close(fd)
    t1 = time.perf_counter()
    size = libc.klogctl(10, None, 0)
    buf = ctypes.create_string_buffer(max(size, 1))
    got = libc.klogctl(3, buf, size)
    t2 = time.perf_counter()
    lines = buf.raw[:max(got, 0)].count(b"\n")
    print(f"kmsg: {n} records in {(t1-t)*1000:.2f} ms; klogctl READ_ALL: {got} bytes of {size} in {(t2-t1)*1000:.2f} ms, lines {lines}")
PY
} > "$O/check-speed.txt" 2>&1
echo "== paired timing" >> "$O/check-speed.txt"
timeout 200 python3 - "$NEW" "$OLD" >> "$O/check-speed.txt" 2>&1 <<'PY'
import statistics, subprocess, sys, time
new, old = sys.argv[1], sys.argv[2]
rows = [("check --no-smoke (this change)", [new, "check", "--no-smoke", "--format", "json"]),
        ("check --no-smoke (e8fee97)", [old, "check", "--no-smoke", "--format", "json"]),
        ("nvidia-smi -q", ["nvidia-smi", "-q"])]
def once(cmd):
    t = time.perf_counter(); subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return (time.perf_counter() - t) * 1000
for _, c in rows: once(c)
ts = {n: [] for n, _ in rows}
for _ in range(11):
    for n, c in rows: ts[n].append(once(c))
print("11 rounds of the three in turn, after one warm-up each; ms\n\n| command | median | min | max |\n|---|---|---|---|")
for n, _ in rows:
    print(f"| {n} | {statistics.median(ts[n]):.1f} | {min(ts[n]):.1f} | {max(ts[n]):.1f} |")
smi = statistics.median(ts["nvidia-smi -q"])
for n, _ in rows[:2]:
    print(f"- {n} / nvidia-smi -q: {statistics.median(ts[n]) / smi:.3f} (target at most 0.333)")
PY
# run: SIGKILL sent to the job alone (the first call's kit matched gpudoctor's own command line).
cat > /tmp/sleeper.py <<'PY'
import time, torch
x = torch.ones(1 << 28, device="cuda")
print("sleeper: waiting to be killed", flush=True)
time.sleep(120)
PY
( sleep 10; pkill -KILL -f '^python3 /tmp/sleeper.py' ) &
{ echo "== gpudoctor run -- python3 /tmp/sleeper.py, SIGKILL to python3 alone at ~10 s"
  timeout 90 $NEW run --format json --report /tmp/run-kill.json -- python3 /tmp/sleeper.py; echo "exit $?"
  echo "--- report (without timeline/snapshot)"
  python3 -c 'import json; r=json.load(open("/tmp/run-kill.json")); print(json.dumps({k: r[k] for k in r if k not in ("timeline", "snapshot")}, indent=1)[:6000])'
  echo "== check --format json after all this (kernel log events)"
  timeout 60 $NEW check --no-smoke --format json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], [(f["rule"], f["title"]) for f in r["findings"]]); print(json.dumps(r["snapshot"]["driver"]["install"])); print(json.dumps(r["snapshot"]["probes"]))'
} > "$O/run-kill.txt" 2>&1
wait
sed -i -E 's/GPU-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/GPU-REDACTED/g' "$O"/*.txt
h=$(hostname); [ ${#h} -gt 3 ] && sed -i "s/$h/HOSTNAME/g" "$O"/*.txt
cat "$O"/*.txt | tail -c 11000
