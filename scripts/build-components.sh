#!/usr/bin/env bash
# Builds every guest and example component for wasm32-wasip2 into OUT/<folder-name>.wasm.
#
# usage: scripts/build-components.sh OUT
#
# Each crate is built on its own (`-p`): a component targets one world, and building the
# controller and descriptor crates together would unify reactor-sdk's world features.
# CARGO_TARGET_DIR is honoured (default: <repo>/target/guests), shared by all crates.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
target="${CARGO_TARGET_DIR:-$root/target/guests}"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2 >&2
fi

# build WORKSPACE_DIR CRATE_FOLDER...
build() {
    local workspace="$1"
    shift
    for folder in "$@"; do
        local crate
        crate="$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$workspace/$folder/Cargo.toml" | head -n1)"
        (cd "$workspace" && CARGO_TARGET_DIR="$target" cargo build --quiet --release \
            --target wasm32-wasip2 -p "$crate")
        cp "$target/wasm32-wasip2/release/${crate//-/_}.wasm" "$out/$folder.wasm"
        echo "$out/$folder.wasm"
    done
}

# Guests: every folder of guests/ with a Cargo.toml.
guests=()
for dir in "$root"/guests/*/; do
    [ -f "$dir/Cargo.toml" ] && guests+=("$(basename "$dir")")
done
build "$root/guests" "${guests[@]}"

# Examples: every folder of examples/ holding a Rust crate (other languages add theirs here).
if [ -f "$root/examples/Cargo.toml" ]; then
    examples=()
    for dir in "$root"/examples/*/; do
        [ -f "$dir/Cargo.toml" ] && examples+=("$(basename "$dir")")
    done
    [ ${#examples[@]} -gt 0 ] && build "$root/examples" "${examples[@]}"
fi
