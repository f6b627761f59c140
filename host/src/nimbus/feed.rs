//! What one agent receives: the items meant for it as a snapshot, then as changes from a
//! revision. Status-only changes of an item (agents' reports) are not sent, and an item that
//! stops being meant for the agent is sent as a delete.

use super::{ITEM_KIND, Item, NimbusError};
use crate::object::{Object, Revision, Selector};
use crate::store::{EventType, Store, StoreError};
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

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

/// Who is asking: the agent's id and labels.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub id: String,
    pub labels: BTreeMap<String, String>,
}

impl Recipient {
    fn wants(&self, item: &Item) -> bool {
        item.target.selects(&self.id, &self.labels)
    }

    fn agent_item(&self, object: &Object) -> Option<AgentItem> {
        let item = Item::from_object(object)?;
        if !self.wants(&item) {
            return None;
        }
        Some(AgentItem {
            key: item.key,
            value: item.value,
            version: object.meta.generation,
        })
    }
}

/// The items meant for `recipient` now.
pub async fn snapshot(store: &dyn Store, recipient: &Recipient) -> Result<Snapshot, NimbusError> {
    let listing = store.list(ITEM_KIND, &Selector::default()).await?;
    let mut items: Vec<AgentItem> = listing
        .items
        .iter()
        .filter_map(|o| recipient.agent_item(o))
        .collect();
    items.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Snapshot {
        items,
        revision: listing.revision,
    })
}

/// The changes after `from` for `recipient`, who holds `known` (key → version). Ends with
/// an error if the store can no longer serve it (e.g. `from` was compacted: re-list).
pub async fn follow(
    store: &dyn Store,
    recipient: Recipient,
    from: Revision,
    known: HashMap<String, u64>,
) -> Result<impl Stream<Item = Result<FeedEvent, StoreError>> + Send + use<>, NimbusError> {
    // An agent ahead of the store (whose store was replaced) re-lists, as after compaction.
    let events = match store.watch(Some(ITEM_KIND), from).await {
        Err(StoreError::Future { requested, latest }) => Err(StoreError::Compacted {
            requested,
            oldest: latest,
        }),
        watched => watched,
    }?;
    let mut known = known;
    Ok(events.filter_map(move |event| {
        let line = match event {
            Err(e) => Some(Err(e)),
            Ok(event) => translate(&recipient, &mut known, event).map(Ok),
        };
        futures::future::ready(line)
    }))
}

fn translate(
    recipient: &Recipient,
    known: &mut HashMap<String, u64>,
    event: crate::store::WatchEvent,
) -> Option<FeedEvent> {
    let revision = event.revision;
    let object = match event.event_type {
        EventType::Bookmark => return Some(FeedEvent::Bookmark { revision }),
        _ => event.object?,
    };
    let key = object.spec.get("key").and_then(Value::as_str)?.to_owned();
    let wanted = match event.event_type {
        EventType::Deleted => None,
        _ => recipient.agent_item(&object),
    };
    match wanted {
        Some(item) => {
            if known.get(&item.key) == Some(&item.version) {
                // The item's value is the one the agent holds: a status-only change.
                return None;
            }
            known.insert(item.key.clone(), item.version);
            Some(FeedEvent::Put { item, revision })
        }
        None => known
            .remove(&key)
            .map(|_| FeedEvent::Delete { key, revision }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nimbus::{ItemTarget, Owner, publish, unpublish};
    use crate::store::{EmbeddedStore, EmbeddedStoreOptions};
    use serde_json::json;

    fn owner() -> Owner {
        Owner {
            kind: "Policy".into(),
            name: "p".into(),
            component: "test".into(),
        }
    }

    fn web() -> Recipient {
        Recipient {
            id: "a1".into(),
            labels: BTreeMap::from([("role".into(), "web".into())]),
        }
    }

    fn role(value: &str) -> ItemTarget {
        ItemTarget::Labels(BTreeMap::from([("role".into(), value.into())]))
    }

    #[tokio::test]
    async fn an_agent_gets_its_items_and_a_delete_when_one_stops_being_meant_for_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        publish(&store, &owner(), "k/web", json!(1), role("web"))
            .await
            .expect("publish");
        publish(&store, &owner(), "k/db", json!(2), role("db"))
            .await
            .expect("publish");
        let start = snapshot(&store, &web()).await.expect("snapshot");
        assert_eq!(
            start.items.iter().map(|i| &i.key[..]).collect::<Vec<_>>(),
            vec!["k/web"]
        );
        let known = start
            .items
            .iter()
            .map(|i| (i.key.clone(), i.version))
            .collect();
        let mut feed = Box::pin(
            follow(&store, web(), start.revision, known)
                .await
                .expect("follow"),
        );
        // A report (status only) is not news; a new value is.
        store
            .set_status(
                ITEM_KIND,
                &super::super::items::object_name("k/web"),
                json!({"agents": {}}),
                None,
            )
            .await
            .expect("status");
        publish(&store, &owner(), "k/web", json!(10), role("web"))
            .await
            .expect("publish");
        publish(&store, &owner(), "k/web", json!(10), role("db"))
            .await
            .expect("retarget");
        publish(&store, &owner(), "k/new", json!(3), role("web"))
            .await
            .expect("publish");
        unpublish(&store, &owner(), "k/db")
            .await
            .expect("unpublish");
        unpublish(&store, &owner(), "k/new")
            .await
            .expect("unpublish");
        let mut seen = Vec::new();
        while seen.len() < 4 {
            match feed.next().await.expect("open").expect("event") {
                FeedEvent::Bookmark { .. } => {}
                FeedEvent::Put { item, .. } => {
                    seen.push(format!("put {} {}", item.key, item.value))
                }
                FeedEvent::Delete { key, .. } => seen.push(format!("delete {key}")),
            }
        }
        assert_eq!(
            seen,
            vec![
                "put k/web 10",
                "delete k/web",
                "put k/new 3",
                "delete k/new"
            ]
        );
    }
}
