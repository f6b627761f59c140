//! What a component said of itself in `describe()`, in the host's own types: converted from
//! the generated WIT types once, at load, so that nothing past the runtime (the engine, the
//! agent, the HTTP API) depends on the WIT's shape.

use super::bindings::{descriptor_api, reactor_api, v0_1};
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
    /// Other kinds watched, and how a change there maps to the reactor's objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watches: Vec<Watch>,
}

/// Another kind a reactor watches (WIT `watch`, since 0.2.0).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Watch {
    /// Children of this kind that the reactor applies: a change runs the owner again; they
    /// are collected when the owner goes.
    Owns { kind: String },
    /// Objects of `kind` named by the field at `path` of the reactor's objects.
    References { kind: String, path: String },
    /// Objects of `kind` whose field at `path` is a label selector over the reactor's objects.
    Selects { kind: String, path: String },
}

impl Watch {
    /// The kind watched.
    pub fn kind(&self) -> &str {
        match self {
            Watch::Owns { kind } | Watch::References { kind, .. } | Watch::Selects { kind, .. } => {
                kind
            }
        }
    }
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
            watches: info.watches.into_iter().map(Watch::from).collect(),
        }
    }
}

impl From<reactor_api::Watch> for Watch {
    fn from(watch: reactor_api::Watch) -> Self {
        match watch {
            reactor_api::Watch::Owns(kind) => Watch::Owns { kind },
            reactor_api::Watch::References(r) => Watch::References {
                kind: r.kind,
                path: r.path,
            },
            reactor_api::Watch::Selects(s) => Watch::Selects {
                kind: s.kind,
                path: s.path,
            },
        }
    }
}

impl From<v0_1::reactor_api::Info> for ReactorDescription {
    fn from(info: v0_1::reactor_api::Info) -> Self {
        Self {
            name: info.name,
            kinds: info.kinds,
            resync_period_ms: info.resync_period_ms,
            handles_delete: info.handles_delete,
            watches: Vec::new(),
        }
    }
}

impl From<v0_1::descriptor_api::Info> for DescriptorDescription {
    fn from(info: v0_1::descriptor_api::Info) -> Self {
        Self {
            name: info.name,
            key_prefix: info.key_prefix,
            retrieve_dependencies: info.retrieve_dependencies,
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
