//! Where `scripts/setup.sh` puts the tools the tests run (`scripts/tools.sh` says the same).

use std::path::PathBuf;

/// The tools folder: `REACTOR_TOOLS`, else `$XDG_CACHE_HOME/reactor-host/tools`, else
/// `~/.cache/reactor-host/tools`.
pub fn tools_dir() -> PathBuf {
    if let Some(tools) = std::env::var_os("REACTOR_TOOLS") {
        return PathBuf::from(tools);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("reactor-host/tools")
}

/// The Python of the venv that holds the Kubernetes Python client (PyPI `kubernetes`);
/// `KUBERNETES_PY` names another.
pub fn kubernetes_python() -> PathBuf {
    std::env::var_os("KUBERNETES_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools_dir().join("kubernetes-py/bin/python"))
}
