//! The writes of one callback, held until it ends and then committed in one store
//! transaction: reads inside the callback see them, and a failed callback leaves none.

use crate::watch::reflector::{Reflector, Reflectors};
use async_trait::async_trait;
use parking_lot::Mutex;
use reactor_core::object::{ApplyRequest, Object, ObjectKey, Revision, Selector};
use reactor_store::{Applied, EventType, Listing, Store, StoreError, WatchStream, Write, Written};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// How long a read waits for a cache to show the callback's earlier writes before it reads
/// the store instead.
pub(crate) const CACHE_WAIT: Duration = Duration::from_secs(1);

/// The writes of one callback so far, as a [`Store`] the callback reads and writes through.
/// Every write is decided at once by the store's own rules (so a refusal reaches the guest
/// where it wrote), kept, and sent with the others by [`Pending::take`]'s caller in one
/// [`Store::commit`]. Until then an object created here has revision 0 and a changed one
/// keeps the revision it was read with: the commit decides them again on the same terms, so
/// a write that expected what the callback read still lands only if nobody changed it.
pub struct Pending {
    base: Arc<dyn Store>,
    /// Caches to read from instead of `base`, where one runs.
    cache: Option<CachedReads>,
    /// A shadow's: the serving run beside it, whose reads it shares (see [`Pending::beside`]).
    serving: std::sync::OnceLock<Arc<Pending>>,
    state: Mutex<Staged>,
    /// The most writes the callback may make while it runs (`serve --max-callback-writes`):
    /// each write that changes an object counts, the host's own before and after it do not.
    limit: usize,
}

/// The engine's caches, which a callback reads instead of the store once they show what the
/// controller committed for its object before. A cache behind the store otherwise costs a
/// lost race at commit (every write compares what it was decided from), never a wrong write.
pub struct CachedReads {
    pub reflectors: Arc<Reflectors>,
    /// Per kind, the revision its cache must reach first.
    pub committed_at: Vec<(String, Revision)>,
}

impl CachedReads {
    /// The running cache of `kind`, once it shows the writes it must; `None`: read the store.
    async fn of(&self, kind: &str) -> Option<Arc<Reflector>> {
        let reflector = self.reflectors.running(kind)?;
        let at = (self.committed_at.iter())
            .find(|(k, _)| k == kind)
            .map_or(0, |(_, at)| *at);
        // Reached implies listed: a cache not yet listed has reached nothing.
        tokio::time::timeout(CACHE_WAIT, reflector.reached(at))
            .await
            .ok()?;
        Some(reflector)
    }
}

#[derive(Default)]
struct Staged {
    /// Each object the writes touched, as they left it (`None`: removed).
    objects: HashMap<ObjectKey, Option<Arc<Object>>>,
    /// Objects as first read (from the store, or seeded from the cache): a callback reads
    /// each object from the store at most once, and reads it the same way each time. Shared
    /// with the cache they came from.
    known: HashMap<ObjectKey, Option<Arc<Object>>>,
    writes: Vec<Write>,
    /// Whether the callback runs: its writes count against the limit.
    counting: bool,
    /// The writes the callback made that change something.
    counted: usize,
    /// Why a write of the callback was refused for the limit: it then fails, keeping nothing.
    over_limit: Option<String>,
}

impl Pending {
    pub fn new(base: Arc<dyn Store>, limit: usize) -> Self {
        Self {
            base,
            cache: None,
            serving: std::sync::OnceLock::new(),
            state: Mutex::default(),
            limit,
        }
    }

    /// Reads come from `cache` where it holds the kind.
    pub fn reading_from(mut self, cache: CachedReads) -> Self {
        self.cache = Some(cache);
        self
    }

    /// A shadow's writes beside `serving`'s run on the same object: an object the serving
    /// run read or wrote reads as the serving run first read it, and a listing shows those
    /// objects so, so the serving run's commit (which does not wait for the shadow) never
    /// shows to the shadow and a difference is the code's, not the order's.
    /// Set before the shadow's callback runs, once.
    pub fn beside(&self, serving: Arc<Pending>) {
        let _ = self.serving.set(serving);
    }

    async fn cached(&self, kind: &str) -> Option<Arc<Reflector>> {
        self.cache.as_ref()?.of(kind).await
    }

    /// Reads of `object`'s key answer `object` until a write changes it: the engine seeds a
    /// callback with its primary as the cache holds it, and a stale seed makes the commit
    /// conflict rather than overwrite.
    pub fn seed(&self, object: &Arc<Object>) {
        (self.state.lock().known).insert(object.key(), Some(object.clone()));
    }

    /// The transaction commits only if `key` is still at `revision` (`None`: absent): what
    /// the callback was decided from and called with.
    pub fn require(&self, key: &ObjectKey, revision: Option<Revision>) {
        self.state.lock().writes.push(Write::Check {
            kind: key.kind().to_owned(),
            name: key.name().to_owned(),
            expected: revision,
        });
    }

