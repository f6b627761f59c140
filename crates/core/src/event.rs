//! An event of an object (a reconcile error, a recovery, an agent failing an item), as the
//! API lists it.

use serde::{Deserialize, Serialize};

/// Normal, or a Warning (something failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventType {
    Normal,
    Warning,
}

/// One event of an object, with how often it happened and when first and last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub kind: String,
    pub name: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// A short CamelCase cause: `ReconcileError`, `Reconciled`, `PermanentFailure`,
    /// `FinalizerWait`, `FinalizerRemoved`, `AgentFailed`.
    pub reason: String,
    /// Who reports it: a reactor's name, or `host`.
    pub source: String,
    pub message: String,
    pub count: u64,
    /// RFC 3339.
    pub first_seen: String,
    /// RFC 3339.
    pub last_seen: String,
}
