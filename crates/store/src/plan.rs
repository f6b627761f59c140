//! What a write does to one object, decided from its current state; shared by every backend,
//! so all of them apply the same rules for generations, no-ops, finalizers and revisions.
//! A write edits the object in place: nothing is copied for a write that changes nothing,
//! and an object several writes change is copied once, without the fields they replace.

use super::{EventType, StoreError};
use reactor_core::object::{ApplyRequest, Meta, Object, ObjectKey, Revision};
use serde_json::Value;
use std::borrow::Cow;

/// A planned change. The backend stamps `object.meta.revision` when it commits.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub event_type: EventType,
    pub object: Object,
}

/// One object while a transaction's writes are decided on it: its state as read (borrowed)
/// or as the writes before left it (owned), and its last state before a write removed it
/// (what the delete event carries).
#[derive(Debug, Default)]
pub(crate) struct Slot<'a> {
    state: Option<Cow<'a, Object>>,
    removed: Option<Cow<'a, Object>>,
}

impl<'a> Slot<'a> {
    pub(crate) fn new(current: Option<&'a Object>) -> Self {
        Self {
            state: current.map(Cow::Borrowed),
            removed: None,
        }
    }

    pub(crate) fn current(&self) -> Option<&Object> {
        self.state.as_deref()
    }

    fn remove(&mut self) {
        self.removed = self.state.take();
    }

    /// The one change the writes made, `before` being the object as read. An object edited
    /// back to what it was is no change.
    pub(crate) fn change(self, before: Option<&Object>) -> Option<Change> {
        let (event_type, object) = match (before, self.state) {
            (None, None) | (Some(_), Some(Cow::Borrowed(_))) => return None,
            (None, Some(after)) => (EventType::Created, after.into_owned()),
            (Some(before), None) => (
                EventType::Deleted,
                self.removed.map_or_else(|| before.clone(), Cow::into_owned),
            ),
            // The metadata first: an edit stamps `updated`, so it nearly always differs there.
            (Some(before), Some(Cow::Owned(after)))
                if before.meta == after.meta && *before == after =>
            {
                return None;
            }
            (Some(_), Some(after)) => (EventType::Updated, after.into_owned()),
        };
        Some(Change { event_type, object })
    }

    /// The object, which must exist, for a write that changes it or not.
    fn present(&mut self, kind: &str, name: &str) -> Result<&mut Cow<'a, Object>, StoreError> {
        self.state.as_mut().ok_or_else(|| StoreError::NotFound {
            kind: kind.to_owned(),
            name: name.to_owned(),
        })
    }

    /// [`Slot::present`], at the `expected` revision if one is given.
    fn present_at(
        &mut self,
        (kind, name): (&str, &str),
        expected: Option<Revision>,
    ) -> Result<&mut Cow<'a, Object>, StoreError> {
        let state = self.present(kind, name)?;
        let key = || ObjectKey::new(kind, name).to_string();
        check_revision(&key, Some(state), expected)?;
        Ok(state)
    }
}

/// Which fields an edit replaces whole, so its first edit does not copy them.
#[derive(Debug, Clone, Copy, Default)]
struct Fresh {
    /// Labels and annotations.
    labels: bool,
    spec: bool,
    status: bool,
}

/// A copy of `value`, or its empty value if the edit is about to replace it.
fn keep<T: Clone + Default>(replaced: bool, value: &T) -> T {
    match replaced {
        true => T::default(),
        false => value.clone(),
    }
}

