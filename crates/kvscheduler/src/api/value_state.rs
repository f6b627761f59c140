//! The states a value goes through, named as Ligato's.

use serde::{Deserialize, Serialize};

/// State of a value, exactly as Ligato's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ValueState {
    /// Not known to the scheduler (never requested, or removed and forgotten).
    Nonexistent,
    /// Configured by the scheduler but not found in the southbound by retrieve.
    Missing,
    /// No descriptor is registered for the key.
    Unimplemented,
    /// Removed at the northbound's request.
    Removed,
    /// Applied by the scheduler.
    Configured,
    /// Notified by the southbound, not managed by the scheduler; never removed by resync.
    Obtained,
    /// Found in the southbound by retrieve, not managed by the scheduler.
    Discovered,
    /// Waiting for dependencies.
    Pending,
    /// Refused by the descriptor's `validate`.
    Invalid,
    /// An operation failed and will not be retried.
    Failed,
    /// An operation failed and a retry is scheduled.
    Retrying,
}

impl ValueState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nonexistent => "NONEXISTENT",
            Self::Missing => "MISSING",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Removed => "REMOVED",
            Self::Configured => "CONFIGURED",
            Self::Obtained => "OBTAINED",
            Self::Discovered => "DISCOVERED",
            Self::Pending => "PENDING",
            Self::Invalid => "INVALID",
            Self::Failed => "FAILED",
            Self::Retrying => "RETRYING",
        }
    }
}

impl std::fmt::Display for ValueState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
