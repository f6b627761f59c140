//! JSON documents (specs, statuses, values, config) read and written as serde types.

use serde::{Serialize, de::DeserializeOwned};

/// A JSON document that could not be read or written as the expected type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// What was being read or written, e.g. `spec of Policy/web`.
    pub what: String,
    /// The serde error.
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {}: {}", self.what, self.message)
    }
}

impl std::error::Error for JsonError {}

/// Reads `text` as a `T`.
pub(crate) fn read<T: DeserializeOwned>(
    what: impl Into<String>,
    text: &str,
) -> Result<T, JsonError> {
    serde_json::from_str(text).map_err(|e| JsonError {
        what: what.into(),
        message: e.to_string(),
    })
}

/// Writes `value` as JSON text.
#[cfg_attr(not(feature = "controller"), allow(dead_code))]
pub(crate) fn write<T: Serialize + ?Sized>(
    what: impl Into<String>,
    value: &T,
) -> Result<String, JsonError> {
    serde_json::to_string(value).map_err(|e| JsonError {
        what: what.into(),
        message: e.to_string(),
    })
}
