#!/usr/bin/env bash
# The PyPI packaging, end to end (issue 32): builds the x86_64 wheel and the sdist with
# scripts/release.sh --wheel-only (one release build), checks them with twine and auditwheel,
# installs the wheel with pip into a fresh venv that holds a recorded torch 2.1.0+cu121
# site-packages (tests/fixtures/site-packages/torch210), with `uv tool install` and with `uvx`,
# and runs gpudoctor from each: `--version`, `check --format json`, `python -m gpudoctor`. The
# venv's own torch must be the first environment judged. Wheels for other targets already in
# DIR (aarch64: scripts/test-aarch64.sh leaves one in target/wheels; win_amd64) are checked too,
# and their binary run: under QEMU (`explain`) and under Wine (`--version`, `explain`).
#
#   scripts/test-wheel.sh [--no-build] [DIR]     DIR: default target/wheels
#
# --no-build checks the wheels already in DIR. twine, auditwheel and uv come from PyPI into
# .venv-wheeltest. Each check prints one line; exit 0 when all pass.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
DIR=${1:-${CARGO_TARGET_DIR:-target}/wheels}
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
TWINE=twine==7.0.0
AUDITWHEEL=auditwheel==6.8.2
UV=uv==0.13.9

t0=$(date +%s)
if [ "$build" = 1 ]; then
  scripts/release.sh --arch x86_64 --wheel-only --out "$DIR"
fi
echo "   build: $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
TOOLS=${GPUDOCTOR_WHEELTEST_VENV:-$ROOT/.venv-wheeltest}
if ! "$TOOLS/bin/python" -c 'import twine, auditwheel' >/dev/null 2>&1 || [ ! -x "$TOOLS/bin/uv" ]; then
  [ -x "$TOOLS/bin/python" ] || python3 -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check "$TWINE" "$AUDITWHEEL" "$UV"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; failed=1; }
is() { # WHAT GOT WANT
  if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1 = '$2', expected '$3'"; fi
}
json() { # FILE PYTHON-EXPRESSION-ON-v
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null || echo "(no JSON)"
}
first_env='v["snapshot"]["python"]["value"][0]'
# The prefixes of the environments judged, in order, joined by " ".
envs='" ".join(e["prefix"] for e in v["snapshot"]["python"]["value"])'

