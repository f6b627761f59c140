#!/usr/bin/env bash
# What scripts/bench.sh needs: the demo's and the component languages' parts (the languages
# scenario builds every example), etcd (the store's peer) and protoc (etcd-client), and a
# TrueType font for the plots (drawn without fontconfig), and valgrind (instruction counts).
# Idempotent.
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/setup-demo.sh"
"$scripts/setup-languages.sh"
# shellcheck source=setup-lib.sh
. "$scripts/setup-lib.sh"

missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind) # bench/permission-instructions.sh
apt_install ${missing[@]+"${missing[@]}"}
echo "setup-bench: $(etcd --version 2>/dev/null | head -n1), $(protoc --version), DejaVu Sans"
