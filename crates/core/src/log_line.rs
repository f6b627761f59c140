//! One line a guest component logged or printed.

use serde::{Deserialize, Serialize};

/// One line a guest logged (`log` import) or wrote (stdout, stderr).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogLine {
    /// Counts the component's lines from 1 since the host started; never reused.
    pub seq: u64,
    /// When it was logged (RFC 3339).
    pub time: String,
    /// `trace`, `debug`, `info`, `warn`, `error` for the `log` import; `stdout`, `stderr`.
    pub level: String,
    pub message: String,
}
