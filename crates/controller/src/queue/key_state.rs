//! What a controller remembers of each object between runs, and what it recovers from the
//! object's status after a restart (nothing else depends on memory).

use crate::commit::status;
use crate::watch::trigger::Trigger;
use parking_lot::Mutex;
use reactor_core::object::{Object, ObjectKey, Revision};
use std::collections::HashMap;
use std::sync::Arc;

/// What the controller remembers of one object.
#[derive(Debug, Default)]
struct KeyState {
    /// The object as the reactor last handled it successfully.
    handled: Option<Arc<Object>>,
    /// What the last event showed of the fields a reactor reacts to.
    seen: Option<Trigger>,
    /// Run even if nothing changed (resync, requeue-after, first sight).
    forced: bool,
    /// The uid of the object whose `on-delete` succeeded here. Until the reflector sees our
    /// own finalizer removal, its cache still shows that object deleting, with a status that
    /// says it was handled: a run then must only release it, not call `on-delete` again.
    deleted: Option<String>,
    /// Per kind, the revision at which this controller's commits for the object last changed
    /// an object of that kind: a cache of the kind that has reached it shows those writes.
    committed: Vec<(String, Revision)>,
}

/// One controller's memory of every object it has seen.
#[derive(Debug, Default)]
pub struct KeyStates {
    keys: Mutex<HashMap<ObjectKey, KeyState>>,
}

/// What a run starts from.
#[derive(Debug)]
pub struct RunStart {
    /// The object as the reactor last handled it (from memory, or from its status).
    pub handled: Option<Arc<Object>>,
    pub forced: bool,
    /// `on-delete` already succeeded for this object (its release may not have been seen).
    pub delete_handled: bool,
}

impl KeyStates {
    fn keys(&self) -> parking_lot::MutexGuard<'_, HashMap<ObjectKey, KeyState>> {
        self.keys.lock()
    }

    /// Records what an event showed of `key` (`None`: deleted); answers whether anything the
    /// reactor reacts to changed.
    pub fn saw(&self, key: &ObjectKey, now: Option<Trigger>) -> bool {
        let mut keys = self.keys();
        let state = keys.entry(key.clone()).or_default();
        let relevant = state.seen != now || now.is_none();
        state.seen = now;
        relevant
    }

    /// The next run of `key` runs even if nothing changed.
    pub fn force(&self, key: &ObjectKey) {
        self.keys().entry(key.clone()).or_default().forced = true;
    }

    /// Takes what a run of `key` starts from. After a restart nothing is in memory: the
    /// status of `current` says which generation `reactor` handled.
    pub fn start_run(&self, key: &ObjectKey, current: Option<&Object>, reactor: &str) -> RunStart {
        let mut keys = self.keys();
        let state = keys.entry(key.clone()).or_default();
        let forced = std::mem::take(&mut state.forced);
        let uid = current.map(|o| o.meta.uid.as_str());
        if state.deleted.is_some() && state.deleted.as_deref() != uid {
            // Gone, or a new object under the same name: the marker has done its work.
            state.deleted = None;
        }
        let delete_handled = state.deleted.is_some();
        let handled = state.handled.clone().or_else(|| {
            if delete_handled {
                // Decides `Release`: the finalizer goes (again, if storing it failed), and
                // `on-delete` is not called twice for one delete.
                return None;
            }
            let object = current?;
            let generation = status::read(object, reactor)?.observed_generation?;
            let mut last = object.clone();
            last.meta.generation = generation;
            Some(Arc::new(last))
        });
        RunStart {
            handled,
            forced,
            delete_handled,
        }
    }

    /// The reactor handled `object` successfully.
    pub fn handled(&self, key: &ObjectKey, object: Arc<Object>) {
        self.keys().entry(key.clone()).or_default().handled = Some(object);
    }

    /// A commit for `key` changed objects of these kinds at these revisions.
    pub fn committed<'a>(
        &self,
        key: &ObjectKey,
        changes: impl Iterator<Item = (&'a str, Revision)>,
    ) {
        let mut keys = self.keys();
        let committed = &mut keys.entry(key.clone()).or_default().committed;
        for (kind, revision) in changes {
            match committed.iter_mut().find(|(k, _)| k == kind) {
                Some((_, at)) => *at = (*at).max(revision),
                None => committed.push((kind.to_owned(), revision)),
            }
        }
    }

    /// Per kind, the revision a cache must reach to show this controller's writes for `key`.
    pub fn committed_at(&self, key: &ObjectKey) -> Vec<(String, Revision)> {
        let keys = self.keys();
        keys.get(key)
            .map(|s| s.committed.clone())
            .unwrap_or_default()
    }

    /// The generation the reactor last handled, if it remembers one.
    pub fn handled_generation(&self, key: &ObjectKey) -> Option<u64> {
        let keys = self.keys();
        keys.get(key)?.handled.as_ref().map(|h| h.meta.generation)
    }

    /// The object's delete was handled (`uid`: by `on-delete`; `None`: released).
    pub fn delete_handled(&self, key: &ObjectKey, uid: Option<String>) {
        let mut keys = self.keys();
        let state = keys.entry(key.clone()).or_default();
        state.handled = None;
        if uid.is_some() {
            state.deleted = uid;
        }
    }

    /// Forgets `key` once it is gone from the store and nothing is left to do for it, so the
    /// memory of a controller does not grow with every object it ever saw.
    pub fn forget_gone(&self, key: &ObjectKey) {
        let mut keys = self.keys();
        if keys
            .get(key)
            .is_some_and(|s| s.handled.is_none() && s.deleted.is_none() && !s.forced)
        {
            keys.remove(key);
        }
    }
}
