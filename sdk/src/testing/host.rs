//! The [`FakeHost`]: set up what the host would hold, and read what callbacks did.

use super::LogLine;
use super::current;
use super::state::State;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;

#[cfg(feature = "controller")]
use super::Item;
#[cfg(feature = "controller")]
use crate::nimbus::NimbusError;
#[cfg(feature = "controller")]
use crate::store::StoreError;
#[cfg(feature = "controller")]
use crate::{ItemStatus, Object};

/// A host in the test's own process: a store, Nimbus, a log and a config, for one
/// component. Callbacks run through it ([`on_create`](FakeHost::on_create) and friends, or
/// [`run`](FakeHost::run) for any code) see it as their host.
pub struct FakeHost {
    pub(super) state: Rc<RefCell<State>>,
}

impl std::fmt::Debug for FakeHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeHost")
            .field("component", &self.state.borrow().component)
            .finish_non_exhaustive()
    }
}

impl FakeHost {
    /// An empty host running component `component` (the name owners carry).
    pub fn new(component: impl Into<String>) -> Self {
        let state = State {
            component: component.into(),
            ..State::default()
        };
        Self {
            state: Rc::new(RefCell::new(state)),
        }
    }

    /// Runs `f` with this host installed, outside any callback (no primary object: writes
    /// through the store and Nimbus are refused).
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let _installed = current::install(self.state.clone());
        f()
    }

    /// Sets the component's config, as the host's config file would (its revision grows).
    ///
    /// # Panics
    /// When `value` does not serialize to JSON.
    pub fn set_config<T: Serialize + ?Sized>(&mut self, value: &T) {
        let text = match serde_json::to_string(value) {
            Ok(text) => text,
            Err(e) => panic!("FakeHost::set_config: the config is not JSON: {e}"),
        };
        let mut state = self.state.borrow_mut();
        state.config = Some(text);
        state.config_revision += 1;
    }

    /// Every line logged so far, oldest first.
    pub fn logs(&self) -> Vec<LogLine> {
        self.state.borrow().logs.clone()
    }
}

#[cfg(feature = "controller")]
impl FakeHost {
    /// Stores `obj` as a user's apply would: created with a uid, or its labels and spec
    /// changed (and its status, when `obj` has one). Returns it as stored.
    ///
    /// # Panics
    /// When the kind, name or spec would be refused by the host (a mistake in the test).
    pub fn put(&mut self, obj: Object) -> Object {
        if let Err(e) = super::objects::check_object(&obj) {
            panic!(
                "FakeHost::put: the host would refuse {}/{}: {e:?}",
                obj.kind, obj.name
            );
        }
        let mut state = self.state.borrow_mut();
        state.world.upsert(&obj, None)
    }

    /// The object `kind/name` as stored, if any.
    pub fn get(&self, kind: &str, name: &str) -> Option<Object> {
        let state = self.state.borrow();
        state
            .world
            .objects
            .get(&(kind.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Every stored object of `kind`, by name.
    pub fn list(&self, kind: &str) -> Vec<Object> {
        let state = self.state.borrow();
        state
            .world
            .objects
            .values()
            .filter(|o| o.kind == kind)
            .cloned()
            .collect()
    }

    /// The status of `kind/name`, parsed; `None` when it has none (or does not exist).
    pub fn status(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let text = self.get(kind, name)?.status?;
        serde_json::from_str(&text).ok()
    }

    /// Every published item, by key.
    pub fn items(&self) -> Vec<Item> {
        self.state.borrow().world.items.values().cloned().collect()
    }

    /// The item `key`, if published.
    pub fn item(&self, key: &str) -> Option<Item> {
        self.state.borrow().world.items.get(key).cloned()
    }

    /// Records an agent's report on an item (the latest per key and agent is kept), as
    /// `nimbus::statuses` returns it to the item's owner.
    pub fn report(&mut self, status: ItemStatus) {
        let key = (status.key.clone(), status.agent.clone());
        self.state.borrow_mut().world.reports.insert(key, status);
    }

    /// Makes the next store call (of any callback) fail with `error`; queued in order.
    pub fn fail_next_store(&mut self, error: StoreError) {
        self.state.borrow_mut().store_failures.push_back(error);
    }

    /// Makes the next Nimbus call fail with `error`; queued in order.
    pub fn fail_next_nimbus(&mut self, error: NimbusError) {
        self.state.borrow_mut().nimbus_failures.push_back(error);
    }
}
