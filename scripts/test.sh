#!/usr/bin/env bash
# The project's test command: sets up what is missing, then runs every test of the workspace
# (unit, store, property, the in-process integration tests of host/tests/inproc and those
# that drive the real binary, host/tests/binary), the documentation site built with its links
# checked, the SDKs' and the examples' unit tests in each language's own runner
# (scripts/test-sdk.sh), then the suites of host/tests/binary that drive a
# server once more on etcd (the backend matrix, testkit/src/host.rs), then fuzzes the HTTP API
# from its OpenAPI document and the document parser and wire types with cargo-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-tests.sh
# Each step's output is also kept in a log; at the end the failed steps and the names of
# their failing tests are printed again, so the last lines of a long run say what failed.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
failed=()
step() {
    local name="$1"
    shift
    if ! "$@" 2>&1 | tee "$logs/$name.log"; then failed+=("$name"); fi
}
step workspace cargo test --workspace --no-fail-fast "$@"
# The documentation site: mdBook builds it (into a scratch folder), and its internal links
# lead somewhere (the link check of host/tests/binary/docs/, also run by the step above).
# shellcheck source=tools.sh
. scripts/tools.sh
step docs bash -c '"$1" build docs --dest-dir "$2/book" && cargo test --workspace --test binary -- docs::links' \
    docs "$MDBOOK" "$logs"
# The SDKs' fake hosts and the examples' unit tests, in Rust, Python and JavaScript.
step sdk scripts/test-sdk.sh
# The etcd matrix: the suites of host/tests/binary/both_stores/ (the one list) again, by filter.
# Each server they start gets an etcd of its own, over TLS with a client certificate
# (REACTOR_TEST_STORE=etcd-plain runs them on plain http); a failure of the first run does not hide
# what this one finds. `--workspace` keeps the features of the build above, so nothing is
# rebuilt.
step etcd env REACTOR_TEST_STORE=etcd cargo test --workspace --no-fail-fast --test binary "$@" -- \
    both_stores::
# Components built against reactor:host@0.1.0 still behave as before: the agents suite again
# with the Policy reactor kept from that version (testkit/fixtures/reactor-host-0.1.0/).
step policy-0.1.0 env REACTOR_TEST_POLICY=0.1.0 \
    cargo test --workspace --no-fail-fast --test binary "$@" -- agents::
# The HTTP API fuzzed from its OpenAPI document (schemathesis, a fixed budget of cases).
step fuzz-api scripts/fuzz-api.sh
# The document parser and wire types under libFuzzer (cargo-fuzz), 30 s per target.
step fuzz scripts/fuzz.sh 30
# The first run of a new user: ./run.sh from a clean clone, its demo checked through the CLI.
step first-run scripts/test-first-run.sh
if ((${#failed[@]} == 0)); then
    echo "test.sh: every step passed"
    exit 0
fi
echo "test.sh: failed: ${failed[*]}"
for name in "${failed[@]}"; do
    echo "--- $name"
    grep -a -E '^test .* \.\.\. FAILED$|panicked at|^FAIL|^not ok|^error: ' "$logs/$name.log" | head -n 40 || true
    echo "(last lines)"
    tail -n 15 "$logs/$name.log"
done
exit 1
