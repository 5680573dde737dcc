#!/usr/bin/env bash
# The project's test command: installs the real CUDA libraries the tests probe (from PyPI,
# into .venv-test; a no-op when already there), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-setup.sh
cargo test "$@"
