//! What one agent receives, as the wire has it: the items meant for it as a snapshot, then
//! the feed's lines (`put`, `delete`, `bookmark`) from a revision. The fan-out serves both.

use super::ItemTarget;
use std::collections::BTreeMap;

pub use reactor_core::feed::{AgentItem, FeedEvent, Snapshot};

/// Who is asking: the agent's id and labels.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub id: String,
    pub labels: BTreeMap<String, String>,
}

impl Recipient {
    /// Whether an item of `target` is meant for this agent.
    pub fn wants(&self, target: &ItemTarget) -> bool {
        target.selects(&self.id, &self.labels)
    }
}
