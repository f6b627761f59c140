//! What a component said of itself in `describe()`, in the host's own types: converted from
//! the generated WIT types once, at load, so that nothing past the runtime (the engine, the
//! agent, the HTTP API) depends on the WIT's shape.

use super::bindings::{descriptor_api, reactor_api};
use serde::{Deserialize, Serialize};

/// What a component said of itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "world", rename_all = "lowercase")]
pub enum Described {
    /// A controller's description.
    Controller(ReactorDescription),
    /// A descriptor's description.
    Descriptor(DescriptorDescription),
}

/// How a reactor describes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReactorDescription {
    /// Names the reactor in status, metrics and finalizers.
    pub name: String,
    /// Kinds whose objects the reactor handles.
    pub kinds: Vec<String>,
    /// Every watched object is run again at this period (0: never).
    pub resync_period_ms: u64,
    /// The host holds a finalizer so that `on-delete` is never missed.
    pub handles_delete: bool,
}

/// How a KV descriptor describes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescriptorDescription {
    /// Its name, also the name of its southbound folder.
    pub name: String,
    /// The keys it handles start with this.
    pub key_prefix: String,
    /// Descriptors whose values are retrieved before this one's.
    pub retrieve_dependencies: Vec<String>,
}

impl From<reactor_api::Info> for ReactorDescription {
    fn from(info: reactor_api::Info) -> Self {
        Self {
            name: info.name,
            kinds: info.kinds,
            resync_period_ms: info.resync_period_ms,
            handles_delete: info.handles_delete,
        }
    }
}

impl From<descriptor_api::Info> for DescriptorDescription {
    fn from(info: descriptor_api::Info) -> Self {
        Self {
            name: info.name,
            key_prefix: info.key_prefix,
            retrieve_dependencies: info.retrieve_dependencies,
        }
    }
}
