#!/bin/sh
# node-problem-detector custom plugin: runs `gpudoctor check` and answers in NPD's protocol:
# exit 0 OK, 1 NonOK, 2 Unknown, and one message on stdout of at most 80 characters.
# https://github.com/kubernetes/node-problem-detector/blob/master/docs/custom_plugin_monitor.md
# Settings: GPUDOCTOR (the binary; default: gpudoctor on PATH, else next to this script, else
# ~/.cargo/bin or /usr/local/bin), GPUDOCTOR_CHECK_ARGS (default "--no-smoke --timeout 30").
short() { printf '%s' "$(printf '%s' "$1" | tr -d '\r\n' | cut -c1-80)"; }
# The binary: GPUDOCTOR, else PATH, next to this script, ~/.cargo/bin, /usr/local/bin.
gd=${GPUDOCTOR:-}
if [ -z "$gd" ]; then
  gd=$(command -v gpudoctor 2>/dev/null)
  for c in "$(dirname "$0")/gpudoctor" "${HOME:-/root}/.cargo/bin/gpudoctor" /usr/local/bin/gpudoctor; do
    if [ -z "$gd" ] && [ -x "$c" ]; then gd=$c; fi
  done
fi
if [ -z "$gd" ] || { [ ! -x "$gd" ] && ! command -v "$gd" >/dev/null 2>&1; }; then
  # The whole advice on stderr (NPD logs it); the 80-character message on stdout.
  echo "gpudoctor-npd: gpudoctor not found${GPUDOCTOR:+ (GPUDOCTOR=$GPUDOCTOR is not an executable)}: put it on PATH or next to this script (cargo install --locked --path . in a clone of gpudoctor), or set GPUDOCTOR" >&2
  short "gpudoctor not found: put it on PATH or set GPUDOCTOR"
  exit 2
fi
args=${GPUDOCTOR_CHECK_ARGS:---no-smoke --timeout 30}
# shellcheck disable=SC2086  # the arguments are meant to split
line=$("$gd" check --format line --color never $args 2>/dev/null)
rc=$?
case $rc in
  0) short "gpudoctor: GPUs healthy"; exit 0 ;;
  1) short "gpudoctor: ${line#FAIL: }"; exit 1 ;;
  *) short "gpudoctor failed to run (exit $rc)"; exit 2 ;;
esac
