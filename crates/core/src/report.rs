//! An agent's report on one Nimbus item: pending, applied, failed or removed, at which version.

use crate::object::from_map;
use serde::{Deserialize, Serialize};

/// Where an item is on one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportState {
    /// Received, not applied yet (e.g. its dependencies are missing).
    Pending,
    Applied,
    /// Failed to apply; the agent retries.
    Failed,
    /// Removed from the agent after it was withdrawn.
    Removed,
}

/// One agent's report on one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct AgentReport {
    pub key: String,
    pub agent: String,
    pub state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The version of the item's value the report is about: the item's generation, which
    /// grows with every change of the value.
    pub revision: u64,
}

from_map!(
    AgentReport,
    "a report (key, agent, state, message, revision)"
);

impl AgentReport {
    /// A report without a message.
    pub fn new(key: &str, agent: &str, state: ReportState, revision: u64) -> Self {
        AgentReport {
            key: key.into(),
            agent: agent.into(),
            state,
            message: None,
            revision,
        }
    }
}
