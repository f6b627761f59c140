//! A transaction of several writes, committed all or nothing: each is decided (by the rules of
//! `plan`) on the state the writes before it left, and each object touched changes once.

use super::plan_set_status;
use super::{
    Change, EventType, StoreError, plan_apply, plan_check, plan_delete, plan_set_finalizers,
    plan_set_managed_fields,
};
use reactor_core::object::{ApplyRequest, Object, ObjectKey, Revision};
use serde_json::Value;

/// One write of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Apply(ApplyRequest),
    SetStatus {
        kind: String,
        name: String,
        status: Value,
        expected: Option<Revision>,
    },
    SetFinalizers {
        kind: String,
        name: String,
        finalizers: Vec<String>,
        expected: Option<Revision>,
    },
    /// Records who manages which fields (Kubernetes' `managedFields`), after the writes
    /// before it in the transaction.
    SetManagedFields {
        kind: String,
        name: String,
        managed_fields: Value,
    },
    Delete {
        kind: String,
        name: String,
        expected: Option<Revision>,
    },
    /// Changes nothing; the transaction fails with a conflict unless the object is at
    /// `expected` (`None`: absent).
    Check {
        kind: String,
        name: String,
        expected: Option<Revision>,
    },
}

impl Write {
    /// The object the write changes.
    pub fn key(&self) -> ObjectKey {
        match self {
            Write::Apply(request) => request.key(),
            Write::SetStatus { kind, name, .. }
            | Write::SetFinalizers { kind, name, .. }
            | Write::SetManagedFields { kind, name, .. }
            | Write::Delete { kind, name, .. }
            | Write::Check { kind, name, .. } => ObjectKey::new(kind, name),
        }
    }

    /// What the write makes of `current` (`None`: nothing changes).
    pub fn plan(&self, current: Option<&Object>) -> Result<Option<Change>, StoreError> {
        match self {
            Write::Apply(request) => plan_apply(current, request),
            Write::SetStatus {
                kind,
                name,
                status,
                expected,
            } => plan_set_status(kind, name, current, status, *expected),
            Write::SetFinalizers {
                kind,
                name,
                finalizers,
                expected,
            } => plan_set_finalizers(kind, name, current, finalizers, *expected),
            Write::SetManagedFields {
                kind,
                name,
                managed_fields,
            } => plan_set_managed_fields(kind, name, current, managed_fields),
            Write::Delete {
                kind,
                name,
                expected,
            } => plan_delete(kind, name, current, *expected),
            Write::Check {
                kind,
                name,
                expected,
            } => plan_check(ObjectKey::new(kind, name).as_str(), current, *expected),
        }
    }
}

/// One object a write touched: its state after the commit (`None`: removed), the change
/// made (`None`: it already was as asked) and the revision of that change (a watch of the
/// kind sees it there; with no change, the object's revision, 0 if absent or not yet
/// committed).
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub object: Option<Object>,
    pub change: Option<EventType>,
    pub revision: Revision,
}