    /// Whether the transaction changes anything (more than checks).
    pub fn writes_anything(&self) -> bool {
        (self.state.lock().writes.iter()).any(|w| !matches!(w, Write::Check { .. }))
    }

    /// How many more writes the callback may make (what its transaction has room for).
    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.state.lock().counted)
    }

    /// Why a write of the callback was refused for the limit, if one was: a callback over the
    /// limit fails for good whatever it returns, and none of its writes land.
    pub fn over_limit(&self) -> Option<String> {
        self.state.lock().over_limit.clone()
    }

    /// The writes kept so far, in order; the callback's transaction.
    pub fn take(&self) -> Vec<Write> {
        std::mem::take(&mut self.state.lock().writes)
    }

    /// `key`'s object as the callback first read it (`Some(None)`: absent), if it read it.
    pub fn as_read(&self, key: &ObjectKey) -> Option<Option<Arc<Object>>> {
        self.state.lock().known.get(key).cloned()
    }

    /// Every object the callback's writes touched, as they left it (`None`: removed).
    pub fn touched(&self) -> Vec<(ObjectKey, Option<Arc<Object>>)> {
        let state = self.state.lock();
        (state.objects.iter())
            .map(|(key, object)| (key.clone(), object.clone()))
            .collect()
    }

    /// What the callback's writes made of `key`, if they touched it (`Some(None)`: removed).
    pub fn staged(&self, key: &ObjectKey) -> Option<Option<Object>> {
        let state = self.state.lock();
        state.objects.get(key).map(|o| o.as_deref().cloned())
    }

    /// `items` of `kind` (a listing by `selector` from elsewhere) with the callback's writes
    /// applied.
    fn overlay(&self, kind: &str, selector: &Selector, mut items: Vec<Object>) -> Vec<Object> {
        let state = self.state.lock();
        let mine: Vec<(&ObjectKey, &Option<Arc<Object>>)> = state
            .objects
            .iter()
            .filter(|(key, _)| key.kind() == kind)
            .collect();
        if mine.is_empty() {
            return items;
        }
        items.retain(|o| !state.objects.contains_key(&o.key()));
        items.extend(
            mine.into_iter()
                .filter_map(|(_, object)| object.as_deref())
                .filter(|o| selector.matches(&o.labels))
                .cloned(),
        );
        items.sort_by(|a, b| a.name.cmp(&b.name));
        items
    }

    async fn current(&self, key: &ObjectKey) -> Result<Option<Arc<Object>>, StoreError> {
        {
            let state = self.state.lock();
            if let Some(object) = state.objects.get(key) {
                return Ok(object.clone());
            }
            if let Some(object) = state.known.get(key) {
                return Ok(object.clone());
            }
        }
        let read = match self.serving.get().and_then(|s| s.as_read(key)) {
            Some(read) => read,
            None => self.read(key).await?,
        };
        (self.state.lock().known).insert(key.clone(), read.clone());
        Ok(read)
    }

    /// `key`'s object from the cache, or the store.
    async fn read(&self, key: &ObjectKey) -> Result<Option<Arc<Object>>, StoreError> {
        Ok(match self.cached(key.kind()).await {
            Some(cache) => cache.get(key.name()),
            None => self.base.get(key.kind(), key.name()).await?.map(Arc::new),
        })
    }

    /// `items` of `kind` with each object the serving run beside touched as that run read
    /// it (see [`Pending::beside`]).
    fn as_serving_read(
        &self,
        kind: &str,
        selector: &Selector,
        mut items: Vec<Object>,
    ) -> Vec<Object> {
        let Some(serving) = self.serving.get() else {
            return items;
        };
        let touched: HashSet<ObjectKey> = (serving.touched().into_iter())
            .map(|(key, _)| key)
            .filter(|key| key.kind() == kind)
            .collect();
        if touched.is_empty() {
            return items;
        }
        items.retain(|o| !touched.contains(&o.key()));
        for key in &touched {
            if let Some(Some(object)) = serving.as_read(key)
                && selector.matches(&object.labels)
            {
                items.push(Arc::unwrap_or_clone(object));
            }
        }
        items.sort_by(|a, b| a.name.cmp(&b.name));
        items
    }

    /// Refuses `more` writes of the callback over its limit, and remembers the refusal.
    fn room_for(&self, state: &mut Staged, more: usize) -> Result<(), StoreError> {
        if !state.counting || state.counted + more <= self.limit {
            return Ok(());
        }
        let message = format!(
            "one callback may make at most {} writes (serve --max-callback-writes): none of this one's are kept; write the rest in later runs (requeue-after)",
            self.limit
        );
        state.over_limit.get_or_insert_with(|| message.clone());
        Err(StoreError::TxnTooLarge(message))
    }

    /// Decides `writes` on what the callback sees now and keeps them, all or none. The
    /// errors of an apply name the document (counted from 1), as the store's own apply does.
    async fn stage(&self, writes: Vec<Write>, documents: bool) -> Result<Vec<Written>, StoreError> {
        let at = |i: usize, e: StoreError| match documents {
            true => StoreError::in_document(i + 1, e),
            false => e,
        };
        let mut seen = HashSet::new();
        let mut befores = Vec::with_capacity(writes.len());
        for (i, write) in writes.iter().enumerate() {
            let key = write.key();
            if !seen.insert(key.clone()) {
                let twice = StoreError::Invalid(format!("{key} appears twice in one apply"));
                return Err(at(i, twice));
            }
            befores.push(self.current(&key).await.map_err(|e| at(i, e))?);
        }
        let mut changes = Vec::with_capacity(writes.len());
        for (i, (write, before)) in writes.iter().zip(&befores).enumerate() {
            changes.push(write.plan(before.as_deref()).map_err(|e| at(i, e))?);
        }
        let mut state = self.state.lock();
        // Only writes that change something count: a reactor may restate what it wrote before.
        let changing = changes.iter().filter(|c| c.is_some()).count();
        self.room_for(&mut state, changing)?;
        if state.counting {
            state.counted += changing;
        }
        let mut written = Vec::with_capacity(writes.len());
        for ((write, before), change) in writes.into_iter().zip(befores).zip(changes) {
            let key = write.key();
            let Some(change) = change else {
                written.push(Written {
                    revision: before.as_ref().map_or(0, |o| o.meta.revision),
                    object: before,
                    change: None,
                });
                continue;
            };
            let after = (change.event_type != EventType::Deleted).then(|| Arc::new(change.object));
            state.objects.insert(key, after.clone());
            state.writes.push(write);
            written.push(Written {
                object: after,
                change: Some(change.event_type),
                revision: 0,
            });
        }
        Ok(written)
    }
}

