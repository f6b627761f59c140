#!/usr/bin/env bash
# Instructions per object of the supply scenario's permission row (issue 37: permission
# checks add at most 2 % to the dispatch row), counted by valgrind rather than timed: a
# count is not moved by other processes on the machine.
#
# 1. The check itself: callgrind counts only inside `HostState::permit` (every `store` and
#    `nimbus` call passes there, declared or not): exact, the same in every run.
# 2. The whole pipeline per object (cachegrind, no cache simulation), each side at N and 2N
#    objects, the difference over N (free of the fixed costs: engine start, load from the
#    warm compile cache); one tokio worker. Lost races at commit vary from run to run, so
#    this count moves ~10 %: the medians of ROUNDS rounds, sides alternating.
# The figure: (pipeline + the check's extra instructions) / pipeline, per object.
#
# usage: bench/permission-instructions.sh COMPONENTS [N] [ROUNDS]
#   COMPONENTS: scripts/build-components.sh OUT; N: objects (default 1000); ROUNDS: 5.
#   Needs the release reactor-bench and reactor-host (cargo build --release -p reactor-bench
#   -p reactor-host) and valgrind (scripts/setup-bench.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
components=${1:?usage: bench/permission-instructions.sh COMPONENTS [N] [ROUNDS]}
n=${2:-1000}
rounds=${3:-5}
target="${CARGO_TARGET_DIR:-target}"
bench="$target/release/reactor-bench"
export PATH="$target/release:$PATH" TOKIO_WORKER_THREADS=1
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
per_object() { # extra flag: prints one round's instructions per object
    local one two
    one=$(count "$n" "${1:-}")
    two=$(count "$((2 * n))" "${1:-}")
    echo $(( (two - one) / n ))
}
permit() { # extra flag: prints the instructions spent in `HostState::permit` at N objects
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*HostState*::permit' \
        "$bench" permission-once "$components" --cache "$cache" --objects "$n" ${1:-} 2>&1 >/dev/null |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
pu=$(permit)
pd=$(permit --declared)
extra=$(awk -v d="$pd" -v u="$pu" -v n="$n" 'BEGIN { printf "%.1f", (d - u) / n }')
echo "in HostState::permit at $n objects: undeclared $pu, declared $pd instructions: $extra more per object declared"
undeclared=()
declared=()
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then
        u=$(per_object); d=$(per_object --declared)
    else
        d=$(per_object --declared); u=$(per_object)
    fi
    undeclared+=("$u")
    declared+=("$d")
    awk -v r="$round" -v d="$d" -v u="$u" \
        'BEGIN { printf "round %d: undeclared %d, declared %d instructions per object (%.4f)\n", r, u, d, d / u }'
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mu=$(median "${undeclared[@]}")
md=$(median "${declared[@]}")
awk -v d="$md" -v u="$mu" -v n="$n" -v r="$rounds" \
    'BEGIN { printf "pipeline, medians over %d rounds (N = %d): undeclared %d, declared %d instructions per object (%.4f, within the spread of the rounds)\n", r, n, u, d, d / u }'
awk -v u="$mu" -v e="$extra" \
    'BEGIN { printf "permission checks, per object: (%d + %.1f) / %d = %.5f\n", u, e, u, (u + e) / u }'
