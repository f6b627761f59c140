//! What every controller of one engine shares: the store, the reflectors, the object locks,
//! the events and the callbacks running.

use super::events::Events;
use super::locks::ObjectLocks;
use super::pending::Callbacks;
use super::reflector::Reflectors;
use reactor_core::object::ObjectKey;
use reactor_nimbus::{ITEM_KIND, OWNER_NAME, ReportBook};
use reactor_store::Store;
use std::sync::Arc;

/// The store the engine writes through, its shared reflector caches and the locks that keep
/// two callbacks off one object.
#[derive(Clone)]
pub struct EngineContext {
    pub store: Arc<dyn Store>,
    pub reflectors: Arc<Reflectors>,
    pub locks: ObjectLocks,
    pub events: Events,
    /// The callbacks running now and the writes each holds until it ends.
    pub callbacks: Arc<Callbacks>,
    /// Agents' latest reports on the items the engine's reactors published.
    pub reports: ReportBook,
}

impl EngineContext {
    /// A context on `store` with fresh reflectors and report book (needs a tokio runtime).
    pub fn new(store: Arc<dyn Store>, locks: ObjectLocks) -> Self {
        Self {
            // A reactor's `published` lists its own items: by the owner's name, not all.
            reflectors: Arc::new(Reflectors::new(store.clone()).indexing(ITEM_KIND, OWNER_NAME)),
            reports: ReportBook::start(store.clone()),
            store,
            locks,
            events: Events::default(),
            callbacks: Arc::default(),
        }
    }

    /// What `component`'s callback on `key` reads and writes through: its pending writes
    /// while it runs, the store itself otherwise.
    pub fn store_for(&self, component: &str, key: &ObjectKey) -> Arc<dyn Store> {
        match self.callbacks.find(component, key) {
            Some(pending) => pending,
            None => self.store.clone(),
        }
    }
}
