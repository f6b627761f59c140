//! The objects of one kind at one revision, as a list answers them.

use crate::object::{Object, Revision};

/// The objects of one kind at one revision.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Listing {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::object::StoredObject>))]
    pub items: Vec<Object>,
    /// The store revision the listing reflects: watch from here to follow it.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub revision: Revision,
}
