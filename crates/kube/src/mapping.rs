//! An object as the Kubernetes API shows it (apiVersion, kind, metadata, spec, status), and
//! what a Kubernetes client sends read back into an apply.

use super::catalog::Catalog;
use super::naming::Resource;
use reactor_core::object::{ApplyRequest, Object, Revision};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Why a body cannot be read as an object of the resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    #[error("the body must be a JSON object")]
    NotAnObject,
    #[error("apiVersion {found:?} does not match the request's {expected:?}")]
    ApiVersion { found: String, expected: String },
    #[error("kind {found:?} does not match the request's {expected:?}")]
    Kind { found: String, expected: String },
    #[error("metadata.name: Required value: name is required")]
    NoName,
    #[error("the name of the object ({body}) does not match the name on the URL ({path})")]
    NameMismatch { body: String, path: String },
    #[error("metadata.resourceVersion: Invalid value: {0:?}: must be a number")]
    ResourceVersion(String),
    #[error("{field}: Invalid value: {problem}")]
    Field { field: String, problem: String },
    #[error("strict decoding error: unknown field {0:?}")]
    UnknownField(String),
}

/// An RFC 3339 time of the store (milliseconds) in seconds, as Kubernetes writes times.
pub fn to_seconds(stamp: &str) -> String {
    humantime::parse_rfc3339_weak(stamp)
        .map(|t| humantime::format_rfc3339_seconds(t).to_string())
        .unwrap_or_else(|_| stamp.to_owned())
}

/// The object as the Kubernetes API answers it.
pub fn to_kube(object: &Object, resource: &Resource, catalog: &Catalog) -> Value {
    let meta = &object.meta;
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(object.name));
    if !meta.uid.is_empty() {
        metadata.insert("uid".into(), json!(meta.uid));
    }
    metadata.insert("resourceVersion".into(), json!(meta.revision.to_string()));
    metadata.insert("generation".into(), json!(meta.generation));
    if !meta.created.is_empty() {
        metadata.insert("creationTimestamp".into(), json!(to_seconds(&meta.created)));
    }
    if meta.deleting {
        // Objects stored before the delete time was kept: their last change.
        let asked = if meta.deleted.is_empty() {
            &meta.updated
        } else {
            &meta.deleted
        };
        metadata.insert("deletionTimestamp".into(), json!(to_seconds(asked)));
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
    }
    if !object.labels.is_empty() {
        metadata.insert("labels".into(), json!(object.labels));
    }
    if !object.annotations.is_empty() {
        metadata.insert("annotations".into(), json!(object.annotations));
    }
    if !meta.finalizers.is_empty() {
        metadata.insert("finalizers".into(), json!(meta.finalizers));
    }
    if let Some(owner) = &meta.owner {
        let api_version = catalog
            .by_kind(&owner.kind)
            .map(Resource::api_version)
            .unwrap_or_else(|| format!("{}/{}", catalog.group, super::naming::DEFAULT_VERSION));
        metadata.insert(
            "ownerReferences".into(),
            json!([{
                "apiVersion": api_version,
                "kind": owner.kind,
                "name": owner.name,
                "uid": owner.uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }]),
        );
    }
    if !meta.managed_fields.is_null() {
        metadata.insert("managedFields".into(), meta.managed_fields.clone());
    }
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(resource.api_version()));
    out.insert("kind".into(), json!(resource.kind));
    out.insert("metadata".into(), Value::Object(metadata));
    if !object.spec.is_null() {
        out.insert("spec".into(), object.spec.clone());
    }
    if !object.status.is_null() {
        out.insert("status".into(), object.status.clone());
    }
    Value::Object(out)
}

/// A list of objects as the Kubernetes API answers it.
pub fn to_list(
    objects: &[Object],
    resource: &Resource,
    catalog: &Catalog,
    revision: Revision,
    next: Option<String>,
) -> Value {
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    if let Some(next) = next {
        metadata.insert("continue".into(), json!(next));
    }
    json!({
        "apiVersion": resource.api_version(),
        "kind": format!("{}List", resource.kind),
        "metadata": metadata,
        "items": objects.iter().map(|o| to_kube(o, resource, catalog)).collect::<Vec<_>>(),
    })
}

