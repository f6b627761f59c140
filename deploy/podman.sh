# shellcheck shell=bash disable=SC2034
# Sourced by the deploy scripts: podman with this folder's settings, the image names and
# the cache of the base root. Every podman call goes through `pm` (runc, not crun).
deploy_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$deploy_dir/containers.conf}"
REACTOR_CACHE="${REACTOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reactor-host}"
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
BASE_IMAGE="localhost/reactor-base:$DEBIAN_SUITE"
HOST_IMAGE="${HOST_IMAGE:-localhost/reactor-host:latest}"
ETCD_IMAGE="${ETCD_IMAGE:-localhost/reactor-etcd:latest}"
REGISTRY_IMAGE="${REGISTRY_IMAGE:-localhost/reactor-registry:latest}"

pm() { podman --runtime runc "$@"; }
