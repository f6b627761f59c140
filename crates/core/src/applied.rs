//! What an apply did to each object: created, updated or unchanged, and the object as stored.

use crate::object::Object;

/// What an apply did to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ApplyOutcome {
    Created,
    Updated,
    Unchanged,
}

/// One object of an apply, as stored afterwards.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Applied {
    pub outcome: ApplyOutcome,
    #[cfg_attr(feature = "openapi", schema(value_type = crate::object::StoredObject))]
    pub object: Object,
}
