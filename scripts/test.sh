#!/usr/bin/env bash
# The project's test command: sets up what is missing, then runs every test of the workspace
# (unit, store, property, and the integration tests that drive the real binary).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --no-fail-fast "$@"
