//! What a write does to one object, decided from its current state; shared by every backend,
//! so all of them apply the same rules for generations, no-ops, finalizers and revisions.

use super::{EventType, StoreError};
use reactor_core::object::{ApplyRequest, Meta, Object, Revision};
use serde_json::Value;

/// A planned change. The backend stamps `object.meta.revision` when it commits.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub event_type: EventType,
    pub object: Object,
}

impl Change {
    fn created(object: Object) -> Self {
        Self {
            event_type: EventType::Created,
            object,
        }
    }
    fn updated(object: Object) -> Self {
        Self {
            event_type: EventType::Updated,
            object,
        }
    }
    fn deleted(object: Object) -> Self {
        Self {
            event_type: EventType::Deleted,
            object,
        }
    }
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn check_revision(
    key: &str,
    existing: Option<&Object>,
    expected: Option<Revision>,
) -> Result<(), StoreError> {
    match (expected, existing) {
        (None, _) | (Some(0), None) => Ok(()),
        (Some(expected), None) => Err(StoreError::ConflictMissing {
            key: key.to_owned(),
            expected,
        }),
        (Some(expected), Some(obj)) if obj.meta.revision != expected => Err(StoreError::Conflict {
            key: key.to_owned(),
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

fn require<'a>(
    kind: &str,
    name: &str,
    existing: Option<&'a Object>,
) -> Result<&'a Object, StoreError> {
    existing.ok_or_else(|| StoreError::NotFound {
        kind: kind.to_owned(),
        name: name.to_owned(),
    })
}

/// Creates the object, or updates its labels and spec; `None` when nothing would change.
pub fn plan_apply(
    existing: Option<&Object>,
    request: &ApplyRequest,
) -> Result<Option<Change>, StoreError> {
    request.validate()?;
    check_revision(request.key().as_str(), existing, request.expected_revision)?;
    check_owner(request, existing)?;
    let Some(current) = existing else {
        let stamp = now();
        return Ok(Some(Change::created(Object {
            kind: request.kind.clone(),
            name: request.name.clone(),
            labels: request.labels.clone(),
            annotations: request.annotations.clone(),
            spec: request.spec.clone(),
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
                owner: request.owner.clone(),
                managed_fields: Value::Null,
            },
        })));
    };
    let spec_changed = current.spec != request.spec;
    // An owner created again under its name takes its predecessor's child over.
    let owner = request.owner.clone().or_else(|| current.meta.owner.clone());
    if !spec_changed
        && current.labels == request.labels
        && current.annotations == request.annotations
        && current.meta.owner == owner
    {
        return Ok(None);
    }
    let mut next = current.clone();
    next.labels = request.labels.clone();
    next.annotations = request.annotations.clone();
    next.spec = request.spec.clone();
    next.meta.owner = owner;
    next.meta.generation += u64::from(spec_changed);
    next.meta.updated = now();
    Ok(Some(Change::updated(next)))
}

/// Changes nothing, and fails with a conflict unless the object is at `expected` (`None`:
/// absent): how a transaction says what it was decided from.
pub fn plan_check(
    key: &str,
    existing: Option<&Object>,
    expected: Option<Revision>,
) -> Result<Option<Change>, StoreError> {
    match (expected, existing) {
        (None, Some(current)) => Err(StoreError::Conflict {
            key: key.to_owned(),
            expected: 0,
            actual: current.meta.revision,
        }),
        (None, None) => Ok(None),
        (Some(_), _) => check_revision(key, existing, expected).map(|()| None),
    }
}

pub fn plan_set_status(
    kind: &str,
    name: &str,
    existing: Option<&Object>,
    status: &Value,
    expected: Option<Revision>,
) -> Result<Option<Change>, StoreError> {
    let current = require(kind, name, existing)?;
    check_revision(current.key().as_str(), existing, expected)?;
    if &current.status == status {
        return Ok(None);
    }
    let mut next = current.clone();
    next.status = status.clone();
    next.meta.updated = now();
    Ok(Some(Change::updated(next)))
}

pub fn plan_set_finalizers(
    kind: &str,
    name: &str,
    existing: Option<&Object>,
    finalizers: &[String],
    expected: Option<Revision>,
) -> Result<Option<Change>, StoreError> {
    let current = require(kind, name, existing)?;
    check_revision(current.key().as_str(), existing, expected)?;
    if current.meta.deleting && finalizers.is_empty() {
        return Ok(Some(Change::deleted(current.clone())));
    }
    if current.meta.finalizers == finalizers {
        return Ok(None);
    }
    let mut next = current.clone();
    next.meta.finalizers = finalizers.to_vec();
    next.meta.updated = now();
    Ok(Some(Change::updated(next)))
}

/// Records who manages which fields (see [`Meta::managed_fields`]); changes nothing else.
pub fn plan_set_managed_fields(
    kind: &str,
    name: &str,
    existing: Option<&Object>,
    managed_fields: &Value,
) -> Result<Option<Change>, StoreError> {
    let current = require(kind, name, existing)?;
    if &current.meta.managed_fields == managed_fields {
        return Ok(None);
    }
    let mut next = current.clone();
    next.meta.managed_fields = managed_fields.clone();
    Ok(Some(Change::updated(next)))
}

pub fn plan_delete(
    kind: &str,
    name: &str,
    existing: Option<&Object>,
    expected: Option<Revision>,
) -> Result<Option<Change>, StoreError> {
    let current = require(kind, name, existing)?;
    check_revision(current.key().as_str(), existing, expected)?;
    if current.meta.finalizers.is_empty() {
        return Ok(Some(Change::deleted(current.clone())));
    }
    if current.meta.deleting {
        return Ok(None);
    }
    let mut next = current.clone();
    next.meta.deleting = true;
    next.meta.updated = now();
    next.meta.deleted = next.meta.updated.clone();
    Ok(Some(Change::updated(next)))
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let child = committed(plan_apply(None, &by_a).expect("ok").expect("created"), 1);
        assert_eq!(child.meta.owner, Some(owner("a", "u1")));
        // The owner again: allowed; a new incarnation of it takes the child over.
        assert_eq!(plan_apply(Some(&child), &by_a).expect("same owner"), None);
        let mut reborn = by_a.clone();
        reborn.owner = Some(owner("a", "u2"));
        let moved = plan_apply(Some(&child), &reborn)
            .expect("ok")
            .expect("change");
        assert_eq!(moved.object.meta.owner, Some(owner("a", "u2")));
        // Another owner: refused, nothing planned.
        let mut by_b = request(json!(2));
        by_b.owner = Some(owner("b", "u3"));
        let refused = plan_apply(Some(&child), &by_b).expect_err("stealing");
        assert!(
            refused.to_string().contains("owned by Tenant/a"),
            "{refused}"
        );
        // A user's apply keeps the owner.
        let edited = plan_apply(Some(&child), &request(json!(3)))
            .expect("ok")
            .expect("change");
        assert_eq!(edited.object.meta.owner, Some(owner("a", "u1")));
        // A reactor cannot take over what a user created.
        let users = committed(
            plan_apply(None, &request(json!(1)))
                .expect("ok")
                .expect("c"),
            2,
        );
        assert!(matches!(
            plan_apply(Some(&users), &by_a),
            Err(StoreError::NotOwned { .. })
        ));
    }

    fn committed(change: Change, revision: Revision) -> Object {
        let mut obj = change.object;
        obj.meta.revision = revision;
        obj
    }

    #[test]
    fn generation_moves_only_with_spec() {
        let created = plan_apply(None, &request(json!({"x": 1})))
            .expect("ok")
            .expect("change");
        assert_eq!(created.event_type, EventType::Created);
        let obj = committed(created, 1);
        assert_eq!(obj.meta.generation, 1);

        assert_eq!(
            plan_apply(Some(&obj), &request(json!({"x": 1}))).expect("ok"),
            None
        );

        let mut relabel = request(json!({"x": 1}));
        relabel.labels.insert("app".into(), "web".into());
        let relabeled = plan_apply(Some(&obj), &relabel)
            .expect("ok")
            .expect("change");
        assert_eq!(relabeled.object.meta.generation, 1);

        let respec = plan_apply(Some(&obj), &request(json!({"x": 2})))
            .expect("ok")
            .expect("change");
        assert_eq!(respec.object.meta.generation, 2);

        let status = plan_set_status("Policy", "a", Some(&obj), &json!({"ok": true}), None)
            .expect("ok")
            .expect("change");
        assert_eq!(status.object.meta.generation, 1);
        assert_eq!(status.object.spec, obj.spec);
    }

    #[test]
    fn stale_revision_is_a_conflict() {
        let obj = committed(
            plan_apply(None, &request(json!(1)))
                .expect("ok")
                .expect("c"),
            5,
        );
        let mut stale = request(json!(2));
        stale.expected_revision = Some(4);
        assert!(matches!(
            plan_apply(Some(&obj), &stale),
            Err(StoreError::Conflict { actual: 5, .. })
        ));
        assert!(matches!(
            plan_apply(None, &stale),
            Err(StoreError::ConflictMissing { .. })
        ));
        stale.expected_revision = Some(5);
        assert!(plan_apply(Some(&obj), &stale).expect("fresh").is_some());
    }

    #[test]
    fn expected_revision_zero_creates_only() {
        let mut create = request(json!(1));
        create.expected_revision = Some(0);
        assert!(plan_apply(None, &create).expect("absent").is_some());
        let obj = committed(
            plan_apply(None, &request(json!(1)))
                .expect("ok")
                .expect("c"),
            3,
        );
        assert!(matches!(
            plan_apply(Some(&obj), &create),
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
            plan_apply(None, &request(json!(1)))
                .expect("ok")
                .expect("c"),
            1,
        );
        obj.meta.finalizers = vec!["reactor/policy".into()];
        let marked = plan_delete("Policy", "a", Some(&obj), None)
            .expect("ok")
            .expect("c");
        assert_eq!(marked.event_type, EventType::Updated);
        assert!(marked.object.meta.deleting);
        let obj = committed(marked, 2);
        assert_eq!(
            plan_delete("Policy", "a", Some(&obj), None).expect("ok"),
            None
        );
        let gone = plan_set_finalizers("Policy", "a", Some(&obj), &[], None)
            .expect("ok")
            .expect("c");
        assert_eq!(gone.event_type, EventType::Deleted);
        assert!(matches!(
            plan_delete("Policy", "a", None, None),
            Err(StoreError::NotFound { .. })
        ));
    }
}
