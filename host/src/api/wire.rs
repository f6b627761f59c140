//! The JSON bodies of the HTTP API, shared by the server and the client.

use crate::object::{ApplyRequest, Revision};
use crate::store::Applied;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /v1/objects`: apply several objects, all or nothing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyBody {
    pub objects: Vec<ApplyRequest>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppliedBody {
    pub items: Vec<Applied>,
}

/// `PUT /v1/objects/{kind}/{name}/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusBody {
    pub status: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Revision>,
}

/// What every failed request answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub code: ErrorCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Invalid,
    NotFound,
    Conflict,
    Compacted,
    Unauthorized,
    Internal,
}

/// The last line of a watch stream that the server had to end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WatchErrorLine {
    #[serde(rename = "type")]
    pub line_type: String,
    pub error: String,
    pub code: ErrorCode,
}