shopt -s nullglob
x86=("$DIR"/gpudoctor-"$VERSION"-py3-none-manylinux*_x86_64.whl)
arm=("$DIR"/gpudoctor-"$VERSION"-py3-none-manylinux*_aarch64.whl)
win=("$DIR"/gpudoctor-"$VERSION"-py3-none-win_amd64.wh[l])  # [l]: a glob, so nullglob drops it
sdist=("$DIR"/gpudoctor-"$VERSION".tar.g[z])
shopt -u nullglob
[ ${#x86[@]} -eq 1 ] || { echo "test-wheel.sh: no single x86_64 wheel of $VERSION in $DIR" >&2; exit 1; }
WHEEL=${x86[0]}

# --- the files ---------------------------------------------------------------------------------
echo "== twine check, tags"
for f in "${x86[@]}" "${arm[@]}" "${win[@]}" "${sdist[@]}"; do
  if out=$("$TOOLS/bin/twine" check --strict "$f" 2>&1); then pass "twine check --strict $(basename "$f")"
  else fail "twine check $(basename "$f"): $out"; fi
done
[ ${#sdist[@]} -eq 1 ] && pass "sdist $(basename "${sdist[0]}")" || fail "no sdist gpudoctor-$VERSION.tar.gz in $DIR"
# WHEEL's Tag lines and the metadata an index page shows.
wheel_meta() { # WHEEL: "TAGS|license|summary|readme-type|has-main|scripts"
  python3 - "$1" <<'PY'
import sys, zipfile, email
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
di = [n for n in names if n.endswith(".dist-info/WHEEL")][0].rsplit("/", 1)[0]
tags = [l.split(": ", 1)[1] for l in z.read(di + "/WHEEL").decode().splitlines() if l.startswith("Tag: ")]
m = email.message_from_bytes(z.read(di + "/METADATA"))
scripts = sorted(n.rsplit("/", 1)[1] for n in names if ".data/scripts/" in n)
print("|".join([",".join(sorted(tags)), m.get("License-Expression", ""), str(bool(m.get("Summary"))),
      m.get("Description-Content-Type", ""), str("gpudoctor/__main__.py" in names), ",".join(scripts)]))
PY
}
IFS='|' read -r tags lic summary ctype main scripts <<<"$(wheel_meta "$WHEEL")"
is "x86_64 wheel tags" "$tags" "py3-none-manylinux2014_x86_64,py3-none-manylinux_2_17_x86_64"
is "license" "$lic" "MIT OR Apache-2.0"
is "summary present" "$summary" True
is "long description type" "$ctype" "text/markdown"
is "gpudoctor/__main__.py in the wheel" "$main" True
is "x86_64 wheel scripts" "$scripts" gpudoctor
aw=$("$TOOLS/bin/auditwheel" show "$WHEEL" 2>&1 | tr -s ' \n' '  ' || true)
if grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' <<<"$aw"; then
  pass "auditwheel show: manylinux_2_17_x86_64 (manylinux2014)"
else fail "auditwheel show: $aw"; fi

# --- pip install into a project's venv -----------------------------------------------------------
echo "== pip install into a fresh venv with torch 2.1.0+cu121 (recorded site-packages)"
proj=$work/project/.venv
python3 -m venv "$proj"
sp=$("$proj/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
cp -r tests/fixtures/site-packages/torch210/. "$sp/"
"$proj/bin/python" -m pip install -q --disable-pip-version-check --no-index "$WHEEL"
[ -x "$proj/bin/gpudoctor" ] && pass "pip put gpudoctor in the venv's bin/" || fail "no $proj/bin/gpudoctor"
# A clean environment: no VIRTUAL_ENV (not activated), the system PATH.
clean=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work/home" NO_COLOR=1)
v=$("${clean[@]}" "$proj/bin/gpudoctor" --version 2>&1 | head -1 || true)
case "$v" in "gpudoctor $VERSION"*) pass "venv: $v" ;; *) fail "venv: --version said '$v'" ;; esac
rc=0
"${clean[@]}" "$proj/bin/gpudoctor" check --format json --no-smoke >"$work/pip.json" 2>"$work/pip.err" || rc=$?
# No driver here: exit 1 (the host is unfit), a complete report.
is "venv: check exit status" "$rc" 1
is "venv: first environment" "$(json "$work/pip.json" "$first_env['prefix']")" "$proj"
is "venv: its origin" "$(json "$work/pip.json" "$first_env['origin']")" "gpudoctor installed here"
is "venv: its torch" "$(json "$work/pip.json" "$first_env['torch']['version']")" "2.1.0+cu121"
# python -m gpudoctor: the same binary, the exit status passed through.
rc=0
"${clean[@]}" "$proj/bin/python" -m gpudoctor check --format json --no-smoke >"$work/pym.json" 2>/dev/null || rc=$?
is "python -m gpudoctor check: exit status" "$rc" 1
is "python -m gpudoctor check: first environment" "$(json "$work/pym.json" "$first_env['prefix']")" "$proj"
rc=0
"${clean[@]}" "$proj/bin/python" -m gpudoctor explain 0xC0000409 >"$work/pym.out" 2>&1 || rc=$?
if [ $rc = 0 ] && grep -q STATUS_STACK_BUFFER_OVERRUN "$work/pym.out"; then pass "python -m gpudoctor explain 0xC0000409"
else fail "python -m gpudoctor explain: exit $rc: $(head -c 300 "$work/pym.out")"; fi
rc=0
"${clean[@]}" "$proj/bin/python" -m gpudoctor --no-such-flag >/dev/null 2>&1 || rc=$?
is "python -m gpudoctor --no-such-flag: exit status" "$rc" 2

# --- uv tool install and uvx -----------------------------------------------------------------------
echo "== uv tool install, uvx ($("$TOOLS/bin/uv" --version))"
uvenv=("${clean[@]}" UV_CACHE_DIR="$work/uv-cache" UV_TOOL_DIR="$work/uv-tools"
  UV_TOOL_BIN_DIR="$work/uv-bin" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 UV_PYTHON=python3)
if "${uvenv[@]}" "$TOOLS/bin/uv" tool install --no-index "$WHEEL" >"$work/uvtool.log" 2>&1; then
  pass "uv tool install $(basename "$WHEEL")"
else fail "uv tool install: $(tail -c 600 "$work/uvtool.log")"; fi
v=$("${clean[@]}" "$work/uv-bin/gpudoctor" --version 2>&1 | head -1 || true)
case "$v" in "gpudoctor $VERSION"*) pass "uv tool: $v" ;; *) fail "uv tool: --version said '$v'" ;; esac
# The tool's own environment holds only gpudoctor: the project's venv (activated) comes first.
rc=0
"${clean[@]}" VIRTUAL_ENV="$proj" "$work/uv-bin/gpudoctor" check --format json --no-smoke \
  >"$work/uvtool.json" 2>/dev/null || rc=$?
is "uv tool: check exit status" "$rc" 1
is "uv tool: first environment (VIRTUAL_ENV)" "$(json "$work/uvtool.json" "$first_env['prefix']")" "$proj"
is "uv tool: its torch" "$(json "$work/uvtool.json" "$first_env['torch']['version']")" "2.1.0+cu121"
if grep -q "uv-tools" <<<"$(json "$work/uvtool.json" "$envs")"; then fail "uv tool: its own environment was judged"
else pass "uv tool: its own environment is not judged"; fi
rc=0
"${uvenv[@]}" VIRTUAL_ENV="$proj" "$TOOLS/bin/uv" tool run --no-index --from "$WHEEL" \
  gpudoctor check --format json --no-smoke >"$work/uvx.json" 2>"$work/uvx.err" || rc=$?
is "uvx gpudoctor check: exit status" "$rc" 1
is "uvx: first environment (VIRTUAL_ENV)" "$(json "$work/uvx.json" "$first_env['prefix']")" "$proj"
if grep -q "uv-cache" <<<"$(json "$work/uvx.json" "$envs")"; then fail "uvx: its own environment was judged: $(json "$work/uvx.json" "$envs")"
else pass "uvx: its own environment is not judged"; fi
v=$("${uvenv[@]}" "$TOOLS/bin/uvx" --no-index --from "$WHEEL" gpudoctor --version 2>/dev/null | head -1 || true)
case "$v" in "gpudoctor $VERSION"*) pass "uvx: $v" ;; *) fail "uvx: --version said '$v'" ;; esac

