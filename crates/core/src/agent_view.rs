//! What `reactor-host agents` and `GET /v1/agents` show of one agent.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `reactor-host agents` shows of one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    /// A heartbeat came within the agent's own time-to-live.
    pub connected: bool,
    /// Milliseconds since the Unix epoch of the last heartbeat, if any.
    pub last_seen_ms: Option<u64>,
    /// Items meant for this agent, by where the agent says they are; `pending` counts
    /// the items it has not reported on at their current version.
    pub applied: usize,
    pub pending: usize,
    pub failed: usize,
}
