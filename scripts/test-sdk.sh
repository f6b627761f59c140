#!/usr/bin/env bash
# The SDKs' unit tests and the examples' reactor unit tests, each in its language's own test
# runner against the SDK's in-process fake host (run by scripts/test.sh; needs
# scripts/setup.sh): Rust natively with cargo (the examples are a workspace of their own, and
# one run builds one world, so the controller crates only), Python with unittest in the
# tools venv (one process per folder: each app is a module named `app`), JavaScript with
# node --test. The SDK crate's own tests run with `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools.sh
. scripts/tools.sh
status=0
cargo test --quiet --manifest-path examples/Cargo.toml -p policy-rust -p tenant-rust || status=$?
for folder in sdk/python/tests examples/policy-python examples/tenant-python; do
    echo "python unittest: $folder"
    PYTHONPATH=sdk/python "$PY_VENV/bin/python" -m unittest discover -s "$folder" || status=$?
done
node --test sdk/js/test/ examples/policy-js/ || status=$?
exit "$status"