/// What a Kubernetes client sends for one object, read as the store takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    pub request: ApplyRequest,
    /// `metadata.finalizers`, when the body has them.
    pub finalizers: Option<Vec<String>>,
    pub status: Value,
}

/// Reads `body` as an object of `resource`; `path_name` is the name the URL gives, if any.
/// Server-owned metadata (uid, timestamps, generation, managed fields) is ignored;
/// `resourceVersion`, when set, is the compare-and-swap guard.
pub fn from_kube(
    body: Value,
    resource: &Resource,
    path_name: Option<&str>,
) -> Result<Incoming, MappingError> {
    let Value::Object(mut body) = body else {
        return Err(MappingError::NotAnObject);
    };
    let expected = resource.api_version();
    match body.remove("apiVersion") {
        Some(Value::String(found)) if found != expected => {
            return Err(MappingError::ApiVersion { found, expected });
        }
        _ => {}
    }
    match body.remove("kind") {
        Some(Value::String(found)) if found != resource.kind => {
            return Err(MappingError::Kind {
                found,
                expected: resource.kind.clone(),
            });
        }
        _ => {}
    }
    let metadata = match body.remove("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(metadata)) => metadata,
        Some(_) => return Err(field("metadata", "must be an object")),
    };
    let spec = body.remove("spec").unwrap_or(Value::Null);
    let status = body.remove("status").unwrap_or(Value::Null);
    if let Some(unknown) = body.keys().next() {
        return Err(MappingError::UnknownField(unknown.clone()));
    }
    let name = match (metadata.get("name"), path_name) {
        (Some(Value::String(body)), Some(path)) if body != path => {
            return Err(MappingError::NameMismatch {
                body: body.clone(),
                path: path.to_owned(),
            });
        }
        (Some(Value::String(name)), _) if !name.is_empty() => name.clone(),
        (None | Some(Value::Null), Some(path)) => path.to_owned(),
        _ => return Err(MappingError::NoName),
    };
    let expected_revision = match metadata.get("resourceVersion") {
        None | Some(Value::Null) => None,
        Some(Value::String(rv)) if rv.is_empty() => None,
        Some(Value::String(rv)) => Some(
            rv.parse::<Revision>()
                .map_err(|_| MappingError::ResourceVersion(rv.clone()))?,
        ),
        Some(other) => return Err(MappingError::ResourceVersion(other.to_string())),
    };
    let labels = string_map(&metadata, "labels")?;
    let annotations = string_map(&metadata, "annotations")?;
    let finalizers = match metadata.get("finalizers") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            serde_json::from_value::<Vec<String>>(value.clone())
                .map_err(|e| field("metadata.finalizers", &e.to_string()))?,
        ),
    };
    Ok(Incoming {
        request: ApplyRequest {
            kind: resource.kind.clone(),
            name,
            labels,
            annotations,
            spec,
            expected_revision: expected_revision.filter(|r| *r != 0),
            owner: None,
        },
        finalizers,
        status,
    })
}

fn field(field: &str, problem: &str) -> MappingError {
    MappingError::Field {
        field: field.to_owned(),
        problem: problem.to_owned(),
    }
}

