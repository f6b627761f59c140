# Sourced by the scripts/setup-*.sh, scripts/build-components.sh and deploy/: where the
# tools installed outside Debian's packages live, and their pinned versions.
COMPONENTIZE_PY_VERSION="0.25.1"
REACTOR_TOOLS="${REACTOR_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactor-host/tools}"
PY_VENV="$REACTOR_TOOLS/componentize-py-$COMPONENTIZE_PY_VERSION"
COMPONENTIZE_PY="$PY_VENV/bin/componentize-py"
# C components: wit-bindgen (C bindings of the WIT) and wasm-tools (core module → component)
# from the Rust crate registry, and the WASI preview1 → preview2 adapter of the wasmtime
# release the host uses. wasm-tools 1.254 shares wasmtime 48's wasmparser / wit-component.
WIT_BINDGEN_VERSION="0.61.1"
WASM_TOOLS_VERSION="1.254.2"
WASI_ADAPTER_VERSION="48.0.8"
WIT_BINDGEN="$REACTOR_TOOLS/wit-bindgen-$WIT_BINDGEN_VERSION/bin/wit-bindgen"
WASM_TOOLS="$REACTOR_TOOLS/wasm-tools-$WASM_TOOLS_VERSION/bin/wasm-tools"
WASI_ADAPTER="$REACTOR_TOOLS/wasi-adapter-$WASI_ADAPTER_VERSION/wasi_snapshot_preview1.reactor.wasm"
# The API fuzzer (scripts/fuzz-api.sh): schemathesis from PyPI, in a venv of its own.
SCHEMATHESIS_VERSION="4.32.5"
SCHEMATHESIS_VENV="$REACTOR_TOOLS/schemathesis-$SCHEMATHESIS_VERSION"
SCHEMATHESIS="$SCHEMATHESIS_VENV/bin/schemathesis"
# The Kubernetes API's Python client (PyPI `kubernetes`), in a venv of its own: the tests drive
# host/tests/clients/kubernetes_client.py with it (host/tests/binary/both_stores/kube_python.rs).
KUBERNETES_PY_VERSION="37.0.2"
KUBERNETES_PY_VENV="$REACTOR_TOOLS/kubernetes-py"
KUBERNETES_PY="$KUBERNETES_PY_VENV/bin/python"
# Fuzzing the document parser and wire types (scripts/fuzz.sh): cargo-fuzz from crates.io,
# run with `--sanitizer none`, which builds on the stable toolchain.
CARGO_FUZZ_VERSION="0.13.2"
CARGO_FUZZ="$REACTOR_TOOLS/cargo-fuzz-$CARGO_FUZZ_VERSION/bin/cargo-fuzz"
# promtool (scripts/setup.sh takes it out of Debian's prometheus package, without installing
# the server): checks /metrics in the tests (host/tests/binary/both_stores/cli_flow.rs).
PROMTOOL="$REACTOR_TOOLS/promtool/promtool"
# The documentation site (docs/book.toml): mdBook from crates.io, built without its `serve`
# and `watch` features; scripts/test.sh builds the site with it.
MDBOOK_VERSION="0.5.4"
MDBOOK="$REACTOR_TOOLS/mdbook-$MDBOOK_VERSION/bin/mdbook"
# Compose (deploy/compose.yaml, run by deploy/test-containers.sh): podman-compose from PyPI
# in a venv of its own. Debian's 1.0.3 refuses the file (`missing networks: reactor`: it
# flattens a service's network aliases map); 1.6 runs it.
PODMAN_COMPOSE_VERSION="1.6.0"
PODMAN_COMPOSE_VENV="$REACTOR_TOOLS/podman-compose-$PODMAN_COMPOSE_VERSION"
PODMAN_COMPOSE="$PODMAN_COMPOSE_VENV/bin/podman-compose"
