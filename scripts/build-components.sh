#!/usr/bin/env bash
# Builds every example component into OUT/<folder-name>.wasm: Rust crates with
# `crate-type = ["cdylib"]` for wasm32-wasip2 (library crates they share are skipped),
# Python apps with componentize-py, JavaScript with componentize-js.
#
# usage: scripts/build-components.sh [--with-test-guests] OUT [EXAMPLE...]
#
# EXAMPLE...: only these folders of examples/ (default: all of them).
# --with-test-guests: also the test guests of guests/ (misbehave, bad-describe, ...: Rust
# crates and Python apps), for the test harness and the benchmarks, which build into a
# folder of their own under the target folder. Test guests are built to fail, trap and
# misbehave: never build them into a folder a server or an agent serves (./run.sh serves
# demo/components and demo/descriptors only).
#
# Python and JavaScript builds take seconds to tens of seconds, so each output carries a
# stamp (OUT/.<name>.inputs) with the sha256 of everything it was built from (its folder,
# sdk/python or sdk/js, wit/, the tool version); an output whose stamp matches is kept.
# Content hashes, not mtimes: a fresh clone (CI) has new mtimes but the same content.
# Tools: scripts/setup.sh installs componentize-py; componentize-js is installed by
# `npm ci` from examples/policy-js/package-lock.json into a cache folder keyed by the
# lockfile's hash (REACTOR_TOOLS, see scripts/tools.sh), shared by every clone.
#
# Each crate is built on its own (`-p`): a component targets one world, and building the
# controller and descriptor crates together would unify reactor-sdk's world features.
# CARGO_TARGET_DIR is honoured (default: <repo>/target/guests), shared by all crates.
set -euo pipefail

test_guests=false
if [ "${1:-}" = "--with-test-guests" ]; then
    test_guests=true
    shift
fi
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
    echo "usage: $0 [--with-test-guests] OUT [EXAMPLE...]" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
shift
only=("$@")
for name in ${only[@]+"${only[@]}"}; do
    if [ ! -d "$root/examples/$name" ]; then
        echo "build-components: no example $name in examples/" >&2
        exit 2
    fi
done

