#!/usr/bin/env bash
# The inner loop's fast path: formatting, lints, and every crate's unit tests (no etcd, no
# guest components, no binary started). `scripts/test.sh` runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# `--workspace` keeps the features of the full build, so switching to it rebuilds nothing.
cargo test --workspace --lib "$@"
