#!/usr/bin/env bash
# What scripts/test.sh needs: the demo's and the component languages' parts (the tests build
# every example), etcd (the store backend) and protoc (etcd-client), the OCI registry the
# supply tests push to and pull from (the CNCF distribution registry) with htpasswd for its
# basic auth and minisign to show signatures interoperate, the Kubernetes Python client,
# promtool (checks /metrics), schemathesis (fuzzes the HTTP API, scripts/fuzz-api.sh) and
# cargo-fuzz (scripts/fuzz.sh). Idempotent: each step runs only if what it installs is missing.
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/setup-demo.sh"
"$scripts/setup-languages.sh"
# shellcheck source=setup-lib.sh
. "$scripts/setup-lib.sh"
# shellcheck source=tools.sh
. "$scripts/tools.sh"

missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)
command -v minisign >/dev/null 2>&1 || missing+=(minisign)
apt_install ${missing[@]+"${missing[@]}"}
if ! "$SCHEMATHESIS" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    python_venv "$SCHEMATHESIS_VENV" "schemathesis==$SCHEMATHESIS_VERSION"
fi
if ! "$KUBERNETES_PY" -c "import kubernetes, sys; sys.exit(kubernetes.__version__ != '$KUBERNETES_PY_VERSION')" 2>/dev/null; then
    python_venv "$KUBERNETES_PY_VENV" "kubernetes==$KUBERNETES_PY_VERSION"
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
if [ ! -x "$CARGO_FUZZ" ]; then
    cargo install --locked --quiet cargo-fuzz --version "$CARGO_FUZZ_VERSION" \
        --root "$(dirname "$(dirname "$CARGO_FUZZ")")"
fi
# The documentation site's builder (scripts/test.sh builds docs/ with it).
if [ ! -x "$MDBOOK" ]; then
    cargo install --locked --quiet mdbook --version "$MDBOOK_VERSION" \
        --no-default-features --features search --root "$(dirname "$(dirname "$MDBOOK")")"
fi
echo "setup-tests: $(etcd --version 2>/dev/null | head -n1), $(protoc --version), $("$SCHEMATHESIS" --version), $("$CARGO_FUZZ" --version), $("$MDBOOK" --version), $("$PROMTOOL" --version 2>&1 | head -n1), python kubernetes $("$KUBERNETES_PY" -c "import kubernetes; print(kubernetes.__version__)")"
