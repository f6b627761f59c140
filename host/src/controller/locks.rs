//! The host's lock on a callback's primary object: never two callbacks for one object at
//! once, whichever components they come from. A busy object is re-queued shortly after
//! (Threeport's re-queue), so a worker is never parked on a lock.

use crate::object::ObjectKey;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

#[derive(Debug, Default, Clone)]
pub struct ObjectLocks {
    held: Arc<Mutex<HashSet<ObjectKey>>>,
}

/// Held while a callback runs; released when dropped.
#[derive(Debug)]
pub struct ObjectGuard {
    held: Arc<Mutex<HashSet<ObjectKey>>>,
    key: ObjectKey,
}

impl ObjectLocks {
    /// Locks `key`, or answers `None` if another callback holds it.
    pub fn try_lock(&self, key: &ObjectKey) -> Option<ObjectGuard> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.insert(key.clone()).then(|| ObjectGuard {
            held: self.held.clone(),
            key: key.clone(),
        })
    }
}

impl Drop for ObjectGuard {
    fn drop(&mut self) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_until_dropped() {
        let locks = ObjectLocks::default();
        let key = ObjectKey::new("A", "a");
        let guard = locks.try_lock(&key).expect("free");
        assert!(locks.try_lock(&key).is_none());
        assert!(
            locks.try_lock(&ObjectKey::new("A", "b")).is_some(),
            "other objects are free"
        );
        drop(guard);
        assert!(locks.try_lock(&key).is_some());
    }
}
