#!/usr/bin/env bash
# Fuzzes what reactor-host reads from users and clients with cargo-fuzz (libFuzzer): the
# YAML/JSON object documents (`documents`) and the HTTP API's wire types (`wire`), each for
# a fixed time. `--sanitizer none` builds on the stable toolchain (the address sanitizer
# would need nightly, which the setup cannot install); Rust's own checks, debug assertions
# and overflow checks included, still turn any bad input into a crash that fails the run.
#
# usage: scripts/fuzz.sh [SECONDS PER TARGET, default 30]
# The build goes to $CARGO_TARGET_DIR/fuzz (default target/fuzz): its first build compiles
# the host and its dependencies once more with libFuzzer's instrumentation. The corpus grows
# in fuzz/corpus/ (not committed); a crashing input is kept in fuzz/artifacts/ and printed
# with the command that replays it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# shellcheck source=tools.sh
. scripts/tools.sh
seconds="${1:-30}"
target_dir="${CARGO_TARGET_DIR:-$root/target}/fuzz"
PATH="$(dirname "$CARGO_FUZZ"):$PATH"
export PATH
status=0
# libFuzzer prints a line per new input; that goes to a log beside the build, and only the
# final figures (or, on a crash, the log's end with the replay command) are printed here.
mkdir -p "$target_dir"
for target in documents wire; do
    echo "fuzz: $target for ${seconds}s"
    log="$target_dir/$target.log"
    if cargo fuzz run --fuzz-dir fuzz --sanitizer none --target-dir "$target_dir" "$target" -- \
        -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
        grep -a -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' "$log" || true
    else
        status=1
        echo "fuzz: $target failed (whole output in $log):"
        tail -n 40 "$log"
    fi
done
exit "$status"
