//! The changes a reactor's own commits made to the kinds it watches besides its own: their
//! events run nothing again, since the run that wrote them saw them already (a change by any
//! other writer still runs the mapped objects, and restores an owned child).

use crate::watch::reflector::{Reflector, ReflectorEvent};
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

    /// The commit left `key` at `revision`. Not kept if `reflector` (of the key's kind) has
    /// passed that revision: its event came already.
    pub fn committed(&self, reflector: &Reflector, key: ObjectKey, revision: Revision) {
        let mut marks = self.marks.lock();
        if reflector.revision().is_some_and(|at| at >= revision) {
            marks.remove(&key);
        } else {
            marks.insert(key, Mark::At(revision));
        }
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
