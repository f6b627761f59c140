//! Reflectors: list and watch one kind into a cache, resume after a broken stream, and re-list
//! after "compacted", synthesizing deletes for what vanished. One per kind however many
//! components watch it: [`Reflectors::acquire`] shares it, and it stops with its last user.

mod cache;

use cache::Cache;

use futures::{FutureExt, StreamExt};
use parking_lot::{Mutex, RwLock};
use reactor_core::object::{Object, Revision, Selector};
use reactor_store::{EventType, Store, StoreError};
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// A change a reflector saw; the cache already reflects it when subscribers get it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReflectorEvent {
    /// Created or updated.
    Applied(Arc<Object>),
    /// Removed from the store (seen in the stream, or found missing by a re-list).
    Deleted(Arc<Object>),
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
    cache: RwLock<Cache>,
    events: broadcast::Sender<ReflectorEvent>,
    /// The revision the cache reflects; `None` until the first list.
    synced: watch::Sender<Option<Revision>>,
}

impl ReflectorState {
    fn read(&self) -> parking_lot::RwLockReadGuard<'_, Cache> {
        self.cache.read()
    }
    fn write(&self) -> parking_lot::RwLockWriteGuard<'_, Cache> {
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
    /// Starts reflecting `kind` from `store`, indexing the values of `label` if given.
    pub fn start(store: Arc<dyn Store>, kind: &str, label: Option<&str>) -> Self {
        let (events, _) = broadcast::channel(4096);
        let (synced, _) = watch::channel(None);
        let shared = Arc::new(ReflectorState {
            kind: kind.to_owned(),
            cache: RwLock::new(Cache::new(label)),
            events,
            synced,
        });
        let task = tokio::spawn(run(store, shared.clone()));
        Self { shared, task }
    }

    pub fn kind(&self) -> &str {
        &self.shared.kind
    }

    pub fn get(&self, name: &str) -> Option<Arc<Object>> {
        self.shared.read().get(name).cloned()
    }

    /// The uid of a cached object, without copying the object.
    pub fn uid(&self, name: &str) -> Option<String> {
        self.shared.read().get(name).map(|o| o.meta.uid.clone())
    }

    /// The cached objects `selector` matches, by name.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<Object>> {
        self.shared.read().select(selector)
    }

    /// Names of every cached object, for a subscriber (re)starting from the level state.
    pub fn names(&self) -> Vec<String> {
        self.shared.read().objects().keys().cloned().collect()
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

    /// Waits until the cache reflects `revision`: a change of this kind made there is in it.
    /// (Changes of other kinds do not move a reflector on, so wait only for a revision at
    /// which this kind changed.)
    pub async fn reached(&self, revision: Revision) {
        let mut synced = self.shared.synced.subscribe();
        while !synced.borrow_and_update().is_some_and(|at| at >= revision) {
            if synced.changed().await.is_err() {
                return;
            }
        }
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
        metrics::counter!(reactor_core::metrics::REFLECTOR_RELISTS, "kind" => shared.kind.clone())
            .increment(1);
    }
}

/// Replaces the cache with a fresh list, telling subscribers what changed meanwhile.
async fn relist(store: &dyn Store, shared: &ReflectorState) -> Result<Revision, StoreError> {
    let listing = store.list(&shared.kind, &Selector::default()).await?;
    let fresh: HashMap<String, Arc<Object>> = listing
        .items
        .into_iter()
        .map(|o| (o.name.clone(), Arc::new(o)))
        .collect();
    let events = {
        let mut cache = shared.write();
        let events = diff(cache.objects(), &fresh);
        cache.replace(fresh);
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
pub fn diff(
    old: &HashMap<String, Arc<Object>>,
    new: &HashMap<String, Arc<Object>>,
) -> Vec<ReflectorEvent> {
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
        while let Some(mut item) = stream.next().await {
            // Every event ready is applied before the revision is said to be reached: the
            // events of one transaction may share a revision (etcd), and arrive together.
            let broke = loop {
                match item {
                    Ok(event) => {
                        if event.revision != revision {
                            // What came before this revision is whole, even amid a long run.
                            shared.synced.send_if_modified(|at| {
                                let moved = *at != Some(revision);
                                *at = Some(revision);
                                moved
                            });
                        }
                        revision = event.revision;
                        apply(shared, event.event_type, event.object);
                    }
                    Err(StoreError::Compacted { .. }) => return,
                    Err(e) => break Some(e),
                }
                match stream.next().now_or_never() {
                    Some(Some(next)) => item = next,
                    _ => break None,
                }
            };
            shared.synced.send_replace(Some(revision));
            if let Some(e) = broke {
                tracing::warn!(kind = %shared.kind, error = %e, "reflector stream broke; resuming");
                break;
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

fn apply(shared: &ReflectorState, event_type: EventType, object: Option<Arc<Object>>) {
    let Some(object) = object else { return };
    let event = {
        let mut cache = shared.write();
        match event_type {
            EventType::Deleted => {
                cache.remove(&object.name);
                ReflectorEvent::Deleted(object)
            }
            EventType::Created | EventType::Updated => {
                cache.insert(object.clone());
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
    /// The label each kind's reflector indexes, if any.
    indexed: HashMap<String, String>,
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
            indexed: HashMap::new(),
        }
    }

    /// The reflector of `kind` will index the values of `label`: listings that require one
    /// read only the objects carrying it.
    pub fn indexing(mut self, kind: &str, label: &str) -> Self {
        self.indexed.insert(kind.to_owned(), label.to_owned());
        self
    }

    /// The reflector of `kind`, started if nobody holds one.
    pub fn acquire(&self, kind: &str) -> Option<Arc<Reflector>> {
        let store = self.store.clone()?;
        let mut live = self.live.lock();
        if let Some(existing) = live.get(kind).and_then(Weak::upgrade) {
            return Some(existing);
        }
        let label = self.indexed.get(kind).map(String::as_str);
        let reflector = Arc::new(Reflector::start(store, kind, label));
        live.insert(kind.to_owned(), Arc::downgrade(&reflector));
        live.retain(|_, weak| weak.strong_count() > 0);
        Some(reflector)
    }

    /// The reflector of `kind` if one is running (none is started).
    pub fn running(&self, kind: &str) -> Option<Arc<Reflector>> {
        self.live.lock().get(kind).and_then(Weak::upgrade)
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
mod tests;
