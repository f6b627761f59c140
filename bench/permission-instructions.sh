#!/usr/bin/env bash
# Instructions per object of the supply scenario's permission row (issue 37: permission
# checks add at most 2 % to the dispatch row), counted by valgrind (cachegrind, no cache
# simulation) rather than timed: a count is not moved by other processes on the machine.
# Each side runs at N and 2N objects; the difference over N is the per-object count, free
# of the fixed costs (engine start, load from the warm compile cache).
#
# usage: bench/permission-instructions.sh COMPONENTS [N]
#   COMPONENTS: scripts/build-components.sh OUT; N: objects (default 500).
#   Needs the release reactor-bench and reactor-host (cargo build --release -p reactor-bench
#   -p reactor-host) and valgrind (scripts/setup-bench.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
components=${1:?usage: bench/permission-instructions.sh COMPONENTS [N]}
n=${2:-500}
target="${CARGO_TARGET_DIR:-target}"
bench="$target/release/reactor-bench"
export PATH="$target/release:$PATH"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
# Warm: each version compiled into the cache, so no run under valgrind compiles.
"$bench" permission-once "$components" --cache "$cache" --objects 10 >/dev/null
"$bench" permission-once "$components" --cache "$cache" --objects 10 --declared >/dev/null

count() { # objects, extra flag: prints the instructions the run executed
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$bench" permission-once "$components" --cache "$cache" --objects "$1" ${2:-} 2>&1 >/dev/null |
        sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
declare -A per
for side in undeclared declared; do
    flag=""
    [ "$side" = declared ] && flag=--declared
    one=$(count "$n" "$flag")
    two=$(count "$((2 * n))" "$flag")
    per[$side]=$(( (two - one) / n ))
    echo "$side: $one instructions at $n objects, $two at $((2 * n)): ${per[$side]} per object"
done
awk -v d="${per[declared]}" -v u="${per[undeclared]}" \
    'BEGIN { printf "declared / undeclared, instructions per object: %.4f\n", d / u }'
