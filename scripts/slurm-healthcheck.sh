#!/usr/bin/env bash
# Slurm HealthCheckProgram: runs `gpudoctor check` and drains this node with gpudoctor's reason
# when the node is unfit. It never resumes a node: a drained node comes back only when a person
# (or the site's own automation) runs `scontrol update nodename=NODE state=resume`.
#
# slurm.conf:
#   HealthCheckProgram=/usr/local/sbin/gpudoctor-slurm-healthcheck
#   HealthCheckInterval=600
#   HealthCheckNodeState=IDLE,CYCLE     # check idle nodes, so the smoke tests never meet a job
#
# Settings, from the environment or /etc/default/gpudoctor (sourced when it exists):
#   GPUDOCTOR             the binary (default: gpudoctor on PATH, else next to this script, else
#                         ~/.cargo/bin/gpudoctor, else /usr/local/bin/gpudoctor)
#   GPUDOCTOR_CHECK_ARGS  arguments for check (default: "--no-smoke --timeout 30"; add
#                         "--policy /etc/gpudoctor/policy.yaml", "--expect-gpus 8", ...)
#   SLURMD_NODENAME       this node's Slurm name (slurmd sets it; default: hostname -s)
#
# Exit: 0 healthy or drained as asked; 1 the drain itself failed; 2 gpudoctor failed (the node
# is left as it is, and the error goes to syslog and stderr).
set -u
[ -r /etc/default/gpudoctor ] && . /etc/default/gpudoctor
read -r -a args <<<"${GPUDOCTOR_CHECK_ARGS:---no-smoke --timeout 30}"
node=${SLURMD_NODENAME:-$(hostname -s)}
scontrol=${SCONTROL:-scontrol}

log() {
  echo "gpudoctor-healthcheck: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t gpudoctor-healthcheck -- "$*"
  return 0
}

# The binary: GPUDOCTOR, else PATH, next to this script, ~/.cargo/bin, /usr/local/bin.
find_gpudoctor() {
  if [ -n "${GPUDOCTOR:-}" ]; then
    [ -x "$GPUDOCTOR" ] || command -v "$GPUDOCTOR" >/dev/null 2>&1 || return 1
    printf '%s' "$GPUDOCTOR"; return 0
  fi
  command -v gpudoctor 2>/dev/null && return 0
  for c in "$(dirname "$0")/gpudoctor" "${HOME:-/root}/.cargo/bin/gpudoctor" /usr/local/bin/gpudoctor; do
    if [ -x "$c" ]; then printf '%s' "$c"; return 0; fi
  done
  return 1
}
if ! gd=$(find_gpudoctor); then
  log "gpudoctor not found${GPUDOCTOR:+ (GPUDOCTOR=$GPUDOCTOR is not an executable)}: looked on PATH, next to this script, in ~/.cargo/bin and /usr/local/bin. Install it (in a clone of gpudoctor: cargo install --locked --path . && sudo cp ~/.cargo/bin/gpudoctor /usr/local/bin/) or set GPUDOCTOR=/path/to/gpudoctor in /etc/default/gpudoctor; the node is left as it is"
  exit 2
fi

line=$("$gd" check --format line --color never "${args[@]}" 2>/tmp/gpudoctor-healthcheck.err)
rc=$?
case $rc in
  0)
    exit 0 ;;
  1)
    # Slurm keeps the reason as text; keep it short and on one line.
    reason="gpudoctor: ${line#FAIL: }"
    reason=$(printf '%s' "$reason" | tr -d '\r\n' | cut -c1-200)
    if "$scontrol" update nodename="$node" state=drain reason="$reason"; then
      log "drained $node: $reason"
      exit 0
    fi
    log "could not drain $node ($reason)"
    exit 1 ;;
  *)
    log "gpudoctor check failed (exit $rc): $(head -c 300 /tmp/gpudoctor-healthcheck.err | tr '\n' ' ')"
    exit 2 ;;
esac