# wanted NAME : whether example NAME is to be built (every example when none was named).
wanted() {
    [ ${#only[@]} -eq 0 ] && return 0
    local name
    for name in "${only[@]}"; do
        [ "$name" = "$1" ] && return 0
    done
    return 1
}
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

# is_component CRATE_FOLDER : whether the crate builds a component (`crate-type = ["cdylib"]`);
# a plain library shared by components (examples/southbound-files) is not one.
is_component() {
    grep -Eq '^[[:space:]]*crate-type[[:space:]]*=[[:space:]]*\[[[:space:]]*"cdylib"[[:space:]]*\]' "$1/Cargo.toml"
}

# components WORKSPACE_DIR : the folders of WORKSPACE_DIR holding a component crate.
components() {
    for dir in "$1"/*/; do
        [ -f "$dir/Cargo.toml" ] && is_component "$dir" && basename "$dir"
    done
    return 0
}

# Rust examples (other languages add theirs below): every component crate that is wanted.
mapfile -t crates < <(components "$root/examples")
selected=()
for crate in ${crates[@]+"${crates[@]}"}; do
    wanted "$crate" && selected+=("$crate")
done
if [ ${#selected[@]} -gt 0 ]; then
    build "$root/examples" "${selected[@]}"
fi
# Test guests, only when asked for (the test harness and the benchmarks).
if $test_guests; then
    mapfile -t crates < <(components "$root/guests")
    if [ ${#crates[@]} -gt 0 ]; then
        build "$root/guests" "${crates[@]}"
    fi
fi

# shellcheck source=tools.sh
. "$root/scripts/tools.sh"

# inputs_hash FILE_OR_DIR... : sha256 over the paths and contents of the files given.
inputs_hash() {
    (cd "$root" && find "$@" -type f ! -path '*/node_modules/*' ! -path '*/__pycache__/*' -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# fresh NAME HASH : whether OUT/NAME.wasm was built from inputs hashing to HASH.
fresh() {
    [ -f "$out/$1.wasm" ] && [ -f "$out/.$1.inputs" ] && [ "$(cat "$out/.$1.inputs")" = "$2" ]
}

stamp() {
    echo "$2" >"$out/.$1.inputs"
    echo "$out/$1.wasm"
}

# Python: every folder of examples/ with an app.py (and of guests/, with the test guests);
# its first line `# world: NAME` picks the world (default controller).
python_dirs=("$root"/examples/*/)
if $test_guests; then
    python_dirs+=("$root"/guests/*/)
fi
for dir in "${python_dirs[@]}"; do
    [ -f "$dir/app.py" ] || continue
    name="$(basename "$dir")"
    folder="$(basename "$(dirname "$dir")")/$name"
    [ "$folder" = "guests/$name" ] || wanted "$name" || continue
    world="$(sed -n '1s/^# world: *\([a-z-]*\).*/\1/p' "$dir/app.py")"
    world="${world:-controller}"
    if [ ! -x "$COMPONENTIZE_PY" ]; then
        echo "componentize-py $COMPONENTIZE_PY_VERSION is missing: run scripts/setup.sh" >&2
        exit 1
    fi
    hash="$(inputs_hash "$folder" sdk/python wit; echo "$COMPONENTIZE_PY_VERSION $world")"
    hash="$(echo "$hash" | sha256sum | cut -d' ' -f1)"
    fresh "$name" "$hash" && { echo "$out/$name.wasm"; continue; }
    (cd "$root" && "$COMPONENTIZE_PY" -d wit -w "$world" componentize app \
        -p "$folder" -p sdk/python -o "$out/.$name.wasm.tmp" >/dev/null)
    mv "$out/.$name.wasm.tmp" "$out/$name.wasm"
    stamp "$name" "$hash"
done

# JavaScript: every folder of examples/ (and of guests/, with the test guests) with a
# package.json whose "main" is the module to componentize (world `controller`). No WASI
# http: the host grants no network. A test guest has no lockfile of its own: it is built by
# the componentize-js of examples/policy-js's.
js_dirs=("$root"/examples/*/)
if $test_guests; then
    js_dirs+=("$root"/guests/*/)
fi
for dir in "${js_dirs[@]}"; do
    [ -f "$dir/package.json" ] || continue
    name="$(basename "$dir")"
    folder="$(basename "$(dirname "$dir")")/$name"
    [ "$folder" = "guests/$name" ] || wanted "$name" || continue
    main="$(node -p "require('$dir/package.json').main")"
    tools="$dir"
    [ -f "$tools/package-lock.json" ] || tools="$root/examples/policy-js/"
    lock_hash="$(sha256sum "$tools/package-lock.json" | cut -c1-16)"
    modules="$REACTOR_TOOLS/npm-$lock_hash"
    if [ ! -f "$modules/.installed" ]; then
        rm -rf "$modules"
        mkdir -p "$modules"
        cp "$tools/package.json" "$tools/package-lock.json" "$modules/"
        # `npm ci` would refuse this lockfile: jco-node-fs 0.3.2 names optional platform
        # packages (win32, musl) that the registry does not serve, which `npm install`
        # skips. `npm install --no-save` installs the lockfile's versions and changes nothing.
        (cd "$modules" && npm install --no-save --no-audit --no-fund --loglevel=error >&2)
        touch "$modules/.installed"
    fi
    hash="$(inputs_hash "$folder" sdk/js wit; echo "$lock_hash")"
    hash="$(echo "$hash" | sha256sum | cut -d' ' -f1)"
    fresh "$name" "$hash" && { echo "$out/$name.wasm"; continue; }
    # componentize-js resolves relative imports from its working directory: the repo root.
    (cd "$root" && "$modules/node_modules/.bin/componentize-js" --wit wit -n controller \
        -d http -d fetch-event -o "$out/.$name.wasm.tmp" "$folder/$main" >/dev/null)
    mv "$out/.$name.wasm.tmp" "$out/$name.wasm"
    stamp "$name" "$hash"
done

# C: every folder of examples/ with a .c file is a reactor (world `controller`): the
# bindings from `wit-bindgen c`, compiled with sdk/c and the folder's sources by Debian's
# clang for wasm32-wasi (a preview1 core module), then made a component by `wasm-tools
# component new` with the preview1 adapter of the host's wasmtime.
for dir in "$root"/examples/*/; do
    compgen -G "$dir*.c" >/dev/null || continue
    wanted "$(basename "$dir")" || continue
    name="$(basename "$dir")"
    for tool in "$WIT_BINDGEN" "$WASM_TOOLS" "$WASI_ADAPTER"; do
        if [ ! -f "$tool" ]; then
            echo "$tool is missing: run scripts/setup.sh" >&2
            exit 1
        fi
    done
    hash="$(inputs_hash "examples/$name" sdk/c wit
        echo "$WIT_BINDGEN_VERSION $WASM_TOOLS_VERSION $WASI_ADAPTER_VERSION $(clang --version | head -n1)")"
    hash="$(echo "$hash" | sha256sum | cut -d' ' -f1)"
    fresh "$name" "$hash" && { echo "$out/$name.wasm"; continue; }
    work="$out/.$name.build"
    rm -rf "$work"
    mkdir -p "$work"
    if ! log="$("$WIT_BINDGEN" c "$root/wit" --world controller --out-dir "$work" 2>&1)"; then
        echo "$log" >&2
        exit 1
    fi
    clang --target=wasm32-wasi -mexec-model=reactor -O2 -std=c11 -Wall -Wextra -Werror \
        -Wno-unused-parameter -I "$work" -I "$root/sdk/c" -o "$work/core.wasm" \
        "$dir"*.c "$root"/sdk/c/*.c "$work/controller.c" "$work/controller_component_type.o" \
        -Wl,--strip-debug
    "$WASM_TOOLS" component new "$work/core.wasm" \
        --adapt "wasi_snapshot_preview1=$WASI_ADAPTER" -o "$out/.$name.wasm.tmp"
    rm -rf "$work"
    mv "$out/.$name.wasm.tmp" "$out/$name.wasm"
    stamp "$name" "$hash"
done
