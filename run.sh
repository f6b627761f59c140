#!/usr/bin/env bash
# Sets up a fresh machine and runs the server with the example components in ./components.
# Extra arguments go to `reactor-host serve`, e.g. ./run.sh --listen 127.0.0.1:7900
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
if [ -x scripts/build-components.sh ] && [ -d examples ] && ls examples/*/Cargo.toml >/dev/null 2>&1; then
    scripts/build-components.sh components
fi
exec cargo run -p reactor-host -- serve "$@"