/// The object to edit in place. The first edit copies it from the state as read, but for the
/// fields `fresh` names, which the edit is about to replace and are left empty.
fn edit<'s>(state: &'s mut Cow<'_, Object>, fresh: Fresh) -> &'s mut Object {
    if let Cow::Borrowed(current) = *state {
        *state = Cow::Owned(Object {
            kind: current.kind.clone(),
            name: current.name.clone(),
            labels: keep(fresh.labels, &current.labels),
            annotations: keep(fresh.labels, &current.annotations),
            spec: keep(fresh.spec, &current.spec),
            status: keep(fresh.status, &current.status),
            meta: current.meta.clone(),
        });
    }
    state.to_mut()
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// `key` names the object in an error; it is made only for one.
fn check_revision(
    key: &dyn Fn() -> String,
    existing: Option<&Object>,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    match (expected, existing) {
        (None, _) | (Some(0), None) => Ok(()),
        (Some(expected), None) => Err(StoreError::ConflictMissing {
            key: key(),
            expected,
        }),
        (Some(expected), Some(obj)) if obj.meta.revision != expected => Err(StoreError::Conflict {
            key: key(),
            expected,
            actual: obj.meta.revision,
        }),
        _ => Ok(()),
    }
}

/// A reactor's apply (one with an owner) creates an object or changes its own child, never an
/// object someone else created.
fn check_owner(request: &ApplyRequest, existing: Option<&Object>) -> Result<(), StoreError> {
    let (Some(owner), Some(current)) = (&request.owner, existing) else {
        return Ok(());
    };
    match &current.meta.owner {
        Some(held) if held.same_place(owner) => Ok(()),
        Some(held) => Err(StoreError::NotOwned {
            key: request.key().to_string(),
            reason: format!("it is owned by {held}, and an object has one owner"),
        }),
        None => Err(StoreError::NotOwned {
            key: request.key().to_string(),
            reason: "it was not created by a reactor, so no reactor may take it over".into(),
        }),
    }
}

/// The object an apply creates.
fn created(request: ApplyRequest) -> Object {
    let stamp = now();
    Object {
        kind: request.kind,
        name: request.name,
        labels: request.labels,
        annotations: request.annotations,
        spec: request.spec,
        status: Value::Null,
        meta: Meta {
            uid: uuid::Uuid::new_v4().to_string(),
            revision: 0,
            generation: 1,
            created: stamp.clone(),
            updated: stamp,
            finalizers: Vec::new(),
            deleting: false,
            deleted: String::new(),
            owner: request.owner,
            managed_fields: Value::Null,
        },
    }
}

/// Creates the object, or updates its labels and spec; changes nothing when they are as asked.
pub(crate) fn apply(slot: &mut Slot<'_>, request: ApplyRequest) -> Result<(), StoreError> {
    request.validate()?;
    check_revision(
        &|| request.key().to_string(),
        slot.current(),
        request.expected_revision,
    )?;
    check_owner(&request, slot.current())?;
    let Some(state) = slot.state.as_mut() else {
        slot.state = Some(Cow::Owned(created(request)));
        return Ok(());
    };
    let spec_changed = state.spec != request.spec;
    // An owner created again under its name takes its predecessor's child over.
    let owner = request.owner.as_ref().or(state.meta.owner.as_ref());
    if !spec_changed
        && state.labels == request.labels
        && state.annotations == request.annotations
        && state.meta.owner.as_ref() == owner
    {
        return Ok(());
    }
    let owner = owner.cloned();
    let fresh = Fresh {
        labels: true,
        spec: true,
        status: false,
    };
    let next = edit(state, fresh);
    next.labels = request.labels;
    next.annotations = request.annotations;
    next.spec = request.spec;
    next.meta.owner = owner;
    next.meta.generation += u64::from(spec_changed);
    next.meta.updated = now();
    Ok(())
}

/// Changes nothing, and fails with a conflict unless the object is at `expected` (`None`:
/// absent): how a transaction says what it was decided from.
pub(crate) fn check(
    key: &ObjectKey,
    existing: Option<&Object>,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    match (expected, existing) {
        (None, Some(current)) => Err(StoreError::Conflict {
            key: key.to_string(),
            expected: 0,
            actual: current.meta.revision,
        }),
        (None, None) => Ok(()),
        (Some(_), _) => check_revision(&|| key.to_string(), existing, expected),
    }
}

pub(crate) fn set_status(
    key: (&str, &str),
    slot: &mut Slot<'_>,
    status: Value,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    let state = slot.present_at(key, expected)?;
    if state.status == status {
        return Ok(());
    }
    let fresh = Fresh {
        status: true,
        ..Fresh::default()
    };
    let next = edit(state, fresh);
    next.status = status;
    next.meta.updated = now();
    Ok(())
}

pub(crate) fn set_finalizers(
    key: (&str, &str),
    slot: &mut Slot<'_>,
    finalizers: Vec<String>,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    let state = slot.present_at(key, expected)?;
    if state.meta.deleting && finalizers.is_empty() {
        slot.remove();
        return Ok(());
    }
    if state.meta.finalizers == finalizers {
        return Ok(());
    }
    let next = edit(state, Fresh::default());
    next.meta.finalizers = finalizers;
    next.meta.updated = now();
    Ok(())
}

/// Records who manages which fields (see [`Meta::managed_fields`]); changes nothing else.
pub(crate) fn set_managed_fields(
    key: (&str, &str),
    slot: &mut Slot<'_>,
    managed_fields: Value,
) -> Result<(), StoreError> {
    let state = slot.present(key.0, key.1)?;
    if state.meta.managed_fields == managed_fields {
        return Ok(());
    }
    edit(state, Fresh::default()).meta.managed_fields = managed_fields;
    Ok(())
}

pub(crate) fn delete(
    key: (&str, &str),
    slot: &mut Slot<'_>,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    let state = slot.present_at(key, expected)?;
    if state.meta.finalizers.is_empty() {
        slot.remove();
        return Ok(());
    }
    if state.meta.deleting {
        return Ok(());
    }
    let next = edit(state, Fresh::default());
    next.meta.deleting = true;
    next.meta.updated = now();
    next.meta.deleted = next.meta.updated.clone();
    Ok(())
}

/// What an apply alone makes of `existing` (`None`: nothing changes).
pub fn plan_apply(
    existing: Option<&Object>,
    request: ApplyRequest,
) -> Result<Option<Change>, StoreError> {
    let mut slot = Slot::new(existing);
    apply(&mut slot, request)?;
    Ok(slot.change(existing))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Write;
    use serde_json::json;

    fn request(spec: Value) -> ApplyRequest {
        ApplyRequest {
            kind: "Policy".into(),
            name: "a".into(),
            labels: Default::default(),
            annotations: Default::default(),
            spec,
            expected_revision: None,
            owner: None,
        }
    }

    fn owner(name: &str, uid: &str) -> reactor_core::object::Owner {
        reactor_core::object::Owner {
            kind: "Tenant".into(),
            name: name.into(),
            uid: uid.into(),
            component: "tenant".into(),
        }
    }

    #[test]
    fn an_owned_object_has_one_owner_and_users_keep_it() {
        let mut by_a = request(json!(1));
        by_a.owner = Some(owner("a", "u1"));
        let child = committed(
            plan_apply(None, by_a.clone())
                .expect("ok")
                .expect("created"),
            1,
        );
        assert_eq!(child.meta.owner, Some(owner("a", "u1")));
        // The owner again: allowed; a new incarnation of it takes the child over.
        assert_eq!(
            plan_apply(Some(&child), by_a.clone()).expect("same owner"),
            None
        );
        let mut reborn = by_a.clone();
        reborn.owner = Some(owner("a", "u2"));
        let moved = plan_apply(Some(&child), reborn.clone())
            .expect("ok")
            .expect("change");
        assert_eq!(moved.object.meta.owner, Some(owner("a", "u2")));
        // Another owner: refused, nothing planned.
        let mut by_b = request(json!(2));
        by_b.owner = Some(owner("b", "u3"));
        let refused = plan_apply(Some(&child), by_b.clone()).expect_err("stealing");
        assert!(
            refused.to_string().contains("owned by Tenant/a"),
            "{refused}"
        );
        // A user's apply keeps the owner.
        let edited = plan_apply(Some(&child), request(json!(3)))
            .expect("ok")
            .expect("change");
        assert_eq!(edited.object.meta.owner, Some(owner("a", "u1")));
        // A reactor cannot take over what a user created.
        let users = committed(
            plan_apply(None, request(json!(1))).expect("ok").expect("c"),
            2,
        );
        assert!(matches!(
            plan_apply(Some(&users), by_a.clone()),
            Err(StoreError::NotOwned { .. })
        ));
    }

    fn write_status(status: Value) -> Write {
        Write::SetStatus {
            kind: "Policy".into(),
            name: "a".into(),
            status,
            expected: None,
        }
    }

    fn write_delete() -> Write {
        Write::Delete {
            kind: "Policy".into(),
            name: "a".into(),
            expected: None,
        }
    }

    fn write_finalizers(finalizers: &[&str]) -> Write {
        Write::SetFinalizers {
            kind: "Policy".into(),
            name: "a".into(),
            finalizers: finalizers.iter().map(|f| f.to_string()).collect(),
            expected: None,
        }
    }

    fn committed(change: Change, revision: Revision) -> Object {
        let mut obj = change.object;
        obj.meta.revision = revision;
        obj
    }

    #[test]
    fn generation_moves_only_with_spec() {
        let created = plan_apply(None, request(json!({"x": 1})))
            .expect("ok")
            .expect("change");
        assert_eq!(created.event_type, EventType::Created);
        let obj = committed(created, 1);
        assert_eq!(obj.meta.generation, 1);

        assert_eq!(
            plan_apply(Some(&obj), request(json!({"x": 1}))).expect("ok"),
            None
        );

        let mut relabel = request(json!({"x": 1}));
        relabel.labels.insert("app".into(), "web".into());
        let relabeled = plan_apply(Some(&obj), relabel.clone())
            .expect("ok")
            .expect("change");
        assert_eq!(relabeled.object.meta.generation, 1);

        let respec = plan_apply(Some(&obj), request(json!({"x": 2})))
            .expect("ok")
            .expect("change");
        assert_eq!(respec.object.meta.generation, 2);

        let status = write_status(json!({"ok": true}))
            .plan(Some(&obj))
            .expect("ok")
            .expect("change");
        assert_eq!(status.object.meta.generation, 1);
        assert_eq!(status.object.spec, obj.spec);
    }

    #[test]
    fn stale_revision_is_a_conflict() {
        let obj = committed(
            plan_apply(None, request(json!(1))).expect("ok").expect("c"),
            5,
        );
        let mut stale = request(json!(2));
        stale.expected_revision = Some(4);
        assert!(matches!(
            plan_apply(Some(&obj), stale.clone()),
            Err(StoreError::Conflict { actual: 5, .. })
        ));
        assert!(matches!(
            plan_apply(None, stale.clone()),
            Err(StoreError::ConflictMissing { .. })
        ));
        stale.expected_revision = Some(5);
        assert!(
            plan_apply(Some(&obj), stale.clone())
                .expect("fresh")
                .is_some()
        );
    }

    #[test]
    fn expected_revision_zero_creates_only() {
        let mut create = request(json!(1));
        create.expected_revision = Some(0);
        assert!(plan_apply(None, create.clone()).expect("absent").is_some());
        let obj = committed(
            plan_apply(None, request(json!(1))).expect("ok").expect("c"),
            3,
        );
        assert!(matches!(
            plan_apply(Some(&obj), create.clone()),
            Err(StoreError::Conflict {
                expected: 0,
                actual: 3,
                ..
            })
        ));
    }

    #[test]
    fn finalizers_hold_a_delete() {
        let mut obj = committed(
            plan_apply(None, request(json!(1))).expect("ok").expect("c"),
            1,
        );
        obj.meta.finalizers = vec!["reactor/policy".into()];
        let marked = write_delete().plan(Some(&obj)).expect("ok").expect("c");
        assert_eq!(marked.event_type, EventType::Updated);
        assert!(marked.object.meta.deleting);
        let obj = committed(marked, 2);
        assert_eq!(write_delete().plan(Some(&obj)).expect("ok"), None);
        let gone = write_finalizers(&[])
            .plan(Some(&obj))
            .expect("ok")
            .expect("c");
        assert_eq!(gone.event_type, EventType::Deleted);
        assert!(matches!(
            write_delete().plan(None),
            Err(StoreError::NotFound { .. })
        ));
    }
}
