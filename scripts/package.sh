#!/usr/bin/env bash
# Packs one built gpudoctor binary into a release tarball, copies install.sh beside it and
# rewrites SHA256SUMS. scripts/release.sh calls it for each architecture; tests/it/install.rs calls
# it with the debug binary, so the layout the install script is tested on is the real one.
#
#   scripts/package.sh --bin BINARY --arch x86_64|aarch64 [--docbin BINARY] [--out DIR]
#
#   --docbin  a binary that runs here, to print the man pages and completions (default: --bin)
#   --out     default dist/
#
# Tarball layout (gpudoctor-VERSION-ARCH-linux-gnu/ at the top, a prefix tree below it):
#   bin/gpudoctor
#   share/man/man1/gpudoctor.1
#   share/bash-completion/completions/gpudoctor
#   share/zsh/site-functions/_gpudoctor
#   share/fish/vendor_completions.d/gpudoctor.fish
#   README.md, and the licence files the repository has
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

bin="" arch="" docbin="" out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --docbin) docbin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ] || [ ! -f "$bin" ]; then
  echo "package.sh: --bin BINARY is needed (got '${bin}')" >&2
  exit 2
fi
case "$arch" in x86_64|aarch64) ;; *) echo "package.sh: --arch x86_64 or aarch64 (got '${arch}')" >&2; exit 2 ;; esac
[ -n "$docbin" ] || docbin=$bin

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}

# The man pages: `gpudoctor man` prints the page of the whole command. (The one place to change
# when `gpudoctor man` can write one page per subcommand into a directory.)
write_man_pages() {
  # gpudoctor.1 and one gpudoctor-<subcommand>.1 for each subcommand.
  "$docbin" man --dir "$1"
}

write_completions() {
  local share=$1
  mkdir -p "$share/bash-completion/completions" "$share/zsh/site-functions" \
    "$share/fish/vendor_completions.d"
  "$docbin" completions bash >"$share/bash-completion/completions/gpudoctor"
  "$docbin" completions zsh >"$share/zsh/site-functions/_gpudoctor"
  "$docbin" completions fish >"$share/fish/vendor_completions.d/gpudoctor.fish"
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
name="gpudoctor-$VERSION-$arch-linux-gnu"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
d="$stage/$name"
mkdir -p "$d/bin" "$d/share/man/man1"
cp "$bin" "$d/bin/gpudoctor"
chmod 755 "$d/bin/gpudoctor"
write_man_pages "$d/share/man/man1"
write_completions "$d/share"
cp "$ROOT/README.md" "$d/"
shopt -s nullglob
licences=("$ROOT"/LICENSE* "$ROOT"/LICENCE* "$ROOT"/COPYING*)
shopt -u nullglob
if [ ${#licences[@]} -eq 0 ]; then
  echo "package.sh: warning: the repository has no LICENSE file (Cargo.toml: $(sed -n 's/^license = //p' "$ROOT/Cargo.toml")); $name carries none" >&2
fi
for l in "${licences[@]}"; do cp "$l" "$d/"; done
# Reproducible: sorted names, root owner, the commit's time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" --format=gnu \
  -C "$stage" -cf - "$name" | gzip -9n >"$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
cp "$ROOT/scripts/install.sh" "$out/install.sh.tmp"
chmod 755 "$out/install.sh.tmp"
mv "$out/install.sh.tmp" "$out/install.sh"

# SHA256SUMS: every tarball of this version in OUT (the other architecture's too), install.sh.
(
  cd "$out"
  extra=()
  # The matrix asset (scripts/matrix-bundle.sh), when release.sh made one.
  if [ -f gpudoctor-matrix.yaml ]; then extra=(gpudoctor-matrix.yaml); fi
  sha256sum gpudoctor-"$VERSION"-*-linux-gnu.tar.gz install.sh "${extra[@]}" >SHA256SUMS.tmp
  mv SHA256SUMS.tmp SHA256SUMS
)
echo "$out/$name.tar.gz"
