#!/usr/bin/env bash
# The toolchains of the components written in Python, JavaScript and C (examples/, guests/),
# which the tests and the benchmarks build (scripts/build-components.sh): componentize-py in
# a venv, node + npm for componentize-js (its packages are pinned in
# examples/policy-js/package-lock.json and installed by scripts/build-components.sh), and for C
# Debian's clang, lld (wasm-ld), wasi-libc and the wasm32 compiler runtime, wit-bindgen and
# wasm-tools built once into the tools cache, and the preview1 adapter taken from the
# wasi-preview1-component-adapter-provider crate of wasmtime's version. Idempotent. The tools
# live outside the clone (REACTOR_TOOLS, default ~/.cache/reactor-host/tools), keyed by
# version, so fresh clones (CI) reuse them; scripts/build-components.sh finds them by the
# same rule (scripts/tools.sh).
set -euo pipefail
scripts="$(dirname "$0")"
# shellcheck source=setup-lib.sh
. "$scripts/setup-lib.sh"
# shellcheck source=tools.sh
. "$scripts/tools.sh"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi
if ! "$COMPONENTIZE_PY" --version 2>/dev/null | grep -q "$COMPONENTIZE_PY_VERSION"; then
    python_venv "$PY_VENV" "componentize-py==$COMPONENTIZE_PY_VERSION"
fi
missing=()
if ! command -v npm >/dev/null 2>&1 || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' 2>/dev/null; then
    missing+=(nodejs npm)
fi
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v wasm-ld >/dev/null 2>&1 || missing+=(lld)
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a' >/dev/null || missing+=(libclang-rt-14-dev-wasm32)
apt_install ${missing[@]+"${missing[@]}"}
if [ ! -x "$WIT_BINDGEN" ]; then
    cargo install --locked --quiet wit-bindgen-cli --version "$WIT_BINDGEN_VERSION" \
        --no-default-features --features c --root "$(dirname "$(dirname "$WIT_BINDGEN")")"
fi
if [ ! -x "$WASM_TOOLS" ]; then
    cargo install --locked --quiet wasm-tools --version "$WASM_TOOLS_VERSION" \
        --no-default-features --features component,validate,print --root "$(dirname "$(dirname "$WASM_TOOLS")")"
fi
if [ ! -f "$WASI_ADAPTER" ]; then
    # The crate carries the adapter's bytes: fetch it through a throwaway manifest and copy
    # the file out of cargo's registry sources.
    fetch="$(mktemp -d)"
    mkdir -p "$fetch/src"
    touch "$fetch/src/lib.rs"
    printf '[package]\nname = "adapter-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nwasi-preview1-component-adapter-provider = "=%s"\n\n[workspace]\n' \
        "$WASI_ADAPTER_VERSION" >"$fetch/Cargo.toml"
    crate="$(cd "$fetch" && cargo metadata --quiet --format-version 1 \
        | python3 -c 'import json, sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "wasi-preview1-component-adapter-provider"))')"
    mkdir -p "$(dirname "$WASI_ADAPTER")"
    cp "$(dirname "$crate")/artefacts/wasi_snapshot_preview1.reactor.wasm" "$WASI_ADAPTER.tmp"
    mv "$WASI_ADAPTER.tmp" "$WASI_ADAPTER"
    rm -rf "$fetch"
fi
echo "setup-languages: $("$COMPONENTIZE_PY" --version), node $(node --version), $(clang --version | head -n1), $("$WIT_BINDGEN" --version), $("$WASM_TOOLS" --version)"