fn string_map(
    metadata: &Map<String, Value>,
    key: &str,
) -> Result<BTreeMap<String, String>, MappingError> {
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| {
            field(
                &format!("metadata.{key}"),
                &format!("must map strings to strings: {e}"),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_core::object::Owner;

    fn catalog() -> Catalog {
        let kind: Object =
            serde_json::from_value(json!({"kind": "Kind", "name": "Tenant"})).expect("kind");
        let policy: Object = serde_json::from_value(
            json!({"kind": "Kind", "name": "Policy", "spec": {"shortNames": ["pol"]}}),
        )
        .expect("kind");
        Catalog::new("reactor.dev", &[kind, policy])
    }

    fn stored() -> Object {
        serde_json::from_value(json!({
            "kind": "Policy", "name": "a", "labels": {"app": "web"},
            "annotations": {"note": "x"}, "spec": {"n": 1}, "status": {"ok": true},
            "meta": {"uid": "u-1", "revision": 42, "generation": 3,
                     "created": "2026-01-02T03:04:05.678Z", "updated": "2026-01-02T03:05:00.000Z",
                     "finalizers": ["f"], "deleting": true, "deleted": "2026-01-02T03:04:59.000Z",
                     "managed_fields": [{"manager": "m", "operation": "Apply"}],
                     "owner": {"kind": "Tenant", "name": "t", "uid": "u-0", "component": "c"}}
        }))
        .expect("object")
    }

    #[test]
    fn an_object_in_kubernetes_shape() {
        let catalog = catalog();
        let resource = catalog.by_kind("Policy").expect("served");
        let shown = to_kube(&stored(), resource, &catalog);
        assert_eq!(shown["apiVersion"], "reactor.dev/v1");
        assert_eq!(shown["kind"], "Policy");
        let metadata = &shown["metadata"];
        assert_eq!(metadata["resourceVersion"], "42");
        assert_eq!(metadata["generation"], 3);
        assert_eq!(metadata["uid"], "u-1");
        assert_eq!(metadata["creationTimestamp"], "2026-01-02T03:04:05Z");
        assert_eq!(metadata["deletionTimestamp"], "2026-01-02T03:04:59Z");
        assert_eq!(metadata["labels"]["app"], "web");
        assert_eq!(metadata["annotations"]["note"], "x");
        assert_eq!(metadata["finalizers"], json!(["f"]));
        assert_eq!(metadata["managedFields"][0]["manager"], "m");
        assert_eq!(
            metadata["ownerReferences"][0]["apiVersion"],
            "reactor.dev/v1"
        );
        assert_eq!(metadata["ownerReferences"][0]["kind"], "Tenant");
        assert_eq!(metadata["ownerReferences"][0]["uid"], "u-0");
        assert_eq!(shown["spec"]["n"], 1);
        assert_eq!(shown["status"]["ok"], true);
        let _ = Owner::default();
    }

    #[test]
    fn what_a_client_sends_is_read_back() {
        let catalog = catalog();
        let resource = catalog.by_kind("Policy").expect("served");
        let shown = to_kube(&stored(), resource, &catalog);
        let incoming = from_kube(shown, resource, Some("a")).expect("read");
        assert_eq!(incoming.request.expected_revision, Some(42));
        assert_eq!(incoming.request.labels["app"], "web");
        assert_eq!(incoming.request.annotations["note"], "x");
        assert_eq!(incoming.finalizers, Some(vec!["f".to_owned()]));
        assert_eq!(incoming.request.spec, json!({"n": 1}));

        let read = |body: Value| from_kube(body, resource, Some("a"));
        assert!(matches!(
            read(json!({"apiVersion": "x/v1", "kind": "Policy"})),
            Err(MappingError::ApiVersion { .. })
        ));
        assert!(matches!(
            read(json!({"kind": "Tenant"})),
            Err(MappingError::Kind { .. })
        ));
        assert!(matches!(
            read(json!({"metadata": {"name": "b"}})),
            Err(MappingError::NameMismatch { .. })
        ));
        assert!(matches!(
            read(json!({"metadata": {"resourceVersion": "x"}})),
            Err(MappingError::ResourceVersion(_))
        ));
        assert!(matches!(
            read(json!({"data": 1})),
            Err(MappingError::UnknownField(_))
        ));
        assert!(matches!(read(json!([])), Err(MappingError::NotAnObject)));
        assert!(matches!(
            from_kube(json!({}), resource, None),
            Err(MappingError::NoName)
        ));
        assert!(matches!(
            read(json!({"metadata": {"labels": {"a": 1}}})),
            Err(MappingError::Field { .. })
        ));
    }
}
