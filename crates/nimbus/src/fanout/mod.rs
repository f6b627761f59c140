//! The one place a server follows the items for every agent: one store watch of the item
//! kind, each item decoded once and its feed line serialized once, an index for snapshots,
//! and a bounded log every agent's feed reads at its own pace. Memory is O(items + log),
//! not O(items × agents); an agent that falls behind the log re-lists.

mod entry;
mod log;
mod subscriber;

use super::{ITEM_KIND, Item, NimbusError, Recipient, Snapshot};
use bytes::{Bytes, BytesMut};
use entry::Change;
pub(crate) use entry::Entry;
use futures::Stream;
use log::Log;
use parking_lot::RwLock;
use reactor_core::object::Revision;
use reactor_store::{EventType, Listing, Store, StoreError, WatchEvent};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;

/// Bounds of the shared log: the changes kept, and their bytes.
#[derive(Debug, Clone, Copy)]
pub struct FanoutLimits {
    pub max_changes: usize,
    pub max_bytes: usize,
}

impl FanoutLimits {
    /// The default bounds, keeping at most `changes` changes: a feed resumes from no further
    /// back than the store's own watches do.
    pub fn resuming(changes: u64) -> Self {
        let default = Self::default();
        FanoutLimits {
            max_changes: usize::try_from(changes).map_or(default.max_changes, |changes| {
                changes.clamp(1, default.max_changes)
            }),
            ..default
        }
    }
}

impl Default for FanoutLimits {
    /// 100k changes or 64 MiB of lines, whichever is reached first.
    fn default() -> Self {
        FanoutLimits {
            max_changes: 100_000,
            max_bytes: 64 << 20,
        }
    }
}

/// The server's fan-out of items to agents. Cheap to clone; it stops following the store
/// when the last clone is dropped.
#[derive(Clone)]
pub struct Fanout {
    shared: Arc<Shared>,
    store: Arc<dyn Store>,
}

struct Shared {
    state: RwLock<State>,
    /// The log's position, for feeds waiting for news; `None` until the first listing.
    position: watch::Sender<Option<Revision>>,
}

struct State {
    index: HashMap<String, Arc<Entry>>,
    log: Log,
    /// The revision of the last store bookmark: feeds with nothing to send say they got here.
    bookmark: Revision,
}

