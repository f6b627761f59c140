#!/usr/bin/env bash
# The embedded store's start check: how long `serve` takes to listen on a store of N objects
# with and without it, after a clean and after an unclean (kill -9) shutdown.
#
#   bench/store-start-check.sh [BINARY] [OBJECTS] [RUNS]
#
# BINARY defaults to target/release/reactor-host, OBJECTS to 100000, RUNS to 3. Each figure
# is the median of RUNS starts: from the process start to its "listening" line (the store is
# opened, checked if asked, before the server listens). Prints one line per case and the
# ratios. Runs on 127.0.0.1 only and stops every server it starts.
set -euo pipefail

bin=${1:-target/release/reactor-host}
objects=${2:-100000}
runs=${3:-3}
work=$(mktemp -d)
data=$work/data
mkdir -p "$work/components"
trap 'rm -rf "$work"' EXIT

# Starts serve with ARGS; sets $pid and $url, and $took to the milliseconds until it listened.
start() {
    local began line
    began=$(date +%s%N)
    coproc SERVE { exec "$bin" serve --listen 127.0.0.1:0 --data "$data" \
        --components "$work/components" --store-scrub-rate 0 "$@" 2>>"$work/serve.log"; }
    pid=$SERVE_PID
    IFS= read -r line <&"${SERVE[0]}"
    took=$((($(date +%s%N) - began) / 1000000))
    url=${line#reactor-host listening on }
}

# Stops the server cleanly (TERM) and waits for it.
stop() {
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
}

# Kills the server (-9): the next start finds an unclean shutdown.
crash() {
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
}

echo "filling $objects objects..." >&2
start --store-start-check never
token=$(cat "$data/token")
batch=1000
for ((first = 0; first < objects; first += batch)); do
    for ((i = first; i < first + batch && i < objects; i++)); do
        printf 'kind: Policy\nname: p%06d\nlabels: {app: bench, shard: s%d}\nspec: {replicas: %d, image: "registry.local/app:%d"}\n---\n' \
            "$i" $((i % 16)) $((i % 5)) "$i"
    done | "$bin" apply -f - --server "$url" --token "$token" >/dev/null 2>&1
done
stop
echo "store file: $(du -h "$data/store.redb" | cut -f1)" >&2

# The median of the figures given.
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

# Times RUNS starts after the shutdown $1 (clean|unclean) with --store-start-check $2.
measure() {
    local shutdown=$1 check=$2 times=()
    for ((r = 0; r < runs; r++)); do
        if [[ $shutdown == unclean ]]; then
            start --store-start-check never
            crash
        fi
        start --store-start-check "$check"
        times+=("$took")
        stop
    done
    median "${times[@]}"
}

clean_never=$(measure clean never)
clean_always=$(measure clean always)
unclean_never=$(measure unclean never)
unclean_check=$(measure unclean unclean)
echo "objects=$objects runs=$runs binary=$bin"
echo "clean shutdown,   no check:            ${clean_never} ms"
echo "clean shutdown,   --store-start-check always: ${clean_always} ms"
echo "unclean shutdown, no check (redb's recovery only): ${unclean_never} ms"
echo "unclean shutdown, the start check (default):       ${unclean_check} ms"
awk -v a="$clean_always" -v b="$clean_never" -v c="$unclean_check" -v d="$unclean_never" \
    'BEGIN { printf "ratio always/none (clean): %.2f; ratio check/none (unclean): %.2f\n", a / b, c / d }'