#[async_trait]
impl Store for Pending {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        let current = self.current(&ObjectKey::new(kind, name)).await?;
        Ok(current.map(Arc::unwrap_or_clone))
    }

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        let listing = match self.cached(kind).await {
            Some(cache) => Listing {
                items: cache
                    .list(selector)
                    .into_iter()
                    .map(Arc::unwrap_or_clone)
                    .collect(),
                revision: cache.revision().unwrap_or(0),
            },
            None => self.base.list(kind, selector).await?,
        };
        let items = self.as_serving_read(kind, selector, listing.items);
        Ok(Listing {
            items: self.overlay(kind, selector, items),
            revision: listing.revision,
        })
    }

    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        let written = self
            .stage(requests.into_iter().map(Write::Apply).collect(), true)
            .await?;
        written.into_iter().map(Applied::try_from).collect()
    }

    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError> {
        // Nested in the callback's transaction: kept with the rest.
        let mut written = Vec::with_capacity(writes.len());
        for write in writes {
            written.extend(self.stage(vec![write], false).await?);
        }
        Ok(written)
    }

    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        self.base.watch(kind, from).await
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        self.base.revision().await
    }
}

/// The callbacks running now, each with its pending writes, found by the component and the
/// primary object the runtime names in every host call.
#[derive(Default)]
pub struct Callbacks {
    running: Mutex<HashMap<(String, ObjectKey), Arc<Pending>>>,
}

impl Callbacks {
    /// Holds the writes of `component`'s callback on `key` in `pending` until the returned
    /// guard drops (the callback ended, failed or was cancelled); they count against its
    /// limit meanwhile.
    pub fn open<'a>(
        &'a self,
        component: &'a str,
        key: &'a ObjectKey,
        pending: Arc<Pending>,
    ) -> Open<'a> {
        pending.state.lock().counting = true;
        self.running
            .lock()
            .insert((component.to_owned(), key.clone()), pending.clone());
        Open {
            callbacks: self,
            component,
            key,
            pending,
        }
    }

    /// The pending writes of `component`'s callback on `key`, if one is running.
    pub fn find(&self, component: &str, key: &ObjectKey) -> Option<Arc<Pending>> {
        self.running
            .lock()
            .get(&(component.to_owned(), key.clone()))
            .cloned()
    }
}

/// A callback running: while it lives, host calls of the callback find its pending writes.
pub struct Open<'a> {
    callbacks: &'a Callbacks,
    component: &'a str,
    key: &'a ObjectKey,
    pending: Arc<Pending>,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // What the host writes from here on (statuses, finalizers) is its own.
        self.pending.state.lock().counting = false;
        self.callbacks
            .running
            .lock()
            .remove(&(self.component.to_owned(), self.key.clone()));
    }
}
