#!/usr/bin/env bash
# Runs the aarch64 (Grace, GH200/GB200, Jetson) build of gpudoctor under QEMU user mode and
# checks what it does with no driver, with the simulated GPUs and with the stand-in driver
# libraries (tests/standin/*.c) cross-built for aarch64 with zig cc against glibc 2.17.
#
#   scripts/test-aarch64.sh [BINARY]
#
# Without BINARY it builds (or brings up to date) the release binary with scripts/zigbuild.sh
# and tests that. Installs Debian's qemu-user-static and the aarch64 C
# runtime (libc6-arm64-cross, libgcc-s1-arm64-cross) when missing, and registers QEMU for
# aarch64 ELF files with binfmt_misc (gpudoctor starts itself as a helper for NVML and the
# library probes: without binfmt_misc an emulated process cannot start another one). Exit 0
# when every check passes; each check prints one line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${1:-}
SYSROOT=/usr/aarch64-linux-gnu

# --- tools -------------------------------------------------------------------------------------
if ! command -v qemu-aarch64-static >/dev/null 2>&1 || [ ! -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] \
    || [ ! -e "$SYSROOT/lib/libgcc_s.so.1" ]; then
  export DEBIAN_FRONTEND=noninteractive
  pkgs="qemu-user-static libc6-arm64-cross libgcc-s1-arm64-cross"
  apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; }
fi
if [ -z "$BIN" ]; then
  BIN=$(scripts/zigbuild.sh aarch64 | tail -1)
elif [ ! -f "$BIN" ]; then
  echo "test-aarch64.sh: $BIN: no such file" >&2
  exit 2
fi
# zig for the stand-ins (scripts/zigbuild.sh installed it, or does now).
VENV=${GPUDOCTOR_RELEASE_VENV:-$ROOT/.venv-release}
if ! "$VENV/bin/python" -c 'import ziglang' >/dev/null 2>&1; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check ziglang==0.15.2
fi
zigcc() { "$VENV/bin/python" -m ziglang cc "$@"; }

# binfmt_misc: Debian's rule for aarch64 (flag F: QEMU is opened now, so it also works in
# mount namespaces that lack /usr/bin/qemu-aarch64-static).
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  rule=/usr/lib/binfmt.d/qemu-aarch64.conf
  if [ -w "$binfmt/register" ] && [ -f "$rule" ]; then
    cat "$rule" >"$binfmt/register" 2>/dev/null || true
  fi
fi
if ! grep -qx enabled "$binfmt/qemu-aarch64" 2>/dev/null; then
  echo 1 >"$binfmt/qemu-aarch64" 2>/dev/null || true
fi
if ! grep -qx enabled "$binfmt/qemu-aarch64" 2>/dev/null; then
  echo "test-aarch64.sh: cannot register QEMU with binfmt_misc ($binfmt): an emulated gpudoctor could not start its helper processes" >&2
  exit 1
fi
# The aarch64 dynamic loader and libc for every emulated process (inherited by the helpers).
export QEMU_LD_PREFIX=$SYSROOT

# --- checks ------------------------------------------------------------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failed=1; }
# run NAME EXPECTED_STATUS [ENV=VALUE...] -- ARGS...: runs the binary with a small environment,
# output in $work/NAME.{out,err}, status in $work/NAME.rc.
run() {
  local name=$1 want=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local rc=0
  env -i PATH=/usr/bin:/bin HOME=/nonexistent NO_COLOR=1 QEMU_LD_PREFIX="$QEMU_LD_PREFIX" "${envs[@]}" \
    timeout 300 "$BIN" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  echo "$rc" >"$work/$name.rc"
  # WANT is a status or a |-separated list of them.
  if ! [[ "|$want|" == *"|$rc|"* ]]; then
    fail "$name: exit $rc, expected $want: $(head -c 600 "$work/$name.err")"
    return 1
  fi
}
# has NAME FILE-SUFFIX TEXT: the output contains TEXT.
has() {
  if grep -qF -- "$3" "$work/$1.$2"; then pass "$1: $3"; else
    fail "$1: no '$3' in its std$2: $(head -c 600 "$work/$1.$2")"
  fi
}
json() { # NAME PYTHON-EXPRESSION-ON-v: prints its value
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print($2)" "$work/$1.out"
}
is() { # NAME WHAT GOT WANT
  if [ "$3" = "$4" ]; then pass "$1: $2 = $4"; else fail "$1: $2 = '$3', expected '$4'"; fi
}

echo "== $BIN under $(qemu-aarch64-static --version | head -1)"
aarch64_elf() { local h; h=$(readelf -h "$1" 2>/dev/null) && grep -q 'Machine: *AArch64' <<<"$h"; }
if aarch64_elf "$BIN"; then pass "an aarch64 ELF"; else fail "not an aarch64 ELF"; fi
if scripts/check-glibc.sh --max 2.17 "$BIN" >/dev/null; then pass "needs GLIBC_2.17 at most"; else fail "check-glibc"; fi

t0=$(date +%s)
run version 0 -- --version && has version out "target: aarch64-unknown-linux-gnu"

