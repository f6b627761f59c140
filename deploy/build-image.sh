#!/usr/bin/env bash
# Builds the container images of deploy/ from this checkout, with no image registry:
#   localhost/reactor-base:bookworm  a minimal Debian root (deploy/base-image.sh, cached)
#   localhost/reactor-host:latest    + the release binary of reactor-host built here
#   localhost/reactor-etcd:latest    + Debian's etcd (scripts/setup.sh installs etcd-server)
#   localhost/reactor-registry:latest + Debian's docker-registry, an OCI registry
# Each image's build context is a folder holding only its binary. Podman runs with runc and
# without default ulimits (deploy/containers.conf, see deploy/podman.sh).
#
# usage: deploy/build-image.sh        (CARGO_TARGET_DIR is honoured: reuse a release build;
#                                      REACTOR_HOST_BIN=FILE takes that binary instead)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/podman.sh
. deploy/podman.sh

deploy/base-image.sh >/dev/null
# REACTOR_HOST_BIN: a reactor-host binary built already (e.g. a debug build), instead of
# building the release one.
if [ -z "${REACTOR_HOST_BIN:-}" ]; then
    cargo build --quiet --release -p reactor-host
    REACTOR_HOST_BIN="${CARGO_TARGET_DIR:-target}/release/reactor-host"
fi
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT

# image NAME CONTAINERFILE BINARY AS [FILE...] : builds NAME from CONTAINERFILE, its context
# holding only BINARY, named AS, and the FILEs.
image() {
    rm -rf "${context:?}"/*
    cp "$3" "$context/$4"
    if [ $# -gt 4 ]; then cp "${@:5}" "$context/"; fi
    pm build --quiet --file "$2" --tag "$1" "$context" >/dev/null
    echo "$1"
}
image "$HOST_IMAGE" deploy/Containerfile "$REACTOR_HOST_BIN" reactor-host \
    /etc/ssl/certs/ca-certificates.crt
image "$ETCD_IMAGE" deploy/Containerfile.etcd "$(command -v etcd)" etcd
image "$REGISTRY_IMAGE" deploy/Containerfile.registry /usr/bin/docker-registry docker-registry
# The previous builds, untagged now (only this project's images carry the label).
pm image prune --force --filter label=org.reactor-host.image >/dev/null