/// The objects `writes` touch, each once, in the order first touched.
pub fn targets(writes: &[Write]) -> Vec<ObjectKey> {
    let mut keys: Vec<ObjectKey> = Vec::with_capacity(writes.len());
    for write in writes {
        let key = write.key();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The one change of each target (as [`targets`] lists them, `current` their states now) that
/// `writes` make, in order, each on the state the previous ones left. A write that fails fails
/// the whole transaction. Until the commit stamps it, a changed object keeps the revision it
/// was read with (0 if created here), so a write may expect what an earlier one left.
pub fn plan_writes(
    writes: &[Write],
    targets: &[ObjectKey],
    current: &[Option<Object>],
) -> Result<Vec<Option<Change>>, StoreError> {
    let mut states: Vec<Option<Object>> = current.to_vec();
    // The last state of each target before it was removed: what its delete event carries.
    let mut removed: Vec<Option<Object>> = vec![None; targets.len()];
    for write in writes {
        let key = write.key();
        let index = targets
            .iter()
            .position(|k| *k == key)
            .ok_or_else(|| StoreError::Backend(format!("{key} is not a target of the write")))?;
        let Some(change) = write.plan(states[index].as_ref())? else {
            continue;
        };
        if change.event_type == EventType::Deleted {
            removed[index] = Some(change.object);
            states[index] = None;
        } else {
            states[index] = Some(change.object);
        }
    }
    Ok(current
        .iter()
        .zip(states)
        .zip(removed)
        .map(|((before, after), removed)| match (before, after) {
            (None, None) => None,
            (None, Some(object)) => Some(Change {
                event_type: EventType::Created,
                object,
            }),
            (Some(before), None) => Some(Change {
                event_type: EventType::Deleted,
                object: removed.unwrap_or_else(|| before.clone()),
            }),
            (Some(before), Some(after)) if *before == after => None,
            (Some(_), Some(object)) => Some(Change {
                event_type: EventType::Updated,
                object,
            }),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(name: &str, spec: Value) -> Write {
        Write::Apply(ApplyRequest {
            kind: "Policy".into(),
            name: name.into(),
            labels: Default::default(),
            annotations: Default::default(),
            spec,
            expected_revision: None,
            owner: None,
        })
    }

    fn status(name: &str, status: Value, expected: Option<Revision>) -> Write {
        Write::SetStatus {
            kind: "Policy".into(),
            name: name.into(),
            status,
            expected,
        }
    }

    #[test]
    fn later_writes_see_earlier_ones_and_each_object_changes_once() {
        let writes = vec![
            apply("a", json!(1)),
            status("a", json!({"ok": true}), Some(0)),
            apply("b", json!(2)),
        ];
        let keys = targets(&writes);
        assert_eq!(keys.len(), 2);
        let changes = plan_writes(&writes, &keys, &[None, None]).expect("planned");
        let a = changes[0].as_ref().expect("a created");
        assert_eq!(a.event_type, EventType::Created);
        assert_eq!(a.object.status, json!({"ok": true}));
        assert_eq!(a.object.meta.generation, 1);
    }

    #[test]
    fn one_failing_write_fails_them_all() {
        let writes = vec![apply("a", json!(1)), status("missing", json!(1), None)];
        let keys = targets(&writes);
        let failed = plan_writes(&writes, &keys, &[None, None]).expect_err("not found");
        assert!(matches!(failed, StoreError::NotFound { .. }), "{failed}");
    }

    #[test]
    fn a_stale_expectation_is_a_conflict() {
        let writes = vec![apply("a", json!(1))];
        let keys = targets(&writes);
        let mut existing = plan_writes(&writes, &keys, &[None]).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 7;
        let stale = vec![status("a", json!(1), Some(6))];
        let failed = plan_writes(&stale, &keys, &[Some(existing.clone())]).expect_err("stale");
        assert!(failed.is_conflict(), "{failed}");
        let fresh = vec![status("a", json!(1), Some(7))];
        let changed = plan_writes(&fresh, &keys, &[Some(existing)]).expect("fresh");
        assert_eq!(
            changed[0].as_ref().map(|c| c.event_type),
            Some(EventType::Updated)
        );
    }

    #[test]
    fn a_check_changes_nothing_and_fails_on_any_other_state() {
        let check = |expected| Write::Check {
            kind: "Policy".into(),
            name: "a".into(),
            expected,
        };
        let writes = vec![apply("a", json!(1))];
        let keys = targets(&writes);
        let mut existing = plan_writes(&writes, &keys, &[None]).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 4;
        let at = Some(existing);
        assert_eq!(
            plan_writes(&[check(Some(4))], &keys, std::slice::from_ref(&at)).expect("same"),
            vec![None]
        );
        assert!(plan_writes(&[check(Some(3))], &keys, std::slice::from_ref(&at)).is_err());
        assert!(plan_writes(&[check(None)], &keys, &[at]).is_err());
        assert!(plan_writes(&[check(Some(4))], &keys, &[None]).is_err());
        assert_eq!(
            plan_writes(&[check(None)], &keys, &[None]).expect("absent"),
            vec![None]
        );
    }

    #[test]
    fn created_then_removed_is_no_change_and_a_delete_carries_the_last_state() {
        let writes = vec![
            apply("a", json!(1)),
            Write::Delete {
                kind: "Policy".into(),
                name: "a".into(),
                expected: None,
            },
        ];
        let keys = targets(&writes);
        assert_eq!(
            plan_writes(&writes, &keys, &[None]).expect("ok"),
            vec![None]
        );

        let mut existing = plan_writes(&writes[..1], &keys, &[None]).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 3;
        let edit_then_delete = vec![status("a", json!("last"), None), writes[1].clone()];
        let changes = plan_writes(&edit_then_delete, &keys, &[Some(existing)]).expect("ok");
        let deleted = changes[0].as_ref().expect("deleted");
        assert_eq!(deleted.event_type, EventType::Deleted);
        assert_eq!(deleted.object.status, json!("last"));
    }
}
