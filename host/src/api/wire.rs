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
    /// The caller may not write this (the host's own kinds; another owner's object).
    Forbidden,
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

/// `PUT /v1/agents/{id}`: an agent registers (or re-registers) with its labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
}

/// `POST /v1/agents/{id}/heartbeat`: the agent is alive, and counts as connected for `ttl_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatBody {
    pub ttl_ms: u64,
}

/// `POST /v1/nimbus/watch`: follow an agent's items after `from`; `known` is what the agent
/// holds (key → version), so that items no longer meant for it are sent as deletes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedBody {
    pub agent: String,
    pub from: Revision,
    #[serde(default)]
    pub known: std::collections::HashMap<String, u64>,
}

/// `POST /v1/nimbus/status`: an agent's reports on its items.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportBody {
    pub agent: String,
    pub reports: Vec<crate::nimbus::AgentReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedBody {
    /// Reports written (those on items withdrawn meanwhile are dropped).
    pub recorded: usize,
}
