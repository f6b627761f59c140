//! The shadow calls one reactor has in flight: at most one per object, and a bounded number.

use crate::run::locks::{ObjectGuard, ObjectLocks};
use reactor_core::object::ObjectKey;

/// The objects a shadow version's call runs on now. The serving version's commit does not
/// wait for its shadow's call, so without this a slow or looping shadow would pile calls up:
/// a run starts no shadow call on an object whose last one still runs, nor beyond `most` at
/// once (the object is compared on a later run).
#[derive(Default)]
pub struct ShadowRuns {
    running: ObjectLocks,
}

/// One shadow call in flight; it ends when this drops.
pub type InFlight = ObjectGuard;

impl ShadowRuns {
    /// Room for a shadow call on `key`, if none runs on it and fewer than `most` run (counted,
    /// then locked: calls starting at once may pass the bound by as many, never more).
    pub fn start(&self, key: &ObjectKey, most: usize) -> Option<InFlight> {
        if self.running.held() >= most.max(1) {
            return None;
        }
        self.running.try_lock(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_object_and_at_most_the_bound_until_one_ends() {
        let runs = ShadowRuns::default();
        let (a, b, c) = (
            ObjectKey::new("Thing", "a"),
            ObjectKey::new("Thing", "b"),
            ObjectKey::new("Thing", "c"),
        );
        let first = runs.start(&a, 2).expect("room");
        assert!(runs.start(&a, 2).is_none(), "one call per object");
        let _second = runs.start(&b, 2).expect("room for a second object");
        assert!(runs.start(&c, 2).is_none(), "two at most");
        drop(first);
        let _third = runs.start(&c, 2).expect("room again once one ended");
        assert!(runs.start(&a, 2).is_none(), "full again");
    }
}
