#!/usr/bin/env bash
# The gate for a new GPU machine: `gpudoctor check` (with its GPU smoke tests), then
# `gpudoctor stress` for N minutes. Writes JSON and JUnit reports of both to a directory and
# prints one line: why the machine is unfit, or that it passed.
#
#   scripts/provision-gate.sh [--minutes N] [--report-dir DIR] [--policy FILE] [--skip-stress]
#                             [-- EXTRA CHECK ARGS...]
#
#   --minutes N       stress duration (default 5; fractions allowed)
#   --report-dir DIR  where the reports go (default $GPUDOCTOR_REPORT_DIR, else ./gpudoctor-reports):
#                     check.json check.xml stress.json stress.xml, and gate.txt (the line below)
#   --policy FILE     a gpudoctor policy (waivers, thresholds per node class) for both steps
#   GPUDOCTOR         the gpudoctor binary (default: gpudoctor on PATH, else next to this
#                     script, ~/.cargo/bin, /usr/local/bin, target/release)
#
# Exit: 0 fit; 1 unfit (the line says why); 2 gpudoctor itself failed (missing, bad arguments,
# unreadable policy, or an exit it should never give). Stress is not run when check fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
minutes=5
dir=${GPUDOCTOR_REPORT_DIR:-./gpudoctor-reports}
policy=()
skip_stress=0
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=${2:-}; shift 2 ;;
    --report-dir) dir=${2:-}; shift 2 ;;
    --policy) policy=(--policy "${2:-}"); shift 2 ;;
    --skip-stress) skip_stress=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "provision-gate: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The binary: GPUDOCTOR, else PATH, next to this script, ~/.cargo/bin, /usr/local/bin, this
# checkout's target/release.
gd=${GPUDOCTOR:-}
if [ -z "$gd" ]; then
  gd=$(command -v gpudoctor 2>/dev/null)
  for c in "$here/gpudoctor" "${HOME:-/root}/.cargo/bin/gpudoctor" /usr/local/bin/gpudoctor "$here/../target/release/gpudoctor"; do
    if [ -z "$gd" ] && [ -x "$c" ]; then gd=$c; fi
  done
fi
if [ -z "$gd" ] || { [ ! -x "$gd" ] && ! command -v "$gd" >/dev/null 2>&1; }; then
  echo "provision-gate: ERROR: gpudoctor not found${GPUDOCTOR:+ (GPUDOCTOR=$GPUDOCTOR is not an executable)}: looked on PATH, next to this script, in ~/.cargo/bin, /usr/local/bin and target/release. Install it (cargo install --locked --path . in a clone of gpudoctor) or set GPUDOCTOR=/path/to/gpudoctor" >&2
  exit 2
fi
if ! mkdir -p "$dir"; then
  echo "provision-gate: cannot create the report directory $dir" >&2
  exit 2
fi

# finish CODE LINE: print the line, keep it in gate.txt, exit.
finish() {
  printf '%s\n' "$2" | tee "$dir/gate.txt"
  exit "$1"
}

# The extra check arguments that still apply to a replay: not those that choose the input or
# the output (--snapshot, --no-probe, --format, --json).
judging=()
skip_next=0
for a in "${extra[@]}"; do
  if [ "$skip_next" -eq 1 ]; then skip_next=0; continue; fi
  case $a in
    --snapshot|--format) skip_next=1 ;;
    --snapshot=*|--format=*|--no-probe|--json) ;;
    *) judging+=("$a") ;;
  esac
done

# Replays a report in another format (no second probe, no second GPU run).
replay() { # report format [args...]
  local report=$1 format=$2; shift 2
  "$gd" check --snapshot "$report" --format "$format" --color never "${policy[@]}" "$@"
}

# 1. check, with the smoke tests.
"$gd" check --format json "${policy[@]}" "${extra[@]}" >"$dir/check.json" 2>"$dir/check.err"
rc=$?
case $rc in
  0|1) ;;
  *) finish 2 "ERROR: gpudoctor check failed (exit $rc): $(head -c 300 "$dir/check.err" | tr '\n' ' ')" ;;
esac
replay "$dir/check.json" junit "${judging[@]}" >"$dir/check.xml" 2>/dev/null
if [ "$rc" -eq 1 ]; then
  finish 1 "UNFIT (check): $(replay "$dir/check.json" line "${judging[@]}" 2>/dev/null | head -n 1)"
fi
if [ "$skip_stress" -eq 1 ]; then
  finish 0 "FIT: check passed (stress skipped)"
fi

# 2. stress.
"$gd" stress --minutes "$minutes" --format json "${policy[@]}" >"$dir/stress.json" 2>"$dir/stress.err"
rc=$?
case $rc in
  0|1) ;;
  130|143) finish 2 "ERROR: gpudoctor stress was interrupted (exit $rc)" ;;
  *) finish 2 "ERROR: gpudoctor stress failed (exit $rc): $(head -c 300 "$dir/stress.err" | tr '\n' ' ')" ;;
esac
replay "$dir/stress.json" junit --only stress. >"$dir/stress.xml" 2>/dev/null
if [ "$rc" -eq 1 ]; then
  finish 1 "UNFIT (stress): $(replay "$dir/stress.json" line --only stress. 2>/dev/null | head -n 1)"
fi
finish 0 "FIT: check and ${minutes}-minute stress passed"
