//! Objects across the host-import boundary, parsed and checked once, here.
//!
//! The WIT object (spec and status as JSON text) to and from the host's own [`Object`].

use crate::bindings::reactor::host::types::Owner as GuestOwner;
use crate::bindings::{Meta as GuestMeta, Object as GuestObject};
use reactor_core::object::{Meta, Object};
use serde_json::Value;

/// The WIT object for `object`.
pub fn to_guest(object: &Object) -> GuestObject {
    GuestObject {
        kind: object.kind.clone(),
        name: object.name.clone(),
        labels: object
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        spec: object.spec.to_string(),
        status: (!object.status.is_null()).then(|| object.status.to_string()),
        meta: Some(GuestMeta {
            uid: object.meta.uid.clone(),
            revision: object.meta.revision,
            generation: object.meta.generation,
            created: object.meta.created.clone(),
            updated: object.meta.updated.clone(),
            finalizers: object.meta.finalizers.clone(),
            deleting: object.meta.deleting,
            owner: object.meta.owner.as_ref().map(|o| GuestOwner {
                kind: o.kind.clone(),
                name: o.name.clone(),
                uid: o.uid.clone(),
                component: o.component.clone(),
            }),
        }),
    }
}

/// The object a guest handed over; its spec and status must be JSON.
pub fn from_guest(object: GuestObject) -> Result<Object, String> {
    let spec = if object.spec.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&object.spec)
            .map_err(|e| format!("spec of {}/{} is not JSON: {e}", object.kind, object.name))?
    };
    let status = match &object.status {
        None => Value::Null,
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("status of {}/{} is not JSON: {e}", object.kind, object.name))?,
    };
    let meta = object.meta.map(|m| Meta {
        uid: m.uid,
        revision: m.revision,
        generation: m.generation,
        created: m.created,
        updated: m.updated,
        finalizers: m.finalizers,
        deleting: m.deleting,
        deleted: String::new(),
        managed_fields: Value::Null,
        // Server-owned: what a guest says of the owner is not read.
        owner: None,
    });
    Ok(Object {
        kind: object.kind,
        name: object.name,
        labels: object.labels.into_iter().collect(),
        annotations: Default::default(),
        spec,
        status,
        meta: meta.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_through_the_guest_types() {
        let mut object: Object = serde_json::from_value(serde_json::json!({
            "kind": "Policy", "name": "a", "labels": {"app": "web"},
            "spec": {"rules": [{"name": "x"}]}, "status": {"ruleCount": 1},
            "meta": {"revision": 7, "generation": 2, "finalizers": ["f"], "deleting": true}
        }))
        .expect("object");
        object.meta.uid = "u".into();
        assert_eq!(from_guest(to_guest(&object)).expect("back"), object);
        let mut bad = to_guest(&object);
        bad.spec = "{not json".into();
        assert!(
            from_guest(bad)
                .expect_err("refused")
                .contains("spec of Policy/a is not JSON")
        );
    }
}
