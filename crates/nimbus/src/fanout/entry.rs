//! One item as the fan-out holds it (decoded once, its feed line serialized once and shared
//! by every agent it is meant for), and one change of the log.

use crate::{AgentItem, FeedEvent, ItemTarget};
use bytes::Bytes;
use reactor_core::object::Revision;
use serde_json::Value;
use std::sync::Arc;

/// An item's current state, serialized once: the feed line that puts it, and within that
/// line the item as a snapshot lists it.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) target: ItemTarget,
    /// The item's generation: grows with every change of the value or target.
    pub(crate) version: u64,
    /// The feed line that puts this version: `{"type":"put","item":…,"revision":…}` and a
    /// newline.
    pub(crate) put_line: Bytes,
    /// The item as JSON, `{"key":…,"value":…,"version":…}`: a part of `put_line`.
    pub(crate) item_json: Bytes,
}

impl Entry {
    pub(crate) fn new(
        key: String,
        value: Value,
        target: ItemTarget,
        version: u64,
        revision: Revision,
    ) -> Self {
        let item = AgentItem {
            key,
            value,
            version,
        };
        // Serializing these types (strings, numbers, JSON values) cannot fail.
        let json = serde_json::to_vec(&item).unwrap_or_default();
        // The line `FeedEvent::Put` serializes to, with the item written once.
        let mut line = Vec::with_capacity(json.len() + 48);
        line.extend_from_slice(PUT_PREFIX);
        line.extend_from_slice(&json);
        line.extend_from_slice(format!(",\"revision\":{revision}}}\n").as_bytes());
        let put_line = Bytes::from(line);
        let item_json = put_line.slice(PUT_PREFIX.len()..PUT_PREFIX.len() + json.len());
        Entry {
            key: item.key,
            target,
            version,
            put_line,
            item_json,
        }
    }
}

/// What a put line starts with, before its item.
const PUT_PREFIX: &[u8] = br#"{"type":"put","item":"#;

/// One change of the items, at a revision: a new version, or a delete.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) revision: Revision,
    pub(crate) key: String,
    /// The item after the change; `None` when it was deleted.
    pub(crate) now: Option<Arc<Entry>>,
    /// Whom the item was meant for before the change; `None` if it did not exist. An agent
    /// it was meant for, and is no longer, gets the delete: so a feed needs no memory of
    /// what it sent.
    pub(crate) before: Option<ItemTarget>,
    /// The feed line that deletes the key at this revision (also sent to an agent the item
    /// stopped being meant for).
    pub(crate) delete_line: Bytes,
}

impl Change {
    pub(crate) fn put(revision: Revision, entry: Arc<Entry>, before: Option<ItemTarget>) -> Self {
        Change {
            revision,
            key: entry.key.clone(),
            delete_line: delete_line(&entry.key, revision),
            now: Some(entry),
            before,
        }
    }

    pub(crate) fn delete(revision: Revision, key: String, before: ItemTarget) -> Self {
        Change {
            revision,
            delete_line: delete_line(&key, revision),
            key,
            now: None,
            before: Some(before),
        }
    }

    /// Bytes the log holds for it (the value is shared with the index while current).
    pub(crate) fn size(&self) -> usize {
        let target = |t: &ItemTarget| match t {
            ItemTarget::Agents(ids) => ids.iter().map(|id| id.len() + 24).sum(),
            ItemTarget::Labels(labels) => labels.iter().map(|(k, v)| k.len() + v.len() + 48).sum(),
        };
        self.delete_line.len()
            + self.now.as_ref().map_or(0, |e| e.put_line.len())
            + self.before.as_ref().map_or(0, target)
            + 64
    }
}

fn delete_line(key: &str, revision: Revision) -> Bytes {
    line(&FeedEvent::Delete {
        key: key.to_owned(),
        revision,
    })
}

/// A feed event as one newline-terminated JSON line.
pub(crate) fn line(event: &FeedEvent) -> Bytes {
    // Serializing these types (strings, numbers, JSON values) cannot fail.
    let mut bytes = serde_json::to_vec(event).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_put_line_and_the_item_are_the_feed_event_and_the_agent_item() {
        let target = ItemTarget::Labels(BTreeMap::from([("role".into(), "web".into())]));
        let value = serde_json::json!({"name": "r\"1", "ports": [80, 443]});
        let entry = Entry::new("k/1".into(), value.clone(), target, 3, 42);
        let item = AgentItem {
            key: "k/1".into(),
            value,
            version: 3,
        };
        let put = FeedEvent::Put {
            item: item.clone(),
            revision: 42,
        };
        assert_eq!(entry.put_line, line(&put));
        let listed: AgentItem = serde_json::from_slice(&entry.item_json).expect("an item");
        assert_eq!(listed, item);
    }
}
