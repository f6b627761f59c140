//! The object document every reactor and client sees: kind, name, labels, annotations, spec,
//! status, meta.

mod document;
mod from_map;
mod kind;
mod names;
mod owner;
mod selector;

pub use document::{DocumentError, InputDocument, parse_documents};
pub use from_map::from_map;
pub use kind::{Column, KIND, KindError, KindSpec, column_cell, validate_object_name};
pub use names::{
    NameError, plural, validate_annotations, validate_kind, validate_labels, validate_name,
};
pub use owner::{Owner, RESERVED_KINDS, is_reserved};
pub use selector::{Selector, SelectorError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A store-wide revision: the position of one change in the store's history.
pub type Revision = u64;

/// [`Object`] under another name for the OpenAPI derive, which reads a type named `Object` as
/// "any JSON object".
pub type StoredObject = Object;

/// One object as stored and returned by the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Object {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[A-Za-z][A-Za-z0-9-]*$", max_length = 63)
    )]
    pub kind: String,
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?|[A-Za-z][A-Za-z0-9-]*)$",
            max_length = 63
        )
    )]
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Notes tools keep on the object (Kubernetes' `metadata.annotations`): selected by
    /// nothing, changed by an apply as labels are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub spec: Value,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub status: Value,
    #[serde(default)]
    pub meta: Meta,
}

/// Server-owned bookkeeping. On apply only `revision` is read (as a compare-and-swap guard).
/// Read only from a map: serde would otherwise take a list (`meta: []`) field by field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct Meta {
    pub uid: String,
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub revision: Revision,
    pub generation: u64,
    pub created: String,
    pub updated: String,
    pub finalizers: Vec<String>,
    pub deleting: bool,
    /// When the delete that finalizers hold was asked (RFC 3339; empty unless deleting).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub deleted: String,
    /// Set on objects a reactor applied through the store import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Which manager set which fields through the Kubernetes API (its `managedFields`, as
    /// that API shows them); kept as they are by every other write.
    #[serde(
        skip_serializing_if = "Value::is_null",
        deserialize_with = "managed_fields"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<Object>>))]
    pub managed_fields: Value,
}

/// `managed_fields` as stored and sent: `null` or a list of objects.
fn managed_fields<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    let value = Value::deserialize(deserializer)?;
    match &value {
        Value::Null => Ok(value),
        Value::Array(items) if items.iter().all(Value::is_object) => Ok(value),
        _ => Err(serde::de::Error::custom(
            "managed_fields must be a list of objects",
        )),
    }
}

from_map!(Meta, "a map of meta fields");

impl Object {
    /// The store key of this object.
    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(&self.kind, &self.name)
    }
}

/// What a client asks the store to make true for one object. On the wire it is the object
/// document (see `object::document`): `meta.revision`, when set, is `expected_revision`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyRequest {
    pub kind: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub spec: Value,
    /// When set, the apply succeeds only if the object's current revision equals it (0: only
    /// if it does not exist yet; a document's revision 0 means unset).
    pub expected_revision: Option<Revision>,
    /// Set by the host for a reactor's apply: the object must be new or already this
    /// owner's. `None` (every other writer) leaves the owner as it is.
    pub owner: Option<Owner>,
}

impl ApplyRequest {
    /// Checks the kind, name and label rules (a Kind object is named after its kind).
    pub fn validate(&self) -> Result<(), NameError> {
        validate_kind(&self.kind)?;
        validate_object_name(&self.kind, &self.name)?;
        validate_labels(&self.labels)?;
        validate_annotations(&self.annotations)
    }

    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(&self.kind, &self.name)
    }
}

impl From<Object> for ApplyRequest {
    fn from(object: Object) -> Self {
        let expected_revision = (object.meta.revision != 0).then_some(object.meta.revision);
        Self {
            kind: object.kind,
            name: object.name,
            labels: object.labels,
            annotations: object.annotations,
            spec: object.spec,
            expected_revision,
            owner: None,
        }
    }
}

/// `kind/name`, the identity of an object in the store. Kinds cannot contain `/`, so a kind's
/// objects form one contiguous key range.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    pub fn new(kind: &str, name: &str) -> Self {
        Self(format!("{kind}/{name}"))
    }

    /// The first key of a kind's range (inclusive) and the first key after it (exclusive).
    pub fn kind_range(kind: &str) -> (String, String) {
        (format!("{kind}/"), format!("{kind}0"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn kind(&self) -> &str {
        self.0
            .split_once('/')
            .map_or(self.0.as_str(), |(kind, _)| kind)
    }

    pub fn name(&self) -> &str {
        self.0.split_once('/').map_or("", |(_, name)| name)
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managed_fields_are_a_list_of_objects_or_nothing() {
        let meta = |managed: Value| {
            serde_json::from_value::<Meta>(serde_json::json!({"managed_fields": managed}))
        };
        assert!(meta(Value::Null).is_ok());
        assert!(meta(serde_json::json!([{"manager": "m"}])).is_ok());
        let refused = meta(serde_json::json!([null])).expect_err("not objects");
        assert!(
            refused
                .to_string()
                .contains("managed_fields must be a list of objects"),
            "{refused}"
        );
        assert!(meta(serde_json::json!({"manager": "m"})).is_err());
    }
}
