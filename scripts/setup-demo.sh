#!/usr/bin/env bash
# What ./run.sh needs besides cargo: the wasm32-wasip2 target its two components (Rust) are
# built for, and python3, with which it reads the CLI's JSON. Idempotent; the demo's binary
# is built without etcd, so no protoc either.
set -euo pipefail
scripts="$(dirname "$0")"
# shellcheck source=setup-lib.sh
. "$scripts/setup-lib.sh"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi
missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
apt_install ${missing[@]+"${missing[@]}"}
echo "setup-demo: rust $(rustc --version | cut -d' ' -f2), wasm32-wasip2, $(python3 --version)"
