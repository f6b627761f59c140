//! The fake's store: objects by kind and name, applied and deleted by the rules the host's
//! store import applies to a callback (ownership, compare-and-swap, reserved kinds).

use super::state::{FAKE_TIME, State, World};
use crate::store::StoreError;
use crate::{Meta, Object, Owner};

/// The host's own kinds, which guests reach only through Nimbus (the host's list,
/// `reactor_core::object::RESERVED_KINDS`, which this guest-side crate cannot depend on).
const RESERVED_KINDS: [&str; 7] = [
    "NimbusItem",
    "NimbusReport",
    "Agent",
    "ComponentRollback",
    "Credential",
    "ComponentApproval",
    "ComponentDigest",
];

fn check_kind(kind: &str) -> Result<(), StoreError> {
    if RESERVED_KINDS.contains(&kind) {
        return Err(StoreError::Denied(format!(
            "kind {kind} is reserved to the host: use the nimbus import"
        )));
    }
    let mut chars = kind.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && kind.len() <= 63
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "kind {kind:?} is invalid: it must match [A-Za-z][A-Za-z0-9-]* and be at most 63 characters"
        )))
    }
}

fn check_name(name: &str) -> Result<(), StoreError> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(allowed)
        && name.ends_with(allowed)
        && name.chars().all(|c| allowed(c) || c == '-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(format!(
            "name {name:?} is invalid: it must be lowercase letters, digits and '-', start and end with a letter or digit, and be at most 63 characters"
        )))
    }
}

fn check_json(what: &str, text: &str) -> Result<(), StoreError> {
    serde_json::from_str::<serde_json::Value>(text)
        .map(|_| ())
        .map_err(|e| StoreError::Invalid(format!("{what} is not JSON: {e}")))
}

/// What the host checks of any object it stores: kind, name and spec.
pub(super) fn check_object(obj: &Object) -> Result<(), StoreError> {
    check_kind(&obj.kind)?;
    check_name(&obj.name)?;
    check_json(&format!("spec of {}/{}", obj.kind, obj.name), &obj.spec)
}

fn key(kind: &str, name: &str) -> (String, String) {
    (kind.to_owned(), name.to_owned())
}

impl World {
    /// Creates `obj` or changes its labels and spec (and its status, when given), as a
    /// user's apply with `owner` (a reactor's children have one). Returns it as stored.
    pub fn upsert(&mut self, obj: &Object, owner: Option<Owner>) -> Object {
        let revision = self.next_revision();
        let k = key(&obj.kind, &obj.name);
        let stored = match self.objects.get(&k) {
            Some(current) => {
                let mut next = current.clone();
                let spec_changed = current.spec != obj.spec;
                next.labels = obj.labels.clone();
                next.spec = obj.spec.clone();
                if obj.status.is_some() {
                    next.status = obj.status.clone();
                }
                if let Some(meta) = next.meta.as_mut() {
                    meta.revision = revision;
                    meta.generation += u64::from(spec_changed);
                    if owner.is_some() {
                        meta.owner = owner;
                    }
                }
                next
            }
            None => Object {
                meta: Some(Meta {
                    uid: self.next_uid(),
                    revision,
                    generation: 1,
                    created: FAKE_TIME.into(),
                    updated: FAKE_TIME.into(),
                    finalizers: Vec::new(),
                    deleting: false,
                    owner,
                }),
                ..obj.clone()
            },
        };
        self.objects.insert(k, stored.clone());
        stored
    }

    /// Removes `kind/name` and, as the host's collector does, every object it owns.
    pub fn remove_with_children(&mut self, kind: &str, name: &str) {
        let Some(gone) = self.objects.remove(&key(kind, name)) else {
            return;
        };
        let uid = gone.meta.map(|m| m.uid).unwrap_or_default();
        let children: Vec<(String, String)> = self
            .objects
            .values()
            .filter(|o| o.owner().is_some_and(|w| w.uid == uid))
            .map(|o| key(&o.kind, &o.name))
            .collect();
        for (kind, name) in children {
            self.remove_with_children(&kind, &name);
        }
    }
}

impl State {
    fn store_failure(&mut self) -> Result<(), StoreError> {
        self.store_failures.pop_front().map_or(Ok(()), Err)
    }

