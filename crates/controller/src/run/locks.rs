//! The host's lock on a callback's primary object: never two callbacks for one object at
//! once, whichever components they come from. A busy object is re-queued shortly after
//! (Threeport's re-queue), so a worker is never parked on a lock.

use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use reactor_store::{Permit, Shards};
use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, Default, Clone)]
pub struct ObjectLocks {
    held: Arc<Mutex<HashSet<ObjectKey>>>,
    /// With several replicas: only objects of the shards this one owns may be locked.
    shards: Option<Arc<Shards>>,
}

/// Held while a callback runs; released when dropped.
#[derive(Debug)]
pub struct ObjectGuard {
    held: Arc<Mutex<HashSet<ObjectKey>>>,
    key: ObjectKey,
    _permit: Option<Permit>,
}

impl ObjectLocks {
    /// Locks that also require this replica to own the object's shard.
    pub fn sharded(shards: Arc<Shards>) -> Self {
        Self {
            shards: Some(shards),
            ..Self::default()
        }
    }

    /// Whether this replica may run callbacks for `key` at all (another replica's otherwise).
    pub fn owns(&self, key: &ObjectKey) -> bool {
        self.shards.as_ref().is_none_or(|s| s.owns(key))
    }

    /// Changes when this replica gains work it may have skipped; `None` without sharding.
    pub fn gained(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.shards.as_ref().map(|s| s.gained())
    }

    /// How many objects are locked now.
    pub fn held(&self) -> usize {
        self.held.lock().len()
    }

    /// Locks `key`, or answers `None` if another callback holds it (or it is not ours).
    pub fn try_lock(&self, key: &ObjectKey) -> Option<ObjectGuard> {
        let permit = match &self.shards {
            Some(shards) => Some(shards.permit(key)?),
            None => None,
        };
        let mut held = self.held.lock();
        held.insert(key.clone()).then(|| ObjectGuard {
            held: self.held.clone(),
            key: key.clone(),
            _permit: permit,
        })
    }
}

impl Drop for ObjectGuard {
    fn drop(&mut self) {
        self.held.lock().remove(&self.key);
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
