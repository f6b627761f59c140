#!/usr/bin/env bash
# Installs everything reactor-host's scripts need on a fresh Debian machine with rustup: each
# purpose's part in turn, each idempotent (a step runs only if what it installs is missing).
#   scripts/setup-demo.sh        ./run.sh (the wasm32-wasip2 target, python3)
#   scripts/setup-languages.sh   components in Python, JavaScript and C
#   scripts/setup-tests.sh       scripts/test.sh (the demo's and the languages' parts, etcd, ...)
#   scripts/setup-bench.sh       scripts/bench.sh
#   scripts/setup-containers.sh  deploy/ (podman, podman-compose, debootstrap)
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/setup-tests.sh"
"$scripts/setup-bench.sh"
"$scripts/setup-containers.sh"
