#!/usr/bin/env bash
# Builds the release tarballs: gpudoctor for x86_64 and aarch64 Linux, linked against glibc 2.17
# at most (so one binary starts on RHEL/CentOS 7, Amazon Linux 2, Ubuntu 18.04 and every newer
# distribution, Grace nodes included), dynamically (it dlopens libnvidia-ml and libcuda, which a
# static musl binary could not do).
#
#   scripts/release.sh [--arch x86_64|aarch64]... [--out DIR]
#
# Writes DIR (default dist/):
#   gpudoctor-VERSION-ARCH-linux-gnu.tar.gz   bin/gpudoctor, share/man/man1/*.1, shell
#                                             completions under share/, README.md, licence files
#   install.sh                                scripts/install.sh (verifies and installs a tarball)
#   gpudoctor-matrix.yaml (+ .sha256)         the matrix asset for `gpudoctor matrix update`
#   SHA256SUMS                                of the tarballs, install.sh and the matrix asset
#
# The builds use cargo-zigbuild with zig from PyPI's `ziglang` as linker and C compiler (for the
# C code of aws-lc-sys, under reqwest's rustls): zig ships the glibc 2.17 symbol lists, so no
# old sysroot is needed. scripts/zigbuild.sh installs what it lacks (the rustup targets,
# cargo-zigbuild, ziglang into .venv-release), builds, and checks each binary with
# scripts/check-glibc.sh; scripts/package.sh packs it. Safe to run again; it replaces only the
# files it writes.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=dist
ARCHES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) ARCHES+=("$2"); shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(x86_64 aarch64)
for a in "${ARCHES[@]}"; do
  case "$a" in x86_64|aarch64) ;; *) echo "release.sh: unknown arch $a (x86_64 or aarch64)" >&2; exit 2 ;; esac
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

# --- build and check (scripts/zigbuild.sh) ------------------------------------------------------
declare -A BIN
for a in "${ARCHES[@]}"; do
  BIN[$a]=$(scripts/zigbuild.sh "$a" | tail -1)
done

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
for a in "${ARCHES[@]}"; do
  scripts/package.sh --bin "${BIN[$a]}" --arch "$a" --docbin "$DOCBIN" --out "$OUT" >/dev/null
done
echo "== $OUT"
(cd "$OUT" && ls -l gpudoctor-"$VERSION"-*-linux-gnu.tar.gz install.sh gpudoctor-matrix.yaml* SHA256SUMS && cat SHA256SUMS)
