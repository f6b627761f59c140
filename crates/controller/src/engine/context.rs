//! What every controller of one engine shares: the store, the reflectors, the object locks,
//! the events and the callbacks running.

use crate::events::Events;
use crate::reactor::{Reactor, ReactorInfo, Validators};
use crate::run::locks::ObjectLocks;
use crate::run::pending::Callbacks;
use crate::watch::reflector::Reflectors;
use reactor_core::object::ObjectKey;
use reactor_nimbus::{ITEM_KIND, OWNER_NAME, ReportBook};
use reactor_store::Store;
use std::sync::{Arc, OnceLock, Weak};

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
    /// The engine on this context, once it is made: who validates a kind, for users' and
    /// guests' writes alike. Weak: the engine holds the context.
    validators: Arc<OnceLock<Weak<dyn Validators>>>,
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
            validators: Arc::default(),
        }
    }

    /// The same context reading through `reflectors` instead (a test's caches).
    pub fn with_reflectors(self, reflectors: Arc<Reflectors>) -> Self {
        Self { reflectors, ..self }
    }

    /// Makes `validators` the one answering [`Self::validators_of`] (the engine, once).
    pub(crate) fn set_validators(&self, validators: Weak<dyn Validators>) {
        // An engine makes its context: a second engine on one context is a bug upstream,
        // and the first one keeps answering.
        let _ = self.validators.set(validators);
    }

    /// The reactors validating `kind`, but `except` (the writer's own component): none on a
    /// context without an engine.
    pub fn validators_of(
        &self,
        kind: &str,
        except: Option<&str>,
    ) -> Vec<(ReactorInfo, Arc<dyn Reactor>)> {
        let Some(validators) = self.validators.get().and_then(Weak::upgrade) else {
            return Vec::new();
        };
        let mut found = validators.validators_of(kind);
        found.retain(|(info, _)| Some(info.name.as_str()) != except);
        found
    }

    /// Whether a reactor of the engine reconciles or watches `kind`.
    pub fn expects_kind(&self, kind: &str) -> bool {
        (self.validators.get().and_then(Weak::upgrade)).is_some_and(|v| v.expects_kind(kind))
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
