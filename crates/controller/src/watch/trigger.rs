//! What a reactor reacts to in an object: its spec (through the generation), its labels, and
//! whether it is being deleted. Status and finalizer writes do not count.

use reactor_core::object::Object;
use std::collections::BTreeMap;

/// The parts of an object whose change runs a reactor again.
#[derive(Debug, Clone, PartialEq)]
pub struct Trigger {
    generation: u64,
    labels: BTreeMap<String, String>,
    deleting: bool,
}

impl Trigger {
    pub fn of(object: &Object) -> Self {
        Self {
            generation: object.meta.generation,
            labels: object.labels.clone(),
            deleting: object.meta.deleting,
        }
    }

    /// Whether the spec or the labels differ (the deletion is decided on its own).
    pub fn content_differs(&self, other: &Trigger) -> bool {
        self.generation != other.generation || self.labels != other.labels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(generation: u64, app: &str, deleting: bool) -> Object {
        let mut o: Object =
            serde_json::from_value(json!({"kind": "Thing", "name": "a"})).expect("object");
        o.meta.generation = generation;
        o.labels.insert("app".into(), app.into());
        o.meta.deleting = deleting;
        o
    }

    #[test]
    fn spec_and_labels_count_status_does_not() {
        let base = object(1, "web", false);
        let mut status_only = base.clone();
        status_only.status = json!({"ready": true});
        status_only.meta.revision += 7;
        assert_eq!(Trigger::of(&base), Trigger::of(&status_only));
        assert!(Trigger::of(&base).content_differs(&Trigger::of(&object(2, "web", false))));
        assert!(Trigger::of(&base).content_differs(&Trigger::of(&object(1, "db", false))));
        let deleting = Trigger::of(&object(1, "web", true));
        assert_ne!(Trigger::of(&base), deleting);
        assert!(!Trigger::of(&base).content_differs(&deleting));
    }
}
