#!/usr/bin/env bash
# The project's test command: sets up what is missing, then runs every test of the workspace
# (unit, store, property, the in-process integration tests of host/tests/inproc and those
# that drive the real binary, tests/binary), the SDKs' and the examples' unit tests in each
# language's own runner (scripts/test-sdk.sh), then the suites of tests/binary that drive a
# server once more on etcd (the backend matrix, testkit/src/host.rs), then fuzzes the HTTP API
# from its OpenAPI document and the document parser and wire types with cargo-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
# The SDKs' fake hosts and the examples' unit tests, in Rust, Python and JavaScript.
scripts/test-sdk.sh || status=$?
# The etcd matrix: these modules of the one binary-driving test binary, by filter. Each
# server they start gets an etcd of its own; a failure of the first run does not hide what
# this one finds. `--workspace` keeps the features of the build above, so nothing is rebuilt.
REACTOR_TEST_STORE=etcd cargo test --workspace --no-fail-fast --test binary "$@" -- \
    agent_scheduler:: agents:: cli_bad_input:: cli_flow:: cli_objects:: components_api:: \
    engine_wasm:: harden:: openapi:: ownership:: reconcile_commit:: status_api:: \
    || status=$?
# Components built against reactor:host@0.1.0 still behave as before: the agents suite again
# with the Policy reactor kept from that version (tests/fixtures/reactor-host-0.1.0/).
REACTOR_TEST_POLICY=0.1.0 cargo test --workspace --no-fail-fast --test binary "$@" -- agents:: \
    || status=$?
# The HTTP API fuzzed from its OpenAPI document (schemathesis, a fixed budget of cases).
scripts/fuzz-api.sh || status=$?
# The document parser and wire types under libFuzzer (cargo-fuzz), 30 s per target.
scripts/fuzz.sh 30 || status=$?
# The first run of a new user: ./run.sh from a clean clone, its demo checked through the CLI.
scripts/test-first-run.sh || status=$?
exit "$status"
