//! What a component said of itself in `describe()`, in the host's own types (converted from
//! the WIT's by the runtime, once, at load).

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
