#!/usr/bin/env bash
# Keeps a shared cargo target folder from filling the disk: cargo never deletes an artifact it
# has replaced, so every change of a dependency, feature or test leaves its old libraries and
# test binaries behind. This always drops what is rebuilt anyway (incremental state, object
# files of interrupted builds, tests' scratch folders) and, in each profile's deps/, all but
# the newest two builds of each test binary and the newest three of each of the project's own
# libraries (every edit rebuilds them). Other libraries are pruned only when the disk runs low
# (under PRUNE_BELOW_GB free, 20 by default), to the newest eight builds of each name: several
# versions, feature sets and check builds of one crate share a name, so a prune may cost a
# rebuild of some, which is why it waits for need. What it removes, cargo builds again if a
# later command needs it: its fingerprints notice a missing output.
#   scripts/prune-target.sh [TARGET_DIR]     (default: $CARGO_TARGET_DIR, then ./target)
set -euo pipefail
target="${1:-${CARGO_TARGET_DIR:-$(dirname "$0")/../target}}"
[[ -d "$target" ]] || exit 0
before="$(du -sm "$target" | cut -f1)"
free_gb="$(df -BG --output=avail "$target" | tail -n 1 | tr -dc 0-9)"
libraries=0
if ((free_gb < ${PRUNE_BELOW_GB:-20})); then libraries=8; fi
# Tests' scratch space, apart from the test guests' own target folder (testkit/src/components.rs).
find "$target/tmp" -mindepth 1 -maxdepth 1 ! -name guests-target -exec rm -rf {} + 2>/dev/null || true
find "$target" -maxdepth 5 -type d -name deps | while read -r deps; do
    rm -rf "$(dirname "$deps")/incremental"
    find "$deps" -maxdepth 1 -type f -name '*.rcgu.o' -delete
    # Newest first, as "<group> <file>": the group is the name without cargo's hash, with the
    # extension (libfoo.rlib, libfoo.rmeta, libfoo.so, or a test binary's name).
    find "$deps" -maxdepth 1 -type f ! -name '*.d' -printf '%T@ %f\n' | sort -rn | cut -d' ' -f2 |
        sed -E 's/^(.*)-[0-9a-f]{16}(\.[a-z]+)?$/\1\2 &/' |
        awk -v deps="$deps" -v libraries="$libraries" '{
            keep = ($1 ~ /^libreactor_/) ? 3 : ($1 ~ /\./) ? libraries : 2
            if (NF == 2 && keep > 0 && ++seen[$1] > keep) print deps "/" $2
        }' | while read -r stale; do
        rm -f -- "$stale"
    done
done
after="$(du -sm "$target" | cut -f1)"
echo "prune-target: $target from ${before} MB to ${after} MB (${free_gb} GB were free; libraries pruned: $((libraries > 0)))"
