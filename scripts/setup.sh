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
# A TrueType font for the benchmark plots (drawn without fontconfig).
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
    need_root apt-get update -qq
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Debian starts the packaged etcd as a service; the project runs its own instances.
    if command -v systemctl >/dev/null 2>&1; then need_root systemctl disable --now etcd >/dev/null 2>&1 || true; fi
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
if [ ${#missing[@]} -gt 0 ]; then
    need_root apt-get update -qq
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: rust $(rustc --version | cut -d' ' -f2), wasm32-wasip2, $(etcd --version 2>/dev/null | head -n1), $(protoc --version), $("$COMPONENTIZE_PY" --version), node $(node --version)"
