#!/usr/bin/env bash
# Makes the base image localhost/reactor-base:<suite> without any image registry: a minimal
# Debian root (debootstrap --variant=minbase, from Debian's mirror) packed once into
# ~/.cache/reactor-host/images/ and imported with `podman import`. Idempotent: the root is
# built only when its tarball is missing, imported only when the image is missing.
#
# usage: deploy/base-image.sh          (DEBIAN_SUITE, DEBIAN_MIRROR override the defaults)
set -euo pipefail
# shellcheck source=deploy/podman.sh
. "$(dirname "$0")/podman.sh"

tarball="$REACTOR_CACHE/images/debian-$DEBIAN_SUITE-minbase.tar"
if [ ! -f "$tarball" ]; then
    mkdir -p "$(dirname "$tarball")"
    root="$(mktemp -d "$REACTOR_CACHE/images/.root.XXXXXX")"
    trap 'rm -rf "$root" "$tarball.tmp"' EXIT
    echo "base image: debootstrap $DEBIAN_SUITE (minbase) from $DEBIAN_MIRROR" >&2
    debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >"$root.log" 2>&1 || {
        tail -n 20 "$root.log" >&2
        echo "debootstrap failed (log: $root.log)" >&2
        exit 1
    }
    rm -f "$root.log"
    # Nothing the image does not need at run time: package lists, caches, docs.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*
    tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
fi
if ! pm image exists "$BASE_IMAGE"; then
    pm import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$BASE_IMAGE" >/dev/null
fi
echo "$BASE_IMAGE"
