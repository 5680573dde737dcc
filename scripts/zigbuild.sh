#!/usr/bin/env bash
# Builds gpudoctor for ARCH once and gives both release artefacts of that one build: the binary
# (for the tarball, the container image, scripts/test-aarch64.sh) and the PyPI wheel (issue 32).
#
#   scripts/zigbuild.sh ARCH [--profile release|dev] [--wheel-dir DIR]
#
#   x86_64, aarch64  maturin (bindings = "bin", pyproject.toml) with --zig against glibc 2.17:
#                    the wheel is manylinux2014 (manylinux_2_17); the binary is checked with
#                    scripts/check-glibc.sh
#   windows          x86_64-pc-windows-gnu with Debian's mingw-w64 (installed when missing): the
#                    wheel is win_amd64
#
# maturin runs cargo itself (with zig as linker and C compiler, for aws-lc-sys under reqwest's
# rustls: zig ships the glibc 2.17 symbol lists, no old sysroot needed), so the binary in the
# wheel is the binary in target/: one build per target, never two. Installs what it lacks: the
# rustup target, and zig and maturin from PyPI (ziglang, maturin) into .venv-release. The wheel
# goes to DIR (default target/wheels). Prints the binary's path on its last line, the wheel's on
# the line before. Used by scripts/release.sh and scripts/test-aarch64.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ZIGLANG=ziglang==0.15.2
MATURIN=maturin==1.16.0
GLIBC=2.17

arch=${1:-}
shift || true
profile=release
wheels=${CARGO_TARGET_DIR:-target}/wheels
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:-}; shift 2 ;;
    --wheel-dir) wheels=${2:-}; shift 2 ;;
    *) echo "zigbuild.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$arch" in
  x86_64|aarch64) t="$arch-unknown-linux-gnu"; exe=gpudoctor ;;
  windows) t=x86_64-pc-windows-gnu; exe=gpudoctor.exe ;;
  *) echo "zigbuild.sh: ARCH is x86_64, aarch64 or windows (got '$arch')" >&2; exit 2 ;;
esac
case "$profile" in release|dev) ;; *) echo "zigbuild.sh: --profile release or dev" >&2; exit 2 ;; esac

if command -v rustup >/dev/null 2>&1 && ! grep -qx "$t" <<<"$(rustup target list --installed)"; then
  rustup target add "$t" >&2
fi
if [ "$arch" = windows ] && ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends mingw-w64 >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends mingw-w64 >/dev/null; }
fi
VENV=${GPUDOCTOR_RELEASE_VENV:-$ROOT/.venv-release}
# zig and maturin from PyPI, into a venv of their own.
if ! "$VENV/bin/python" -c 'import ziglang' >/dev/null 2>&1 \
    || [ "$("$VENV/bin/maturin" --version 2>/dev/null)" != "maturin ${MATURIN#maturin==}" ]; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$ZIGLANG" "$MATURIN" >&2
fi
# maturin's zig support runs `python -m ziglang` with this interpreter when no `zig` is on PATH.
export PATH="$VENV/bin:$PATH"
export CARGO_ZIGBUILD_PYTHON_PATH="$VENV/bin/python"

mkdir -p "$wheels"
args=(build --profile "$profile" --locked --target "$t" --out "$wheels")
[ "$arch" = windows ] || args+=(--zig --compatibility manylinux2014)
echo "== maturin ${args[*]}" >&2
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
maturin "${args[@]}" 2>&1 | tee "$log" >&2
dir=$profile
[ "$profile" = dev ] && dir=debug
bin="${CARGO_TARGET_DIR:-target}/$t/$dir/$exe"
# maturin's last line: "📦 Built wheel to DIR/NAME.whl".
wheel=$(sed -n 's/^.*Built wheel[^/]* to //p' "$log" | tail -1)
[ -f "$bin" ] && [ -n "$wheel" ] && [ -f "$wheel" ] \
  || { echo "zigbuild.sh: maturin left no $bin or no wheel" >&2; exit 1; }
echo "   built $t ($profile) in $(( $(date +%s) - start )) s: $wheel" >&2
[ "$arch" = windows ] || scripts/check-glibc.sh --max "$GLIBC" "$bin" >&2
echo "$wheel"
echo "$bin"
