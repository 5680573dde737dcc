#!/usr/bin/env bash
# Builds gpudoctor for ARCH (x86_64 or aarch64) against glibc 2.17 with cargo-zigbuild, then
# checks the binary with scripts/check-glibc.sh. Installs what it lacks: the rustup target, and
# zig and cargo-zigbuild from PyPI (ziglang, cargo-zigbuild) into .venv-release. Prints the
# binary's path on its last line. Used by scripts/release.sh and scripts/test-aarch64.sh.
#
#   scripts/zigbuild.sh ARCH [--profile release|dev]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ZIGLANG=ziglang==0.15.2
ZIGBUILD=cargo-zigbuild==0.24.0
GLIBC=2.17

arch=${1:-}
profile=release
[ "${2:-}" = "--profile" ] && profile=${3:-release}
case "$arch" in x86_64|aarch64) ;; *) echo "zigbuild.sh: ARCH is x86_64 or aarch64 (got '$arch')" >&2; exit 2 ;; esac
case "$profile" in release|dev) ;; *) echo "zigbuild.sh: --profile release or dev" >&2; exit 2 ;; esac
t="$arch-unknown-linux-gnu"

if command -v rustup >/dev/null 2>&1 && ! grep -qx "$t" <<<"$(rustup target list --installed)"; then
  rustup target add "$t" >&2
fi
VENV=${GPUDOCTOR_RELEASE_VENV:-$ROOT/.venv-release}
# zig (and cargo-zigbuild, unless cargo has it already) from PyPI, into a venv of their own.
pkgs=("$ZIGLANG")
if ! cargo zigbuild --help >/dev/null 2>&1; then
  pkgs+=("$ZIGBUILD")
  export PATH="$VENV/bin:$PATH"
fi
if ! "$VENV/bin/python" -c 'import ziglang' >/dev/null 2>&1 \
    || { [ ${#pkgs[@]} -gt 1 ] && [ ! -x "$VENV/bin/cargo-zigbuild" ]; }; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${pkgs[@]}" >&2
fi
# cargo-zigbuild runs `python -m ziglang` with this interpreter when no `zig` is on PATH.
export CARGO_ZIGBUILD_PYTHON_PATH="$VENV/bin/python"

echo "== cargo zigbuild --profile $profile --target $t.$GLIBC" >&2
start=$(date +%s)
cargo zigbuild --profile "$profile" --locked --target "$t.$GLIBC" >&2
dir=$profile
[ "$profile" = dev ] && dir=debug
bin="${CARGO_TARGET_DIR:-target}/$t/$dir/gpudoctor"
echo "   built $t ($profile) in $(( $(date +%s) - start )) s" >&2
scripts/check-glibc.sh --max "$GLIBC" "$bin" >&2
echo "$bin"
