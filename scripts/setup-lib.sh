# shellcheck shell=bash
# Sourced by the scripts/setup-*.sh: running as root or through sudo, and Debian packages
# installed only when missing (one `apt-get update` per script, only when something is).

need_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# apt_install PACKAGE... : installs the packages named (none: nothing to do). Debian starts
# the packaged etcd and registry as services; the project runs its own instances, so they
# are disabled.
apt_updated=false
apt_install() {
    [ $# -gt 0 ] || return 0
    if ! $apt_updated; then
        need_root apt-get update -qq
        apt_updated=true
    fi
    need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    if command -v systemctl >/dev/null 2>&1; then
        local package
        for package in "$@"; do
            case "$package" in
                etcd-server) need_root systemctl disable --now etcd >/dev/null 2>&1 || true ;;
                docker-registry) need_root systemctl disable --now docker-registry >/dev/null 2>&1 || true ;;
            esac
        done
    fi
}

# python_venv DIR PACKAGE==VERSION : a venv at DIR holding the package (made afresh).
python_venv() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        apt_install python3 python3-venv
    fi
    rm -rf "$1"
    mkdir -p "$(dirname "$1")"
    python3 -m venv "$1"
    "$1/bin/pip" install --quiet --disable-pip-version-check "$2"
}
