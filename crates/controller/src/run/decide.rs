//! Edge callbacks from level state: from the last state a reactor handled and the object as it
//! is now, which one callback to make — never a delete before its create.

use crate::watch::trigger::Trigger;
use reactor_core::object::Object;
use std::sync::Arc;

/// The one callback a run makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Create,
    Update {
        old: Arc<Object>,
    },
    Delete {
        last: Arc<Object>,
    },
    /// The object is deleting but the reactor never handled its create: release it silently.
    Release,
    Nothing,
}

/// Whether `current` differs from `handled` in what a reactor reacts to (see [`Trigger`]).
fn changed(handled: &Object, current: &Object) -> bool {
    Trigger::of(handled).content_differs(&Trigger::of(current))
}

/// `handled`: the last state this reactor handled successfully, if any. `current`: the object
/// now (`None`: gone from the store). `forced`: a resync or requeue asks to run it anyway.
/// `finalizer_pending`: the object carries this reactor's finalizer and its delete has not
/// been handled yet — whatever crashed in between, `on-delete` runs before the finalizer goes.
pub fn decide(
    handled: Option<&Arc<Object>>,
    current: Option<&Arc<Object>>,
    handles_delete: bool,
    forced: bool,
    finalizer_pending: bool,
) -> Decision {
    match (handled, current) {
        (None, None) => Decision::Nothing,
        (Some(last), None) => Decision::Delete { last: last.clone() },
        (handled, Some(now)) if now.meta.deleting && handles_delete => {
            if handled.is_some() || finalizer_pending {
                Decision::Delete { last: now.clone() }
            } else {
                Decision::Release
            }
        }
        (None, Some(_)) => Decision::Create,
        (Some(last), Some(now)) if forced || changed(last, now) => {
            Decision::Update { old: last.clone() }
        }
        (Some(_), Some(_)) => Decision::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(generation: u64, deleting: bool) -> Arc<Object> {
        let mut o: Object =
            serde_json::from_value(serde_json::json!({"kind": "A", "name": "a"})).expect("object");
        o.meta.generation = generation;
        o.meta.deleting = deleting;
        Arc::new(o)
    }

    #[test]
    fn one_callback_from_level_state() {
        assert_eq!(
            decide(None, Some(&obj(1, false)), true, false, false),
            Decision::Create
        );
        assert_eq!(
            decide(None, Some(&obj(3, false)), true, false, false),
            Decision::Create,
            "coalesced create+updates"
        );
        assert!(matches!(
            decide(
                Some(&obj(1, false)),
                Some(&obj(2, false)),
                true,
                false,
                false
            ),
            Decision::Update { .. }
        ));
        assert_eq!(
            decide(
                Some(&obj(2, false)),
                Some(&obj(2, false)),
                true,
                false,
                false
            ),
            Decision::Nothing
        );
        assert!(matches!(
            decide(
                Some(&obj(2, false)),
                Some(&obj(2, false)),
                true,
                true,
                false
            ),
            Decision::Update { .. }
        ));
        assert!(matches!(
            decide(
                Some(&obj(1, false)),
                Some(&obj(2, true)),
                true,
                false,
                false
            ),
            Decision::Delete { .. }
        ));
        assert!(matches!(
            decide(Some(&obj(1, false)), None, false, false, false),
            Decision::Delete { .. }
        ));
        assert_eq!(decide(None, None, true, false, false), Decision::Nothing);
    }

    #[test]
    fn never_a_delete_before_its_create() {
        assert_eq!(
            decide(None, Some(&obj(1, true)), true, false, false),
            Decision::Release
        );
        assert_eq!(decide(None, None, false, false, false), Decision::Nothing);
        // A finalizer of ours on it: the create may have run before a crash lost its record.
        assert!(matches!(
            decide(None, Some(&obj(1, true)), true, false, true),
            Decision::Delete { .. }
        ));
        // Without a finalizer, a deleting object is still there for the reactor.
        assert_eq!(
            decide(None, Some(&obj(1, true)), false, false, false),
            Decision::Create
        );
    }
}