# No driver here: exit 1, the driver.missing finding, the host seen as aarch64.
if run check-nodriver 1 -- check --format json --no-smoke; then
  is check-nodriver "host arch" "$(json check-nodriver "v['snapshot']['host']['value']['arch']")" aarch64
  is check-nodriver "driver.missing" \
    "$(json check-nodriver "any(f['rule'] == 'driver.missing' for f in v['findings'])")" True
fi
run check-human 1 -- check --no-smoke && has check-human out "No NVIDIA driver found"

# explain: a Windows crash code and a pasted CUDA error.
run explain-code 0 -- explain 0xC0000409 && has explain-code out "STATUS_STACK_BUFFER_OVERRUN"
if run explain-oom 0 -- explain --json "RuntimeError: CUDA error: out of memory"; then
  is explain-oom "first category" "$(json explain-oom "v['matches'][0]['category']")" gpu_memory_exhausted
fi

# stress on the simulated GPUs (memory and compute on the CPU, emulated): healthy, then a stuck
# memory bit (exit 1). Long enough for whole rounds at QEMU's speed.
sim=(GPUDOCTOR_SIM_GPUS=2 GPUDOCTOR_SIM_MEM_MIB=4)
if run stress-sim 0 "${sim[@]}" -- stress --seconds 8 --json; then
  is stress-sim verdict "$(json stress-sim "v['verdict']")" pass
  is stress-sim "GPUs stressed" "$(json stress-sim "len(v['snapshot']['stress']['gpus'])")" 2
fi
if run stress-fault 1 "${sim[@]}" GPUDOCTOR_SIM_FAULTS=stuck-bit -- stress --seconds 8 --json; then
  is stress-fault verdict "$(json stress-fault "v['verdict']")" fail
fi

# The stand-in NVML and libcuda, built for aarch64 against glibc 2.17, in a directory laid out
# as on an aarch64 server (/usr/lib/aarch64-linux-gnu).
lib=$work/usr/lib/aarch64-linux-gnu
mkdir -p "$lib"
zigcc -target aarch64-linux-gnu.2.17 -shared -fPIC -O1 -o "$lib/libnvidia-ml.so.1" tests/standin/libnvidia-ml.c
zigcc -target aarch64-linux-gnu.2.17 -shared -fPIC -O1 -o "$lib/libcuda.so.1" tests/standin/libcuda.c
ln -sf libcuda.so.1 "$lib/libcuda.so"
if aarch64_elf "$lib/libnvidia-ml.so.1" && aarch64_elf "$lib/libcuda.so.1"; then pass "stand-ins built for aarch64"; else fail "stand-ins not aarch64"; fi
# A100 values recorded on a real machine, read back through NVML in the helper process. (The
# verdict depends on this machine: a container without /dev/nvidia* is unfit.)
if run standin-a100 "0|1" LD_LIBRARY_PATH="$lib" STANDIN_NVML_PROFILE=a100 -- check --format json --no-smoke; then
  is standin-a100 "NVML findings" "$(json standin-a100 "[f['rule'] for f in v['findings'] if f['rule'] in ('nvml.failed', 'probe.crashed', 'probe.timeout')]")" "[]"
  is standin-a100 "GPU 0" "$(json standin-a100 "v['snapshot']['gpus']['value'][0]['name']['value']")" \
    "$(sed -n 's/^ *Product Name *: //p' tests/standin/profiles/a100.nvidia-smi-q.txt | head -1)"
  is standin-a100 "driver" "$(json standin-a100 "v['snapshot']['driver']['nvml']['value']['driver_version']")" \
    "$(sed -n 's/^ *Driver Version *: //p' tests/standin/profiles/a100.nvidia-smi-q.txt | head -1)"
  # libcuda.so.1 found by the loader in the aarch64 library directory, its version read.
  is standin-a100 "libcuda" "$(json standin-a100 "v['snapshot']['driver']['libcuda']['value'].get('cuda_driver_version')")" 12080
fi
# NVML that crashes in nvmlInit_v2: the helper dies, gpudoctor reports it (exit 1).
if run standin-segv 1 LD_LIBRARY_PATH="$lib" STANDIN_NVML_FAIL=nvmlInit_v2=segv -- check --format json --no-smoke; then
  is standin-segv "nvml.failed or probe.crashed names nvmlInit_v2" \
    "$(json standin-segv "any('nvmlInit_v2' in json.dumps(f) for f in v['findings'])")" True
fi
# The smoke tests through the stand-in libcuda whose cuInit crashes: the smoke helper dies,
# gpudoctor reports it with the call it was in (a valid report, exit 1).
if run standin-smoke 1 LD_LIBRARY_PATH="$lib" STANDIN_CUINIT=segv -- check --format json --timeout 20; then
  is standin-smoke "smoke.failed names cuInit" \
    "$(json standin-smoke "'cuInit' in json.dumps(v['snapshot'].get('smoke'))")" True
fi
echo "   checks took $(( $(date +%s) - t0 )) s"
exit $failed
