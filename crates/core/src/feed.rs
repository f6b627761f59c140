//! What one agent receives, as the wire has it: the items meant for it as a snapshot, then
//! the feed's lines (`put`, `delete`, `bookmark`) from a revision.

use crate::object::Revision;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An item as an agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentItem {
    pub key: String,
    pub value: Value,
    /// The item's generation: grows with every change of the value.
    pub version: u64,
}

/// The items meant for an agent at one revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub items: Vec<AgentItem>,
    /// Follow the changes from here.
    pub revision: Revision,
}

/// One line of an agent's feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FeedEvent {
    Put {
        item: AgentItem,
        revision: Revision,
    },
    Delete {
        key: String,
        revision: Revision,
    },
    /// Nothing for this agent up to `revision`.
    Bookmark {
        revision: Revision,
    },
}

impl FeedEvent {
    pub fn revision(&self) -> Revision {
        match self {
            Self::Put { revision, .. }
            | Self::Delete { revision, .. }
            | Self::Bookmark { revision } => *revision,
        }
    }
}
