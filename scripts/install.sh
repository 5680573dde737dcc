#!/bin/sh
# Installs a gpudoctor release tarball: verifies its SHA-256 against the SHA256SUMS beside it,
# then copies the binary, the man pages and the shell completions into a prefix.
#
#   sh install.sh [--prefix DIR] [--sums FILE] [TARBALL]
#
#   TARBALL   gpudoctor-VERSION-ARCH-linux-gnu.tar.gz; by default the one for this machine's
#             architecture in the directory of this script (where release.sh puts both).
#   --prefix  where to install: DIR/bin/gpudoctor, DIR/share/man/man1, DIR/share/bash-completion,
#             DIR/share/zsh/site-functions, DIR/share/fish/vendor_completions.d,
#             DIR/share/doc/gpudoctor. Default: /usr/local as root, else ~/.local.
#   --sums    the checksum file (default: SHA256SUMS beside the tarball). A tarball with no line
#             in it, or whose checksum differs, is not installed.
#
# POSIX sh, with tar, gzip and sha256sum (coreutils): what a fresh node has. Exit 0 installed,
# 1 verification or installation failed, 2 bad arguments.
set -eu

prefix=
sums=
tarball=
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --sums) [ $# -ge 2 ] || { echo "install.sh: --sums needs a file" >&2; exit 2; }; sums=$2; shift 2 ;;
    --sums=*) sums=${1#--sums=}; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$tarball" ] || { echo "install.sh: one tarball at a time" >&2; exit 2; }; tarball=$1; shift ;;
  esac
done

arch=$(uname -m)
case "$arch" in arm64) arch=aarch64 ;; amd64) arch=x86_64 ;; esac
if [ -z "$tarball" ]; then
  here=$(cd "$(dirname "$0")" && pwd)
  set -- "$here"/gpudoctor-*-"$arch"-linux-gnu.tar.gz
  if [ ! -f "$1" ]; then
    echo "install.sh: no gpudoctor-*-$arch-linux-gnu.tar.gz in $here; name the tarball to install" >&2
    exit 2
  fi
  if [ $# -gt 1 ]; then
    echo "install.sh: several tarballs for $arch in $here ($*); name the one to install" >&2
    exit 2
  fi
  tarball=$1
fi
if [ ! -f "$tarball" ]; then
  echo "install.sh: $tarball: no such file" >&2
  exit 2
fi
base=$(basename "$tarball")
case "$base" in
  gpudoctor-*-linux-gnu.tar.gz) ;;
  *) echo "install.sh: $base is not named like a release tarball (gpudoctor-VERSION-ARCH-linux-gnu.tar.gz)" >&2; exit 2 ;;
esac
name=${base%.tar.gz}
tar_arch=${name%-linux-gnu}
tar_arch=${tar_arch##*-}
if [ "$tar_arch" != "$arch" ]; then
  echo "install.sh: $base is for $tar_arch, this machine is $arch: take gpudoctor-*-$arch-linux-gnu.tar.gz" >&2
  exit 1
fi

# --- verify ------------------------------------------------------------------------------------
[ -n "$sums" ] || sums=$(dirname "$tarball")/SHA256SUMS
if [ ! -f "$sums" ]; then
  echo "install.sh: $sums not found: download SHA256SUMS with the tarball (or name it with --sums)" >&2
  exit 1
fi
if ! command -v sha256sum >/dev/null 2>&1; then
  echo "install.sh: sha256sum (coreutils) is needed to verify $base" >&2
  exit 1
fi
# The line for this file: "HEX  NAME" (or "HEX *NAME" from sha256sum -b).
want=$(awk -v n="$base" '{f = $2; sub(/^\*/, "", f)} f == n {print $1; exit}' "$sums")
if [ -z "$want" ]; then
  echo "install.sh: $sums has no line for $base" >&2
  exit 1
fi
got=$(sha256sum "$tarball" | awk '{print $1}')
if [ "$got" != "$want" ]; then
  echo "install.sh: checksum mismatch for $base: $sums says $want, the file is $got; not installed" >&2
  exit 1
fi
echo "verified $base (sha256 $got)"

# --- unpack and install ------------------------------------------------------------------------
if [ -z "$prefix" ]; then
  if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix=${HOME:?}/.local; fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tar -xzf "$tarball" -C "$tmp"
src=$tmp/$name
if [ ! -f "$src/bin/gpudoctor" ]; then
  echo "install.sh: $base has no $name/bin/gpudoctor" >&2
  exit 1
fi
# Does it start here (glibc too old, wrong architecture)? Before anything is replaced.
if ! ver=$("$src/bin/gpudoctor" --version 2>&1); then
  echo "install.sh: the binary in $base does not run on this machine: $ver" >&2
  exit 1
fi

# Each file is copied beside its destination and renamed over it, so a running gpudoctor or a
# failed copy never leaves a half-written file.
put() { # SRC DEST MODE
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.install-tmp"
  chmod "$3" "$2.install-tmp"
  mv -f "$2.install-tmp" "$2"
  echo "  $2"
}
echo "installing into $prefix:"
put "$src/bin/gpudoctor" "$prefix/bin/gpudoctor" 755
for m in "$src"/share/man/man1/*.1; do
  if [ -f "$m" ]; then put "$m" "$prefix/share/man/man1/$(basename "$m")" 644; fi
done
for c in bash-completion/completions/gpudoctor zsh/site-functions/_gpudoctor \
    fish/vendor_completions.d/gpudoctor.fish; do
  if [ -f "$src/share/$c" ]; then put "$src/share/$c" "$prefix/share/$c" 644; fi
done
for doc in "$src"/README* "$src"/LICEN[CS]E* "$src"/COPYING*; do
  if [ -f "$doc" ]; then put "$doc" "$prefix/share/doc/gpudoctor/$(basename "$doc")" 644; fi
done
echo "$ver" | sed 's/^/  /'
case ":${PATH:-}:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
