//! Watch events: what changed, at which revision.

use crate::object::{Object, Revision};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EventType {
    Created,
    Updated,
    Deleted,
    /// No change: the watch has seen everything up to `revision`.
    Bookmark,
}

/// One line of a watch stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WatchEvent {
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub revision: Revision,
    /// The object after the change; for `deleted` its last state. Absent for bookmarks.
    /// Shared: every watch of the kind and every cache holding it point at one copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::object::StoredObject>))]
    pub object: Option<Arc<Object>>,
}

impl WatchEvent {
    pub fn bookmark(revision: Revision) -> Self {
        Self {
            event_type: EventType::Bookmark,
            revision,
            object: None,
        }
    }

    pub fn kind(&self) -> Option<&str> {
        self.object.as_ref().map(|o| o.kind.as_str())
    }
}
