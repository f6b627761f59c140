//! Reflectors: list and watch one kind into a cache, resume after a broken stream, and re-list
//! after "compacted", synthesizing deletes for what vanished. One per kind however many
//! components watch it: [`Reflectors::acquire`] shares it, and it stops with its last user.

use crate::object::{Object, Revision, Selector};
use crate::store::{EventType, Store, StoreError};
use futures::StreamExt;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// A change a reflector saw; the cache already reflects it when subscribers get it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReflectorEvent {
    /// Created or updated.
    Applied(Object),
    /// Removed from the store (seen in the stream, or found missing by a re-list).
    Deleted(Object),
}

impl ReflectorEvent {
    pub fn object(&self) -> &Object {
        match self {
            Self::Applied(o) | Self::Deleted(o) => o,
        }
    }
}

struct ReflectorState {
    kind: String,
    cache: RwLock<HashMap<String, Object>>,
    events: broadcast::Sender<ReflectorEvent>,
    /// The revision the cache reflects; `None` until the first list.
    synced: watch::Sender<Option<Revision>>,
}

impl ReflectorState {
    fn read(&self) -> parking_lot::RwLockReadGuard<'_, HashMap<String, Object>> {
        self.cache.read()
    }
    fn write(&self) -> parking_lot::RwLockWriteGuard<'_, HashMap<String, Object>> {
        self.cache.write()
    }
}

/// The cache of one kind, kept current by a background task that ends when this is dropped.
pub struct Reflector {
    shared: Arc<ReflectorState>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Reflector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("kind", &self.shared.kind)
            .finish()
    }
}

impl Drop for Reflector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Reflector {
    /// Starts reflecting `kind` from `store`.
    pub fn start(store: Arc<dyn Store>, kind: &str) -> Self {
        let (events, _) = broadcast::channel(4096);
        let (synced, _) = watch::channel(None);
        let shared = Arc::new(ReflectorState {
            kind: kind.to_owned(),
            cache: RwLock::new(HashMap::new()),
            events,
            synced,
        });
        let task = tokio::spawn(run(store, shared.clone()));
        Self { shared, task }
    }

    pub fn kind(&self) -> &str {
        &self.shared.kind
    }

    pub fn get(&self, name: &str) -> Option<Object> {
        self.shared.read().get(name).cloned()
    }

    /// The uid of a cached object, without copying the object.
    pub fn uid(&self, name: &str) -> Option<String> {
        self.shared.read().get(name).map(|o| o.meta.uid.clone())
    }

    pub fn list(&self, selector: &Selector) -> Vec<Object> {
        let mut items: Vec<Object> = self
            .shared
            .read()
            .values()
            .filter(|o| selector.matches(&o.labels))
            .cloned()
            .collect();
        items.sort_by(|a, b| a.name.cmp(&b.name));
        items
    }

    /// Names of every cached object, for a subscriber (re)starting from the level state.
    pub fn names(&self) -> Vec<String> {
        self.shared.read().keys().cloned().collect()
    }

    /// Changes from now on. A subscriber that lags should re-read [`Reflector::names`].
    pub fn subscribe(&self) -> broadcast::Receiver<ReflectorEvent> {
        self.shared.events.subscribe()
    }

    /// Waits until the first list is in the cache; answers the revision it reflects.
    pub async fn synced(&self) -> Revision {
        let mut synced = self.shared.synced.subscribe();
        loop {
            if let Some(revision) = *synced.borrow_and_update() {
                return revision;
            }
            if synced.changed().await.is_err() {
                return 0;
            }
        }
    }

    /// Changes sent that some subscriber has not taken yet.
    pub fn unread(&self) -> usize {
        self.shared.events.len()
    }

    /// The revision the cache reflects now.
    pub fn revision(&self) -> Option<Revision> {
        *self.shared.synced.borrow()
    }
}

const RETRY: Duration = Duration::from_millis(200);

