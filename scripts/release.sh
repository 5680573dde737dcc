#!/usr/bin/env bash
# Builds the release artefacts: gpudoctor for x86_64 and aarch64 Linux, linked against glibc 2.17
# at most (so one binary starts on RHEL/CentOS 7, Amazon Linux 2, Ubuntu 18.04 and every newer
# distribution, Grace nodes included), dynamically (it dlopens libnvidia-ml and libcuda, which a
# static musl binary could not do); and for 64-bit Windows (x86_64-pc-windows-gnu), as a wheel.
#
#   scripts/release.sh [--arch x86_64|aarch64|windows]... [--wheel-only] [--out DIR]
#
# Writes DIR (default dist/):
#   gpudoctor-VERSION-py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH.whl, and
#   gpudoctor-VERSION-py3-none-win_amd64.whl  the PyPI wheels (`pip install gpudoctor`,
#                                             `uvx gpudoctor check`): the binary as the wheel's
#                                             script, maturin bindings = "bin" (pyproject.toml)
#   gpudoctor-VERSION.tar.gz                  the source distribution for PyPI
#   gpudoctor-VERSION-ARCH-linux-gnu.tar.gz   bin/gpudoctor, share/man/man1/*.1, shell
#                                             completions under share/, README.md, licence files
#   install.sh                                scripts/install.sh (verifies and installs a tarball)
#   gpudoctor-matrix.yaml (+ .sha256)         the matrix asset for `gpudoctor matrix update`
#   SHA256SUMS                                of the tarballs, install.sh and the matrix asset
# With --wheel-only, the wheels and the source distribution alone. Without --arch: all three.
#
# Each target is built once, by scripts/zigbuild.sh: maturin runs cargo (with zig from PyPI's
# `ziglang` as linker and C compiler against glibc 2.17 for Linux; mingw-w64 for Windows), and
# the binary it leaves in target/ is the one the wheel carries and the one the tarball packs.
# zigbuild.sh installs what it lacks (the rustup targets, ziglang and maturin into
# .venv-release) and checks each Linux binary with scripts/check-glibc.sh; scripts/package.sh
# packs the tarballs. Safe to run again; it replaces only the files it writes.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=dist
ARCHES=()
WHEEL_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) ARCHES+=("${2:-}"); shift 2 ;;
    --out) OUT=${2:-}; shift 2 ;;
    --wheel-only) WHEEL_ONLY=1; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(x86_64 aarch64 windows)
for a in "${ARCHES[@]}"; do
  case "$a" in x86_64|aarch64|windows) ;; *) echo "release.sh: unknown arch $a (x86_64, aarch64 or windows)" >&2; exit 2 ;; esac
done

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$VERSION" ] || { echo "release.sh: no version in Cargo.toml" >&2; exit 2; }

# The commit for `gpudoctor --version` (build.rs), marked when tracked files differ from it.
if [ -z "${GPUDOCTOR_GIT_COMMIT:-}" ] && commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit-dirty"
    echo "release.sh: warning: the work tree has uncommitted changes; the release says $commit" >&2
  fi
  export GPUDOCTOR_GIT_COMMIT=$commit
fi

# --- build and check, the wheels (scripts/zigbuild.sh) -----------------------------------------
mkdir -p "$OUT"
declare -A BIN
LINUX=()
for a in "${ARCHES[@]}"; do
  built=$(scripts/zigbuild.sh "$a" --wheel-dir "$OUT")
  BIN[$a]=$(tail -1 <<<"$built")
  [ "$a" = windows ] || LINUX+=("$a")
done
# The source distribution (cargo's file list, pyproject.toml and python/): no build.
"${GPUDOCTOR_RELEASE_VENV:-$PWD/.venv-release}/bin/maturin" sdist --out "$OUT" >&2
if [ "$WHEEL_ONLY" = 1 ] || [ ${#LINUX[@]} -eq 0 ]; then
  echo "== $OUT"
  (cd "$OUT" && ls -l gpudoctor-"$VERSION"*.whl gpudoctor-"$VERSION".tar.gz)
  exit 0
fi

# Man pages and completions come from the binary (the same for every arch): the one that runs
# here. (scripts/test-aarch64.sh runs the aarch64 one under QEMU.)
host=$(uname -m)
DOCBIN=${BIN[$host]:-}
if [ -z "$DOCBIN" ]; then
  echo "release.sh: building $host too, to generate the man pages and completions" >&2
  cargo build --release --locked
  DOCBIN=${CARGO_TARGET_DIR:-target}/release/gpudoctor
fi

# --- package: tarballs, install.sh and SHA256SUMS (scripts/package.sh) --------------------------
# The matrix asset that `gpudoctor matrix update` installs (docs/decisions.md), first, so that
# SHA256SUMS lists it too.
scripts/matrix-bundle.sh --out "$OUT" --gpudoctor "$DOCBIN" >/dev/null
for a in "${LINUX[@]}"; do
  scripts/package.sh --bin "${BIN[$a]}" --arch "$a" --docbin "$DOCBIN" --out "$OUT" >/dev/null
done
echo "== $OUT"
(cd "$OUT" && ls -l gpudoctor-"$VERSION"*.whl gpudoctor-"$VERSION".tar.gz \
  gpudoctor-"$VERSION"-*-linux-gnu.tar.gz install.sh gpudoctor-matrix.yaml* SHA256SUMS && cat SHA256SUMS)