impl Fanout {
    /// Starts following the items of `store`.
    pub fn start(store: Arc<dyn Store>, limits: FanoutLimits) -> Self {
        let (position, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            state: RwLock::new(State {
                index: HashMap::new(),
                log: Log::new(0, limits.max_changes, limits.max_bytes),
                bookmark: 0,
            }),
            position,
        });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&shared),
            store.clone(),
            ITEM_KIND,
            "item fan-out",
        ));
        Fanout { shared, store }
    }

    /// The items meant for `recipient` now, and the revision to follow them from.
    pub async fn snapshot(&self, recipient: &Recipient) -> Result<Snapshot, NimbusError> {
        let body = self.snapshot_json(recipient).await?;
        serde_json::from_slice(&body).map_err(|e| NimbusError::Invalid(e.to_string()))
    }

    /// [`Fanout::snapshot`] as the JSON the API answers, made of the items as they were
    /// serialized once (not serialized again for every agent that asks).
    pub async fn snapshot_json(&self, recipient: &Recipient) -> Result<Bytes, NimbusError> {
        self.listed().await?;
        let (mut entries, revision) = {
            let state = self.shared.state.read();
            let entries: Vec<Arc<Entry>> = state
                .index
                .values()
                .filter(|entry| recipient.wants(&entry.target))
                .cloned()
                .collect();
            (entries, state.log.position())
        };
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        let size: usize = entries.iter().map(|e| e.item_json.len() + 1).sum();
        let mut body = BytesMut::with_capacity(size + 48);
        body.extend_from_slice(br#"{"items":["#);
        for (i, entry) in entries.iter().enumerate() {
            if i > 0 {
                body.extend_from_slice(b",");
            }
            body.extend_from_slice(&entry.item_json);
        }
        body.extend_from_slice(format!(r#"],"revision":{revision}}}"#).as_bytes());
        Ok(body.freeze())
    }

    /// The feed lines for `recipient` after `from`, who holds `known` (key → version). A
    /// `from` the log no longer reaches, or one ahead of the store, is refused as compacted:
    /// the agent re-lists.
    pub async fn follow(
        &self,
        recipient: Recipient,
        from: Revision,
        known: HashMap<String, u64>,
    ) -> Result<impl Stream<Item = Result<Bytes, StoreError>> + Send + use<>, NimbusError> {
        self.listed().await?;
        let latest = self.store.revision().await?;
        let oldest = self.shared.state.read().log.oldest();
        if from < oldest || from > latest {
            return Err(StoreError::Compacted {
                requested: from,
                oldest,
            }
            .into());
        }
        Ok(subscriber::lines(
            self.shared.clone(),
            recipient,
            from,
            known,
        ))
    }

    /// Every item as the fan-out holds it now.
    pub(crate) async fn items(&self) -> Result<Vec<Arc<Entry>>, NimbusError> {
        self.listed().await?;
        Ok(self.shared.state.read().index.values().cloned().collect())
    }

    /// Waits for the first listing of the items.
    async fn listed(&self) -> Result<(), NimbusError> {
        let mut position = self.shared.position.subscribe();
        position
            .wait_for(Option::is_some)
            .await
            .map(|_| ())
            .map_err(|_| StoreError::Backend("the item fan-out stopped".into()).into())
    }
}

impl reactor_store::Follower for Shared {
    fn listed(&self, listing: Listing) {
        let mut state = self.state.write();
        state.index = listing
            .items
            .iter()
            .filter_map(|object| decode(object, listing.revision))
            .map(|entry| (entry.key.clone(), Arc::new(entry)))
            .collect();
        state.log.restart(listing.revision);
        self.position.send_replace(Some(listing.revision));
    }

    fn changed(&self, event: WatchEvent) {
        self.changed_together(vec![event]);
    }

    fn changed_together(&self, events: Vec<WatchEvent>) {
        // One step: a feed reading between two changes of one revision would take the
        // revision as read and miss the rest of it.
        let position = {
            let mut state = self.state.write();
            for event in events {
                state.apply(event);
            }
            state.log.position()
        };
        self.position.send_replace(Some(position));
    }
}

impl State {
    fn apply(&mut self, event: WatchEvent) {
        let revision = event.revision;
        let object = match (event.event_type, event.object) {
            (EventType::Bookmark, _) | (_, None) => {
                self.bookmark = revision;
                self.log.advance(revision);
                return;
            }
            (_, Some(object)) => object,
        };
        if event.event_type == EventType::Deleted {
            let key = object.spec.get("key").and_then(Value::as_str);
            match key.and_then(|key| self.index.remove(key)) {
                Some(gone) => {
                    let change = Change::delete(revision, gone.key.clone(), gone.target.clone());
                    self.log.push(Arc::new(change));
                }
                None => self.log.advance(revision),
            }
            return;
        }
        let Some(entry) = decode(&object, revision) else {
            self.log.advance(revision);
            return;
        };
        if self
            .index
            .get(&entry.key)
            .is_some_and(|known| known.version == entry.version)
        {
            // A status-only change: no news for any agent.
            self.log.advance(revision);
            return;
        }
        let entry = Arc::new(entry);
        let before = self.index.insert(entry.key.clone(), entry.clone());
        let before = before.map(|before| before.target.clone());
        self.log
            .push(Arc::new(Change::put(revision, entry, before)));
    }
}

/// The entry of an item object; `None` for an object that is not a well-formed item.
fn decode(object: &reactor_core::object::Object, revision: Revision) -> Option<Entry> {
    let item = Item::from_object(object)?;
    Some(Entry::new(
        item.key,
        item.value,
        item.target,
        object.meta.generation,
        revision,
    ))
}

#[cfg(test)]
mod tests;
