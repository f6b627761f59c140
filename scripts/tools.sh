# Sourced by scripts/setup.sh and scripts/build-components.sh: where the Python and
# JavaScript component tools live, and their pinned versions.
COMPONENTIZE_PY_VERSION="0.25.1"
REACTOR_TOOLS="${REACTOR_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactor-host/tools}"
PY_VENV="$REACTOR_TOOLS/componentize-py-$COMPONENTIZE_PY_VERSION"
COMPONENTIZE_PY="$PY_VENV/bin/componentize-py"
