#!/usr/bin/env bash
# Runs the benchmark scenarios against their same-run baselines, in release mode, and
# writes bench/results/latest.json and docs/src/performance.md (with its PNG plots).
#
# usage: scripts/bench.sh [SCENARIO...] [-- reactor-bench run options]
#   scenarios: store dispatch reload rollout end-to-end fan-out distribution agent-publish agent-apply replicas kvscheduler restart languages
#              memory hardening watches tls kube supply
#   (default: all). Rows of scenarios not named are kept from the previous results file.
#   options, e.g.: --objects 1000 --dispatch-sizes 250,1000,4000 --reloads 100
#                  --rollout-objects 10000 --rollout-rate 200
#                  --restart-objects 100000 --store-scale 1.0 --kv-sizes 1000,10000,100000
#                  --publish-items 50000 --agent-apply-items 10000 --distribution-clients 100,1000 --live-interval-ms 100
#                  --replica-objects 5000 --replica-counts 1,2,3
set -euo pipefail
cd "$(dirname "$0")/.."
scenarios=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    scenarios+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
scripts/setup-bench.sh      # etcd-server (the store's peer), protoc, a font for the plots
target="${CARGO_TARGET_DIR:-target}"
out="$target/bench-components"
scripts/build-components.sh --with-test-guests "$out" >/dev/null
cargo build --release -q -p reactor-bench -p reactor-host
bench="$target/release/reactor-bench"
# The figures are a deployed server's: with RUST_BACKTRACE set, every error a WASI call hands
# a guest captures a Rust backtrace (findings.md, 33).
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
"$bench" run "$out" ${scenarios[@]+"${scenarios[@]}"} "$@"
"$bench" render
