//! Who owns an object, and which kinds belong to the host alone.

use serde::{Deserialize, Serialize};

/// The object whose reactor callback applied an object through the store import, and the
/// component that ran the callback. An owned object is deleted when its owner goes, and only
/// its owner's reactor may change or delete it through the store import.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct Owner {
    pub kind: String,
    pub name: String,
    /// The owner's uid: an owner deleted and created again under its name is another owner.
    pub uid: String,
    pub component: String,
}

super::from_map!(Owner, "an owner (kind, name, uid, component)");

impl Owner {
    /// Whether `other` is the same owner, perhaps in another incarnation (another uid).
    pub fn same_place(&self, other: &Owner) -> bool {
        self.kind == other.kind && self.name == other.name && self.component == other.component
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} (component {})",
            self.kind, self.name, self.component
        )
    }
}

/// Kinds the host keeps its own state under: written only by the host's own paths, never by
/// API clients or guests, and never a reactor's kind. `ComponentRollback` records the
/// versions of components rolled back (cleared with `components clear-rollback`);
/// `Credential` keeps users', agents' and join tokens' hashes, read by no API client or guest;
/// `ComponentApproval` records the wider declarations an admin approved
/// (`component approve`); `ComponentDigest` the digest a component's tag named when a
/// replica saw it move, which every replica serves.
pub const RESERVED_KINDS: [&str; 7] = [
    "NimbusItem",
    "NimbusReport",
    "Agent",
    "ComponentRollback",
    "Credential",
    "ComponentApproval",
    "ComponentDigest",
];

/// Whether `kind` is one of the host's own.
pub fn is_reserved(kind: &str) -> bool {
    RESERVED_KINDS.contains(&kind)
}
