//! What every controller of one engine shares: the store, the reflectors, the object locks
//! and the events.

use super::events::Events;
use super::locks::ObjectLocks;
use super::reflector::Reflectors;
use crate::store::Store;
use std::sync::Arc;

/// The store the engine writes through, its shared reflector caches and the locks that keep
/// two callbacks off one object.
#[derive(Clone)]
pub struct EngineContext {
    pub store: Arc<dyn Store>,
    pub reflectors: Arc<Reflectors>,
    pub locks: ObjectLocks,
    pub events: Events,
}

impl EngineContext {
    /// A context on `store` with fresh reflectors.
    pub fn new(store: Arc<dyn Store>, locks: ObjectLocks) -> Self {
        Self {
            reflectors: Arc::new(Reflectors::new(store.clone())),
            store,
            locks,
            events: Events::default(),
        }
    }
}