async fn run(store: Arc<dyn Store>, shared: Arc<ReflectorState>) {
    loop {
        let revision = match relist(store.as_ref(), &shared).await {
            Ok(revision) => revision,
            Err(e) => {
                tracing::warn!(kind = %shared.kind, error = %e, "reflector list failed; retrying");
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        follow(store.as_ref(), &shared, revision).await;
        metrics::counter!("reflector_relists_total", "kind" => shared.kind.clone()).increment(1);
    }
}

/// Replaces the cache with a fresh list, telling subscribers what changed meanwhile.
async fn relist(store: &dyn Store, shared: &ReflectorState) -> Result<Revision, StoreError> {
    let listing = store.list(&shared.kind, &Selector::default()).await?;
    let fresh: HashMap<String, Object> = listing
        .items
        .into_iter()
        .map(|o| (o.name.clone(), o))
        .collect();
    let events = {
        let mut cache = shared.write();
        let events = diff(&cache, &fresh);
        *cache = fresh;
        events
    };
    for event in events {
        let _ = shared.events.send(event);
    }
    shared.synced.send_replace(Some(listing.revision));
    Ok(listing.revision)
}

/// What a subscriber must hear to get from `old` to `new`: applies for new or changed objects,
/// deletes for vanished ones.
pub fn diff(old: &HashMap<String, Object>, new: &HashMap<String, Object>) -> Vec<ReflectorEvent> {
    let mut events: Vec<ReflectorEvent> = old
        .iter()
        .filter(|(name, _)| !new.contains_key(*name))
        .map(|(_, o)| ReflectorEvent::Deleted(o.clone()))
        .collect();
    events.extend(
        new.iter()
            .filter(|(name, o)| {
                old.get(*name)
                    .is_none_or(|prev| prev.meta.revision != o.meta.revision)
            })
            .map(|(_, o)| ReflectorEvent::Applied(o.clone())),
    );
    events
}

/// Watches from `revision`, resuming after broken streams; returns when a re-list is needed.
async fn follow(store: &dyn Store, shared: &ReflectorState, mut revision: Revision) {
    loop {
        let mut stream = match store.watch(Some(&shared.kind), revision).await {
            Ok(stream) => stream,
            Err(StoreError::Compacted { .. }) => return,
            Err(e) => {
                tracing::warn!(kind = %shared.kind, error = %e, "reflector watch failed; retrying");
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    revision = event.revision;
                    apply(shared, event.event_type, event.object);
                    shared.synced.send_replace(Some(revision));
                }
                Err(StoreError::Compacted { .. }) => return,
                Err(e) => {
                    tracing::warn!(kind = %shared.kind, error = %e, "reflector stream broke; resuming");
                    break;
                }
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

fn apply(shared: &ReflectorState, event_type: EventType, object: Option<Object>) {
    let Some(object) = object else { return };
    let event = {
        let mut cache = shared.write();
        match event_type {
            EventType::Deleted => {
                cache.remove(&object.name);
                ReflectorEvent::Deleted(object)
            }
            EventType::Created | EventType::Updated => {
                cache.insert(object.name.clone(), object.clone());
                ReflectorEvent::Applied(object)
            }
            EventType::Bookmark => return,
        }
    };
    let _ = shared.events.send(event);
}

/// The shared reflectors of a host: one per kind while anyone holds it.
#[derive(Default)]
pub struct Reflectors {
    store: Option<Arc<dyn Store>>,
    live: Mutex<HashMap<String, Weak<Reflector>>>,
}

impl std::fmt::Debug for Reflectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflectors")
            .field("kinds", &self.kinds())
            .finish()
    }
}

impl Reflectors {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store: Some(store),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The reflector of `kind`, started if nobody holds one.
    pub fn acquire(&self, kind: &str) -> Option<Arc<Reflector>> {
        let store = self.store.clone()?;
        let mut live = self.live.lock();
        if let Some(existing) = live.get(kind).and_then(Weak::upgrade) {
            return Some(existing);
        }
        let reflector = Arc::new(Reflector::start(store, kind));
        live.insert(kind.to_owned(), Arc::downgrade(&reflector));
        live.retain(|_, weak| weak.strong_count() > 0);
        Some(reflector)
    }

    /// The running reflectors.
    pub fn live(&self) -> Vec<Arc<Reflector>> {
        self.live
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Kinds with a running reflector.
    pub fn kinds(&self) -> Vec<String> {
        let live = self.live.lock();
        let mut kinds: Vec<String> = live
            .iter()
            .filter(|(_, weak)| weak.strong_count() > 0)
            .map(|(kind, _)| kind.clone())
            .collect();
        kinds.sort();
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::ApplyRequest;
    use crate::store::{EmbeddedStore, EmbeddedStoreOptions};

    fn object(name: &str, revision: Revision) -> Object {
        Object {
            kind: "A".into(),
            name: name.into(),
            labels: Default::default(),
            spec: serde_json::Value::Null,
            status: serde_json::Value::Null,
            meta: crate::object::Meta {
                revision,
                ..Default::default()
            },
        }
    }

    #[test]
    fn relist_diff_synthesizes_deletes_for_vanished_objects() {
        let old: HashMap<_, _> = [("a", 1), ("b", 2), ("c", 3)]
            .into_iter()
            .map(|(n, r)| (n.to_string(), object(n, r)))
            .collect();
        let new: HashMap<_, _> = [("b", 2), ("c", 7), ("d", 8)]
            .into_iter()
            .map(|(n, r)| (n.to_string(), object(n, r)))
            .collect();
        let mut events: Vec<(bool, String)> = diff(&old, &new)
            .into_iter()
            .map(|e| {
                (
                    matches!(e, ReflectorEvent::Deleted(_)),
                    e.object().name.clone(),
                )
            })
            .collect();
        events.sort();
        assert_eq!(
            events,
            vec![(false, "c".into()), (false, "d".into()), (true, "a".into())],
            "a deleted, c changed, d new, b untouched"
        );
    }

    async fn within<T>(f: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .expect("within 10s")
    }

    #[tokio::test]
    async fn shared_per_kind_follows_changes_and_stops_with_its_last_user() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(
            EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"),
        );
        let req = |name: &str| ApplyRequest {
            kind: "A".into(),
            name: name.into(),
            labels: Default::default(),
            spec: serde_json::json!(1),
            expected_revision: None,
            owner: None,
        };
        store.apply(vec![req("before")]).await.expect("apply");
        let reflectors = Reflectors::new(store.clone());
        let first = reflectors.acquire("A").expect("reflector");
        let second = reflectors.acquire("A").expect("reflector");
        assert!(Arc::ptr_eq(&first, &second), "one reflector per kind");
        assert_eq!(within(first.synced()).await, 1);
        assert!(first.get("before").is_some());

        let mut events = first.subscribe();
        store.apply(vec![req("after")]).await.expect("apply");
        let seen = within(events.recv()).await.expect("event");
        assert!(
            matches!(&seen, ReflectorEvent::Applied(o) if o.name == "after"),
            "{seen:?}"
        );
        store.delete("A", "before", None).await.expect("delete");
        let seen = within(events.recv()).await.expect("event");
        assert!(
            matches!(&seen, ReflectorEvent::Deleted(o) if o.name == "before"),
            "{seen:?}"
        );
        assert_eq!(first.names(), vec!["after".to_string()]);

        assert_eq!(reflectors.kinds(), vec!["A".to_string()]);
        drop(first);
        assert_eq!(
            reflectors.kinds(),
            vec!["A".to_string()],
            "still held by the second user"
        );
        drop(second);
        assert!(reflectors.kinds().is_empty(), "stopped with its last user");
        drop(events);
    }
}
