#!/usr/bin/env bash
# Tests scripts/slurm-healthcheck.sh against a real Slurm: installs Debian's slurm-wlm and munge
# when missing (root, as in CI), starts munged, slurmctld and slurmd on this machine with a
# throwaway configuration (own ports, own state directory, no cgroups), and checks that:
#   1. a failing check (a recorded no-driver snapshot) drains the node with gpudoctor's reason;
#   2. a passing check (a recorded healthy snapshot) does not resume the drained node;
#   3. on a resumed node, a passing check leaves it IDLE;
#   4. a gpudoctor failure (unreadable snapshot) leaves the node alone and exits 2.
# Everything it started is stopped at the end. Prints "N passed, M failed"; exits 1 on a failure.
#
#   scripts/test-slurm.sh [GPUDOCTOR_BINARY]     # default target/debug/gpudoctor (built if missing)
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
bin=${1:-target/debug/gpudoctor}
[ -x "$bin" ] || cargo build --quiet || exit 1
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; } \
    || { echo "test-slurm: cannot install slurm-wlm and munge"; exit 1; }
fi

t=$(mktemp -d /tmp/gpudoctor-slurm.XXXXXX)
node=$(hostname -s)
cleanup() {
  for f in slurmd slurmctld munged; do
    [ -f "$t/$f.pid" ] && kill "$(cat "$t/$f.pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$t"
}
trap cleanup EXIT
mkdir -p "$t/state" "$t/spool"
head -c 1024 /dev/urandom >"$t/munge.key"
chmod 600 "$t/munge.key"
munged --force --socket="$t/munge.sock" --key-file="$t/munge.key" --pid-file="$t/munged.pid" \
  --log-file="$t/munged.log" --seed-file="$t/munged.seed" 2>/dev/null
cat >"$t/slurm.conf" <<EOF
ClusterName=gpudoctortest
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$t/munge.sock
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
NodeName=$node CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$t/slurm.conf
slurmctld || { echo "test-slurm: slurmctld did not start"; cat "$t/slurmctld.log"; exit 1; }
slurmd || { echo "test-slurm: slurmd did not start"; cat "$t/slurmd.log"; exit 1; }
state() { scontrol show node "$node" 2>/dev/null | sed -n 's/^ *State=\([^ ]*\).*/\1/p'; }
# Drain and resume live in slurmctld; slurmd may stop answering in a container (NOT_RESPONDING),
# which this test does not judge.
drained() { case "$(state)" in *DRAIN*) return 0 ;; *) return 1 ;; esac; }
idle() { case "$(state)" in IDLE*) drained && return 1; return 0 ;; *) return 1 ;; esac; }
reason() { scontrol show node "$node" 2>/dev/null | sed -n 's/^ *Reason=//p'; }
for _ in $(seq 50); do
  idle && break
  sleep 0.2
done

passed=0
failed=0
expect() { # name condition-result
  if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi
}
hc() { # snapshot -> exit code of the health check
  GPUDOCTOR=$bin GPUDOCTOR_CHECK_ARGS="--snapshot $1" SLURMD_NODENAME=$node \
    "$root/scripts/slurm-healthcheck.sh" 2>/dev/null
}
bad=$root/tests/fixtures/snapshots/debian12-docker-nodriver.json
good=$root/tests/fixtures/snapshots/synthetic-2xh100.json

idle; expect "the node starts IDLE (state $(state))" $?
hc "$bad"; rc=$?
[ $rc -eq 0 ] && drained; expect "a failing check drains the node (exit $rc, state $(state))" $?
case "$(reason)" in
  "gpudoctor: This container was started without GPU access; No NVIDIA driver found"*) r=0 ;;
  *) r=1 ;;
esac
expect "the drain reason is gpudoctor's ($(reason))" $r
hc "$good"; rc=$?
[ $rc -eq 0 ] && drained; expect "a passing check does not resume a drained node (state $(state))" $?
scontrol update nodename="$node" state=resume
sleep 0.5
hc "$good"; rc=$?
[ $rc -eq 0 ] && idle; expect "a passing check leaves a resumed node IDLE (state $(state))" $?
hc "/nonexistent/snapshot.json"; rc=$?
[ $rc -eq 2 ] && idle; expect "a gpudoctor failure exits 2 and leaves the node alone (exit $rc, state $(state))" $?

echo "slurm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
