#!/usr/bin/env bash
# What deploy/ needs (deploy/build-image.sh, deploy/test-containers.sh): podman with runc,
# netavark and aardvark-dns (containers find each other by name on a network), iptables for
# its bridge networks, debootstrap for the base image (made locally: no image registry is
# needed, deploy/base-image.sh), etcd (copied into the etcd image), docker-registry (into the
# registry image), openssl (deploy/test-containers.sh makes the registry's certificate),
# ca-certificates (its bundle goes into the reactor-host image),
# protoc (the release binary is built with etcd), and podman-compose from PyPI, pinned, in a venv of its own
# (scripts/tools.sh says why not Debian's). Idempotent.
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/setup-demo.sh"
# shellcheck source=setup-lib.sh
. "$scripts/setup-lib.sh"
# shellcheck source=tools.sh
. "$scripts/tools.sh"

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
[ -x /usr/lib/podman/netavark ] || missing+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || missing+=(aardvark-dns)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
apt_install ${missing[@]+"${missing[@]}"}
if ! "$PODMAN_COMPOSE" --version 2>/dev/null | grep -q "podman-compose version $PODMAN_COMPOSE_VERSION"; then
    python_venv "$PODMAN_COMPOSE_VENV" "podman-compose==$PODMAN_COMPOSE_VERSION"
fi
echo "setup-containers: $(podman --version), $(runc --version | head -n1), podman-compose $PODMAN_COMPOSE_VERSION"
