#!/usr/bin/env bash
# The project's test command: installs the real CUDA libraries the tests probe (from PyPI,
# into .venv-test; a no-op when already there), then runs every test of the workspace (gpudoctor,
# the PTX interpreter and the stand-in driver crates), and ends with one line
# that adds up every test binary: "tests: N passed, N failed, N skipped".
#
# Disk: target/ grows to about 2 GB (the integration tests are one binary, tests/it, linked
# once); `cargo clean` frees it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-setup.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace "$@" | tee "$log"
status=${PIPESTATUS[0]}
set -e
# "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 3 filtered out; ..."
awk '/^test result:/ {
       for (i = 1; i <= NF; i++) {
         if ($(i+1) ~ /^passed;?$/) p += $i
         if ($(i+1) ~ /^failed;?$/) f += $i
         if ($(i+1) ~ /^ignored;?$/) s += $i
       }
       n++
     }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$status"