    /// The owner of what the running callback applies: its primary object as stored.
    fn owner(&self, what: &str) -> Result<Owner, StoreError> {
        let Some((kind, name)) = &self.primary else {
            return Err(StoreError::Denied(format!(
                "{what} needs a callback's primary object: call it from on_create, on_update, on_delete or on_agent_status"
            )));
        };
        let stored = self.world.objects.get(&key(kind, name));
        let uid = stored.and_then(|o| o.meta.as_ref()).map(|m| m.uid.clone());
        let uid = uid.ok_or_else(|| {
            StoreError::Unavailable(format!(
                "{kind}/{name} is not in the store: it may have just been deleted"
            ))
        })?;
        Ok(Owner {
            kind: kind.clone(),
            name: name.clone(),
            uid,
            component: self.component.clone(),
        })
    }

    /// Whether `obj` may be written by the running callback: new, or already its child.
    fn check_mine(obj: &Object, mine: &Owner) -> Result<(), StoreError> {
        match obj.owner() {
            Some(held)
                if held.kind == mine.kind
                    && held.name == mine.name
                    && held.component == mine.component =>
            {
                Ok(())
            }
            Some(held) => Err(StoreError::Denied(format!(
                "{}/{} is not this reactor's to write: it is owned by {}/{} (component {}), and an object has one owner",
                obj.kind, obj.name, held.kind, held.name, held.component
            ))),
            None => Err(StoreError::Denied(format!(
                "{}/{} is not this reactor's to write: it was not created by a reactor, so no reactor may take it over",
                obj.kind, obj.name
            ))),
        }
    }

    pub fn store_get(&mut self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        self.store_failure()?;
        check_kind(kind)?;
        Ok(self.world.objects.get(&key(kind, name)).cloned())
    }

    pub fn store_list(
        &mut self,
        kind: &str,
        selector: &[(String, String)],
    ) -> Result<Vec<Object>, StoreError> {
        self.store_failure()?;
        check_kind(kind)?;
        Ok(self
            .world
            .objects
            .values()
            .filter(|o| o.kind == kind && selector.iter().all(|pair| o.labels.contains(pair)))
            .cloned()
            .collect())
    }

    pub fn store_apply(&mut self, obj: &Object) -> Result<Object, StoreError> {
        self.store_failure()?;
        check_object(obj)?;
        if self.primary == Some(key(&obj.kind, &obj.name)) {
            return Err(StoreError::Denied(format!(
                "{}/{} is the callback's own object: change its status with set-status",
                obj.kind, obj.name
            )));
        }
        let mine = self.owner("store::apply")?;
        let current = self.world.objects.get(&key(&obj.kind, &obj.name));
        if let Some(current) = current {
            Self::check_mine(current, &mine)?;
        }
        let expected = obj.meta.as_ref().map_or(0, |m| m.revision);
        if expected != 0 {
            let actual = current.and_then(|o| o.meta.as_ref()).map(|m| m.revision);
            if actual != Some(expected) {
                return Err(StoreError::Conflict(format!(
                    "conflict on {}/{}: expected revision {expected}, current revision is {}",
                    obj.kind,
                    obj.name,
                    actual.map_or("none".to_owned(), |r| r.to_string())
                )));
            }
        }
        let mut wanted = obj.clone();
        wanted.status = None;
        Ok(self.world.upsert(&wanted, Some(mine)))
    }

    pub fn store_delete(&mut self, kind: &str, name: &str) -> Result<bool, StoreError> {
        self.store_failure()?;
        check_kind(kind)?;
        let mine = self.owner("store::delete")?;
        let Some(current) = self.world.objects.get(&key(kind, name)) else {
            return Ok(false);
        };
        Self::check_mine(current, &mine)?;
        self.world.remove_with_children(kind, name);
        Ok(true)
    }

    pub fn set_status(&mut self, status: &str) -> Result<(), StoreError> {
        self.store_failure()?;
        check_json("status", status)?;
        let Some(primary) = self.primary.clone() else {
            return Err(StoreError::Denied(
                "store::set_status needs a callback's primary object: call it from a callback"
                    .into(),
            ));
        };
        let revision = self.world.next_revision();
        let Some(obj) = self.world.objects.get_mut(&primary) else {
            return Err(StoreError::NotFound);
        };
        obj.status = Some(status.to_owned());
        if let Some(meta) = obj.meta.as_mut() {
            meta.revision = revision;
        }
        Ok(())
    }
}