# --- the other targets' wheels -----------------------------------------------------------------
unpack() { # WHEEL DEST: the wheel's binary
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"
  ls "$2"/gpudoctor-"$VERSION".data/scripts/gpudoctor*
}
if [ ${#arm[@]} -eq 1 ]; then
  echo "== $(basename "${arm[0]}")"
  IFS='|' read -r tags _ _ _ _ scripts <<<"$(wheel_meta "${arm[0]}")"
  is "aarch64 wheel tags" "$tags" "py3-none-manylinux2014_aarch64,py3-none-manylinux_2_17_aarch64"
  bin=$(unpack "${arm[0]}" "$work/arm")
  chmod +x "$bin"
  # One build per target: the wheel carries the binary scripts/test-aarch64.sh ran.
  built=${CARGO_TARGET_DIR:-target}/aarch64-unknown-linux-gnu/release/gpudoctor
  if [ -f "$built" ]; then
    if cmp -s "$bin" "$built"; then pass "aarch64 wheel's binary is $built"
    else fail "aarch64 wheel's binary differs from $built"; fi
  fi
  if command -v qemu-aarch64-static >/dev/null 2>&1; then
    out=$(env -i PATH=/usr/bin:/bin QEMU_LD_PREFIX=/usr/aarch64-linux-gnu NO_COLOR=1 \
      qemu-aarch64-static "$bin" explain --json "RuntimeError: CUDA error: out of memory" 2>&1 || true)
    is "aarch64 wheel under QEMU: explain's first category" \
      "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["matches"][0]["category"])' "$out" 2>/dev/null || echo "$out" | head -c 300)" \
      gpu_memory_exhausted
  else
    echo "skip  aarch64 wheel under QEMU: no qemu-aarch64-static (scripts/test-aarch64.sh installs it)"
  fi
else
  echo "skip  no aarch64 wheel in $DIR (scripts/test-aarch64.sh or scripts/release.sh --arch aarch64 builds one)"
fi
if [ ${#win[@]} -eq 1 ]; then
  echo "== $(basename "${win[0]}")"
  IFS='|' read -r tags _ _ _ _ scripts <<<"$(wheel_meta "${win[0]}")"
  is "win_amd64 wheel tags" "$tags" "py3-none-win_amd64"
  is "win_amd64 wheel scripts" "$scripts" gpudoctor.exe
  exe=$(unpack "${win[0]}" "$work/win")
  # The Wine prefix scripts/test-windows.sh makes (with its stand-in bcryptprimitives.dll).
  export WINEPREFIX=${WINEPREFIX:-$ROOT/${CARGO_TARGET_DIR:-target}/wine} WINEDEBUG=-all
  if command -v wine >/dev/null 2>&1 && [ -f "$WINEPREFIX/.gpudoctor-v1" ]; then
    export WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
    out=$(wine "$exe" --version 2>&1 | tr -d '\r' | head -1 || true)
    case "$out" in "gpudoctor $VERSION"*) pass "win_amd64 wheel under Wine: $out" ;; *) fail "under Wine: --version said '$out'" ;; esac
    out=$(wine "$exe" explain 0xC0000409 2>&1 | tr -d '\r' || true)
    if grep -q STATUS_STACK_BUFFER_OVERRUN <<<"$out"; then pass "win_amd64 wheel under Wine: explain 0xC0000409"
    else fail "under Wine: explain said $(head -c 300 <<<"$out")"; fi
    wineserver -k >/dev/null 2>&1 || true
  else
    echo "skip  win_amd64 wheel under Wine: no wine or no $WINEPREFIX (scripts/test-windows.sh makes them)"
  fi
else
  echo "skip  no win_amd64 wheel in $DIR (scripts/release.sh --arch windows --wheel-only builds one)"
fi
echo "   checks: $(( $(date +%s) - t1 )) s"
exit $failed
