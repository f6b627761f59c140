//! A version in service: its loaded code, what it said of itself, and where its code came from.

use crate::call::instance::Loaded;
use crate::load::described::Described;
use reactor_core::component::Permissions;

/// The version in service and what it said of itself.
pub(crate) struct Serving {
    pub(crate) loaded: Loaded,
    pub(crate) described: Described,
    /// Whether its code was compiled or taken from the cache.
    pub(crate) source: Source,
    /// Its declared permissions (`None`: undeclared).
    pub(crate) declared: Option<Permissions>,
}

/// Where a version's compiled code came from (shown in the log and the metrics
/// `reactor_component_compiles_total` / `reactor_component_cache_hits_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// Compiled from the wasm now.
    Compiled,
    /// Taken from the on-disk cache of compiled code.
    Cache,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Compiled => "compiled",
            Source::Cache => "cache",
        }
    }
}
