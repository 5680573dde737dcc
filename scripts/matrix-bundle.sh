#!/usr/bin/env bash
# Bundles compat-matrix/*.yaml into the one file `gpudoctor matrix update` installs, as each
# release ships it (docs/decisions.md, "Getting a newer matrix"):
#
#   scripts/matrix-bundle.sh [--out DIR] [--gpudoctor BIN]
#
# Writes DIR (default dist/):
#   gpudoctor-matrix.yaml          every table, the newest data_version of the files
#   gpudoctor-matrix.yaml.sha256   "HEX  gpudoctor-matrix.yaml" (sha256sum format)
# The asset name has no version in it so that a release's "latest" download link stays the same;
# the data version is inside the file. The bundle is validated with BIN (default: the gpudoctor
# on PATH, else target/debug/gpudoctor) before it is written. Files are concatenated in the
# embedded order (src/matrix.rs EMBEDDED), each without its schema and data_version lines.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=dist
BIN=
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --gpudoctor) BIN=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "matrix-bundle.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$BIN" ]; then
  BIN=$(command -v gpudoctor || echo target/debug/gpudoctor)
fi
[ -x "$BIN" ] || { echo "matrix-bundle.sh: no gpudoctor binary at $BIN (cargo build first, or --gpudoctor BIN)" >&2; exit 2; }

FILES=(cuda gpus cudnn pytorch tensorflow jax)
version=$(for f in "${FILES[@]}"; do sed -n 's/^data_version: *"\(.*\)"$/\1/p' "compat-matrix/$f.yaml"; done | sort | tail -1)
[ -n "$version" ] || { echo "matrix-bundle.sh: no data_version in compat-matrix/" >&2; exit 2; }

mkdir -p "$OUT"
tmp=$(mktemp "$OUT/.gpudoctor-matrix.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  echo "# gpudoctor compatibility matrix, every table in one file (scripts/matrix-bundle.sh)."
  echo "# Install it with: gpudoctor matrix update --from gpudoctor-matrix.yaml --sha256 HEX"
  echo "schema: gpudoctor.matrix/1"
  echo "data_version: \"$version\""
  for f in "${FILES[@]}"; do
    echo
    echo "# ---- compat-matrix/$f.yaml"
    grep -v -e '^schema:' -e '^data_version:' "compat-matrix/$f.yaml"
  done
} > "$tmp"
# Validate it before it replaces anything: every table, each making sense on its own.
said=$("$BIN" matrix validate "$tmp")
case "$said" in
  *"checked against the built-in"*) echo "matrix-bundle.sh: the bundle lacks a table: $said" >&2; exit 1 ;;
esac
mv "$tmp" "$OUT/gpudoctor-matrix.yaml"
trap - EXIT
(cd "$OUT" && sha256sum gpudoctor-matrix.yaml > gpudoctor-matrix.yaml.sha256)
echo "$OUT/gpudoctor-matrix.yaml (data version $version, sha256 $(cut -d' ' -f1 "$OUT/gpudoctor-matrix.yaml.sha256"))"
