//! The changes a reactor's own commits made to the kinds it watches besides its own: their
//! events run nothing again, since the run that wrote them saw them already (a change by any
//! other writer still runs the mapped objects, and restores an owned child).

use crate::watch::reflector::ReflectorEvent;
use parking_lot::Mutex;
use reactor_core::object::{ObjectKey, Revision};
use std::collections::HashMap;

/// What is known of one object a commit of the reactor writes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mark {
    /// The commit is in flight: its event may come before the commit returns.
    Committing,
    /// The commit left the object at this revision; its event has not come yet.
    At(Revision),
}

/// The objects of watched kinds the reactor's commits create or change, until the event of
/// the change arrives. At most one entry per object, dropped by the object's next event past it.
#[derive(Debug, Default)]
pub struct OwnWrites {
    marks: Mutex<HashMap<ObjectKey, Mark>>,
}

impl OwnWrites {
    /// A commit of the reactor is about to write `keys`.
    pub fn committing(&self, keys: impl IntoIterator<Item = ObjectKey>) {
        let mut marks = self.marks.lock();
        for key in keys {
            marks.insert(key, Mark::Committing);
        }
    }

    /// The commit left `key` at `revision`. Kept even if the reflector of the key's kind has
    /// passed that revision: the reflector having the event does not mean the controller's
    /// watch has judged it yet (it reads the reflector's events on a task of its own). A mark
    /// whose event was judged already goes with the object's next event, which is not own.
    pub fn committed(&self, key: ObjectKey, revision: Revision) {
        self.marks.lock().insert(key, Mark::At(revision));
    }

    /// The commit did not change `keys` (it failed, or wrote them as they were).
    pub fn unchanged(&self, keys: impl IntoIterator<Item = ObjectKey>) {
        let mut marks = self.marks.lock();
        for key in keys {
            if marks.get(&key) == Some(&Mark::Committing) {
                marks.remove(&key);
            }
        }
    }

    /// Whether `event` is the change one of the reactor's commits made. An event that comes
    /// while the commit is in flight counts as its own: another writer's change that landed
    /// just before is overwritten by it, and one that lands after comes with a later revision.
    /// An event of the object at another revision is someone else's; the entry goes with the
    /// event at or past its revision (a deleted object's event carries its last revision).
    pub fn is_own(&self, event: &ReflectorEvent) -> bool {
        let object = event.object();
        let applied = matches!(event, ReflectorEvent::Applied(_));
        let key = object.key();
        let mut marks = self.marks.lock();
        match marks.get(&key) {
            None => false,
            Some(Mark::Committing) => applied,
            Some(&Mark::At(revision)) => {
                let seen = object.meta.revision;
                if seen >= revision {
                    marks.remove(&key);
                }
                applied && seen == revision
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_core::object::{Meta, Object};
    use std::sync::Arc;

    fn child(revision: Revision) -> ReflectorEvent {
        ReflectorEvent::Applied(Arc::new(Object {
            kind: "TenantNamespace".into(),
            name: "acme-dev".into(),
            labels: Default::default(),
            annotations: Default::default(),
            spec: serde_json::Value::Null,
            status: serde_json::Value::Null,
            meta: Meta {
                revision,
                ..Default::default()
            },
        }))
    }

    /// The reflector may have the commit's event before the commit returns, and the
    /// controller's watch judge it after: it is still the reactor's own (the race that ran a
    /// Tenant again for its own child under load).
    #[test]
    fn an_event_judged_after_the_commit_returned_is_own_and_the_next_one_is_not() {
        let writes = OwnWrites::default();
        let key = ObjectKey::new("TenantNamespace", "acme-dev");
        writes.committing([key.clone()]);
        writes.committed(key, 7);
        assert!(writes.is_own(&child(7)), "the commit's own event");
        assert!(
            !writes.is_own(&child(9)),
            "another writer's change after it"
        );
    }

    #[test]
    fn a_mark_whose_event_was_judged_already_does_not_hide_the_next_change() {
        let writes = OwnWrites::default();
        let key = ObjectKey::new("TenantNamespace", "acme-dev");
        writes.committing([key.clone()]);
        assert!(
            writes.is_own(&child(7)),
            "its event came while it was in flight"
        );
        writes.committed(key, 7);
        assert!(!writes.is_own(&child(8)), "another writer's change");
        assert!(writes.marks.lock().is_empty(), "the mark went with it");
    }
}
