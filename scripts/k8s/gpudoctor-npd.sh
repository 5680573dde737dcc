#!/bin/sh
# node-problem-detector custom plugin: runs `gpudoctor check` and answers in NPD's protocol:
# exit 0 OK, 1 NonOK, 2 Unknown, and one message on stdout of at most 80 characters.
# https://github.com/kubernetes/node-problem-detector/blob/master/docs/custom_plugin_monitor.md
# Settings: GPUDOCTOR (the binary), GPUDOCTOR_CHECK_ARGS (default "--no-smoke --timeout 30").
gd=${GPUDOCTOR:-gpudoctor}
args=${GPUDOCTOR_CHECK_ARGS:---no-smoke --timeout 30}
# shellcheck disable=SC2086  # the arguments are meant to split
line=$("$gd" check --format line --color never $args 2>/dev/null)
rc=$?
short() { printf '%s' "$(printf '%s' "$1" | tr -d '\r\n' | cut -c1-80)"; }
case $rc in
  0) short "gpudoctor: GPUs healthy"; exit 0 ;;
  1) short "gpudoctor: ${line#FAIL: }"; exit 1 ;;
  *) short "gpudoctor failed to run (exit $rc)"; exit 2 ;;
esac
