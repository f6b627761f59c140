#!/usr/bin/env bash
# The project's test command: sets up what is missing, then runs every test of the workspace
# (unit, store, property, and the integration tests that drive the real binary), then the
# suites that drive a server once more on etcd (the backend matrix, tests/common/mod.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
# Each server these suites start gets an etcd of its own; a failure of the first run does
# not hide what this one finds.
REACTOR_TEST_STORE=etcd cargo test -p reactor-host --no-fail-fast \
    --test cli_bad_input --test cli_flow --test engine_wasm --test agents \
    --test components_api --test agent_scheduler "$@" || status=$?
# The first run of a new user: ./run.sh from a clean clone, its demo checked through the CLI.
scripts/test-first-run.sh || status=$?
exit "$status"
