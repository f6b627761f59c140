//! A transaction of several writes, committed all or nothing: each is decided (by the rules of
//! `plan`) on the state the writes before it left, and each object touched changes once.

use super::plan::{self, Slot};
use super::{Change, EventType, StoreError};
use reactor_core::object::{ApplyRequest, Object, ObjectKey, Revision};
use serde_json::Value;
use std::borrow::Borrow;
use std::sync::Arc;

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

    /// What the write alone makes of `current` (`None`: nothing changes).
    pub fn plan(&self, current: Option<&Object>) -> Result<Option<Change>, StoreError> {
        let mut slot = Slot::new(current);
        self.clone().apply_to(&mut slot)?;
        Ok(slot.change(current))
    }

    /// Decides the write on its object's state in `slot`, and edits it there with what the
    /// write carries (moved, not copied).
    fn apply_to(self, slot: &mut Slot<'_>) -> Result<(), StoreError> {
        match self {
            Write::Apply(request) => plan::apply(slot, request),
            Write::SetStatus {
                kind,
                name,
                status,
                expected,
            } => plan::set_status((&kind, &name), slot, status, expected),
            Write::SetFinalizers {
                kind,
                name,
                finalizers,
                expected,
            } => plan::set_finalizers((&kind, &name), slot, finalizers, expected),
            Write::SetManagedFields {
                kind,
                name,
                managed_fields,
            } => plan::set_managed_fields((&kind, &name), slot, managed_fields),
            Write::Delete {
                kind,
                name,
                expected,
            } => plan::delete((&kind, &name), slot, expected),
            Write::Check {
                kind,
                name,
                expected,
            } => plan::check(&ObjectKey::new(&kind, &name), slot.current(), expected),
        }
    }
}

/// One object a write touched: its state after the commit (`None`: removed), the change
/// made (`None`: it already was as asked) and the revision of that change (a watch of the
/// kind sees it there; with no change, the object's revision, 0 if absent or not yet
/// committed). The object is shared with the watch event that carries the change.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub object: Option<Arc<Object>>,
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
/// was read with (0 if created here), so a write may expect what an earlier one left. Each
/// target is copied at most once, by the first write that changes it.
pub fn plan_writes<O: Borrow<Object>>(
    writes: Vec<Write>,
    targets: &[ObjectKey],
    current: &[Option<O>],
) -> Result<Vec<Option<Change>>, StoreError> {
    let mut slots: Vec<Slot<'_>> = current
        .iter()
        .map(|c| Slot::new(c.as_ref().map(Borrow::borrow)))
        .collect();
    for write in writes {
        let key = write.key();
        let slot = targets
            .iter()
            .position(|k| *k == key)
            .and_then(|index| slots.get_mut(index))
            .ok_or_else(|| StoreError::Backend(format!("{key} is not a target of the write")))?;
        write.apply_to(slot)?;
    }
    Ok(slots
        .into_iter()
        .zip(current)
        .map(|(slot, before)| slot.change(before.as_ref().map(Borrow::borrow)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NONE1: [Option<Object>; 1] = [None];
    const NONE2: [Option<Object>; 2] = [None, None];

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
        let changes = plan_writes(writes.clone(), &keys, &NONE2).expect("planned");
        let a = changes[0].as_ref().expect("a created");
        assert_eq!(a.event_type, EventType::Created);
        assert_eq!(a.object.status, json!({"ok": true}));
        assert_eq!(a.object.meta.generation, 1);
    }

    #[test]
    fn each_write_changes_only_its_fields_of_an_existing_object() {
        let mut existing = plan_writes(
            vec![apply("a", json!({"x": 1}))],
            &targets(&[apply("a", json!(1))]),
            &NONE1,
        )
        .expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 3;
        existing.status = json!({"seen": 1});
        existing.annotations.insert("note".into(), "kept?".into());
        let mut relabel = apply("a", json!({"x": 1}));
        if let Write::Apply(request) = &mut relabel {
            request.labels.insert("app".into(), "web".into());
        }
        let writes = vec![relabel, status("a", json!({"seen": 2}), Some(3))];
        let keys = targets(&writes);
        let changes =
            plan_writes(writes.clone(), &keys, &[Some(existing.clone())]).expect("planned");
        let after = &changes[0].as_ref().expect("changed").object;
        assert_eq!(after.labels.get("app").map(String::as_str), Some("web"));
        assert!(
            after.annotations.is_empty(),
            "an apply states the annotations whole"
        );
        assert_eq!(after.spec, json!({"x": 1}));
        assert_eq!(after.status, json!({"seen": 2}));
        assert_eq!(after.meta.generation, 1);
        assert_eq!(after.meta.uid, existing.meta.uid);

        // A new spec alone: the status stays, the generation moves.
        let respec = vec![apply("a", json!({"x": 2}))];
        let changes =
            plan_writes(respec.clone(), &keys, &[Some(existing.clone())]).expect("planned");
        let after = &changes[0].as_ref().expect("changed").object;
        assert_eq!(after.status, json!({"seen": 1}));
        assert_eq!(after.spec, json!({"x": 2}));
        assert_eq!(after.meta.generation, 2);
    }

    #[test]
    fn one_failing_write_fails_them_all() {
        let writes = vec![apply("a", json!(1)), status("missing", json!(1), None)];
        let keys = targets(&writes);
        let failed = plan_writes(writes.clone(), &keys, &NONE2).expect_err("not found");
        assert!(matches!(failed, StoreError::NotFound { .. }), "{failed}");
    }

    #[test]
    fn a_stale_expectation_is_a_conflict() {
        let writes = vec![apply("a", json!(1))];
        let keys = targets(&writes);
        let mut existing = plan_writes(writes.clone(), &keys, &NONE1).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 7;
        let stale = vec![status("a", json!(1), Some(6))];
        let failed =
            plan_writes(stale.clone(), &keys, &[Some(existing.clone())]).expect_err("stale");
        assert!(failed.is_conflict(), "{failed}");
        let fresh = vec![status("a", json!(1), Some(7))];
        let changed = plan_writes(fresh.clone(), &keys, &[Some(existing)]).expect("fresh");
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
        let mut existing = plan_writes(writes.clone(), &keys, &NONE1).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 4;
        let at = Some(existing);
        assert_eq!(
            plan_writes(vec![check(Some(4))], &keys, std::slice::from_ref(&at)).expect("same"),
            vec![None]
        );
        assert!(plan_writes(vec![check(Some(3))], &keys, std::slice::from_ref(&at)).is_err());
        assert!(plan_writes(vec![check(None)], &keys, &[at]).is_err());
        assert!(plan_writes(vec![check(Some(4))], &keys, &NONE1).is_err());
        assert_eq!(
            plan_writes(vec![check(None)], &keys, &NONE1).expect("absent"),
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
            plan_writes(writes.clone(), &keys, &NONE1).expect("ok"),
            vec![None]
        );

        let mut existing = plan_writes(writes[..1].to_vec(), &keys, &NONE1).expect("ok")[0]
            .clone()
            .expect("created")
            .object;
        existing.meta.revision = 3;
        let edit_then_delete = vec![status("a", json!("last"), None), writes[1].clone()];
        let changes = plan_writes(edit_then_delete.clone(), &keys, &[Some(existing)]).expect("ok");
        let deleted = changes[0].as_ref().expect("deleted");
        assert_eq!(deleted.event_type, EventType::Deleted);
        assert_eq!(deleted.object.status, json!("last"));
    }
}
