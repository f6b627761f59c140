#!/usr/bin/env bash
# Installs everything reactor-host needs on a fresh Debian machine with rustup. Idempotent:
# each step runs only if what it installs is missing.
set -euo pipefail

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Guest components (reactors, descriptors) compile to WASI preview 2 components.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi

# etcd: the distributed store backend and the benchmarks' peer; protoc builds etcd-client.
missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
# The OCI registry the supply tests push to and pull from (the CNCF distribution registry),
# htpasswd for its basic auth, and minisign to show signatures interoperate.
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)
command -v minisign >/dev/null 2>&1 || missing+=(minisign)
# A TrueType font for the benchmark plots (drawn without fontconfig).
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
    need_root apt-get update -qq
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Debian starts the packaged etcd as a service; the project runs its own instances.
    if command -v systemctl >/dev/null 2>&1; then need_root systemctl disable --now etcd >/dev/null 2>&1 || true; fi
    # Likewise the packaged registry: the tests start their own on loopback.
    if command -v systemctl >/dev/null 2>&1; then need_root systemctl disable --now docker-registry >/dev/null 2>&1 || true; fi
fi
# Python and JavaScript components: componentize-py (PyPI) in a venv of its own, and node +
# npm for componentize-js (its packages are pinned in examples/policy-js/package-lock.json
# and installed by scripts/build-components.sh). The venv lives outside the
# clone (REACTOR_TOOLS, default ~/.cache/reactor-host/tools), keyed by version, so fresh
# clones (CI) reuse it; scripts/build-components.sh finds it by the same rule.
tools="$(dirname "$0")/tools.sh"
# shellcheck source=tools.sh
. "$tools"
if ! "$COMPONENTIZE_PY" --version 2>/dev/null | grep -q "$COMPONENTIZE_PY_VERSION"; then
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        need_root apt-get update -qq
        need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
    fi
    rm -rf "$PY_VENV"
    mkdir -p "$(dirname "$PY_VENV")"
    python3 -m venv "$PY_VENV"
    "$PY_VENV/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY_VERSION"
fi
# schemathesis fuzzes the HTTP API from its OpenAPI document (scripts/fuzz-api.sh).
if ! "$SCHEMATHESIS" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    rm -rf "$SCHEMATHESIS_VENV"
    mkdir -p "$(dirname "$SCHEMATHESIS_VENV")"
    python3 -m venv "$SCHEMATHESIS_VENV"
    "$SCHEMATHESIS_VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
# The Kubernetes Python client the tests speak to the Kubernetes API with.
if ! "$KUBERNETES_PY" -c "import kubernetes, sys; sys.exit(kubernetes.__version__ != '$KUBERNETES_PY_VERSION')" 2>/dev/null; then
    rm -rf "$KUBERNETES_PY_VENV"
    mkdir -p "$(dirname "$KUBERNETES_PY_VENV")"
    python3 -m venv "$KUBERNETES_PY_VENV"
    "$KUBERNETES_PY_VENV/bin/pip" install --quiet --disable-pip-version-check "kubernetes==$KUBERNETES_PY_VERSION"
fi
# promtool, from Debian's prometheus package: only the binary, no Prometheus service.
if ! "$PROMTOOL" --version >/dev/null 2>&1; then
    scratch="$(mktemp -d)"
    chmod 755 "$scratch" # apt downloads as its own user
    (cd "$scratch" && apt-get download prometheus >/dev/null 2>&1) || {
        need_root apt-get update -qq
        (cd "$scratch" && apt-get download prometheus >/dev/null)
    }
    dpkg-deb -x "$scratch"/prometheus_*.deb "$scratch/root"
    mkdir -p "$(dirname "$PROMTOOL")"
    cp "$scratch/root/usr/bin/promtool" "$PROMTOOL"
    rm -rf "$scratch"
fi
if ! command -v npm >/dev/null 2>&1 || ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' 2>/dev/null; then
    need_root apt-get update -qq
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# Containers (deploy/): podman with runc, netavark and aardvark-dns (containers find each
# other by name on a network), iptables for its bridge networks, and debootstrap for the
# base image, made locally since no image registry is needed (deploy/base-image.sh).
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
[ -x /usr/lib/podman/netavark ] || missing+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || missing+=(aardvark-dns)
# C components: Debian's clang, lld (wasm-ld), wasi-libc and the wasm32 compiler runtime;
# wit-bindgen and wasm-tools built once into the tools cache, and the preview1 adapter
# taken from the wasi-preview1-component-adapter-provider crate of wasmtime's version.
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v wasm-ld >/dev/null 2>&1 || missing+=(lld)
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=(wasi-libc)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a' >/dev/null || missing+=(libclang-rt-14-dev-wasm32)
if [ ${#missing[@]} -gt 0 ]; then
    need_root apt-get update -qq
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x "$WIT_BINDGEN" ]; then
    cargo install --locked --quiet wit-bindgen-cli --version "$WIT_BINDGEN_VERSION" \
        --no-default-features --features c --root "$(dirname "$(dirname "$WIT_BINDGEN")")"
fi
if [ ! -x "$WASM_TOOLS" ]; then
    cargo install --locked --quiet wasm-tools --version "$WASM_TOOLS_VERSION" \
        --no-default-features --features component,validate,print --root "$(dirname "$(dirname "$WASM_TOOLS")")"
fi
if [ ! -x "$CARGO_FUZZ" ]; then
    cargo install --locked --quiet cargo-fuzz --version "$CARGO_FUZZ_VERSION" \
        --root "$(dirname "$(dirname "$CARGO_FUZZ")")"
fi
if [ ! -x "$MDBOOK" ]; then
    cargo install --locked --quiet mdbook --version "$MDBOOK_VERSION" \
        --no-default-features --features search --root "$(dirname "$(dirname "$MDBOOK")")"
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
echo "setup: rust $(rustc --version | cut -d' ' -f2), wasm32-wasip2, $(etcd --version 2>/dev/null | head -n1), $(protoc --version), $("$COMPONENTIZE_PY" --version), node $(node --version), $(clang --version | head -n1), $("$WIT_BINDGEN" --version), $("$WASM_TOOLS" --version), $("$SCHEMATHESIS" --version), $("$CARGO_FUZZ" --version), $("$MDBOOK" --version), $("$PROMTOOL" --version 2>&1 | head -n1), python kubernetes $("$KUBERNETES_PY" -c "import kubernetes; print(kubernetes.__version__)")"
