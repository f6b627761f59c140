#!/usr/bin/env bash
# Builds the components and runs the benchmark scenarios in release mode.
# usage: scripts/bench.sh [OBJECTS]   (objects for the end-to-end scenario, default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out="target/bench-components"
scripts/build-components.sh "$out" >/dev/null
cargo run --release -q -p reactor-bench -- "$out" "$@"
