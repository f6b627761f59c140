//! OpenAPI v3 documents (`/openapi/v3` and one per group version) made from the Kind objects:
//! each resource's schema (its Kind's spec schema under `spec`) with
//! `x-kubernetes-group-version-kind`, and its paths, whose `PATCH` takes `fieldValidation`, so
//! kubectl leaves validation to the server and `kubectl explain` reads the kinds.

use super::catalog::Catalog;
use super::naming::Resource;
use serde_json::{Map, Value, json};

/// The schema name of the object metadata every resource refers to.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Why a document cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiError {
    #[error("the server could not find the requested resource: {0} is not served")]
    NotServed(String),
}

/// A digest of `text` for the index's URLs (clients cache a group version's document by it).
fn digest(text: &str) -> String {
    // FNV-1a, 64 bits: stable across runs and processes, enough to tell two documents apart.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016X}")
}

/// `/openapi/v3`: where each group version's document is.
pub fn index(catalog: &Catalog) -> Value {
    let mut paths = Map::new();
    for (group, versions) in catalog.groups() {
        for version in versions {
            let document = group_version(catalog, &group, &version)
                .map(|d| d.to_string())
                .unwrap_or_default();
            paths.insert(
                format!("apis/{group}/{version}"),
                json!({"serverRelativeURL": format!("/openapi/v3/apis/{group}/{version}?hash={}", digest(&document))}),
            );
        }
    }
    json!({"paths": paths})
}

/// The schema name of a resource, as Kubernetes names them (the group reversed).
fn schema_name(resource: &Resource) -> String {
    let reversed: Vec<&str> = resource.group.split('.').rev().collect();
    format!(
        "{}.{}.{}",
        reversed.join("."),
        resource.version,
        resource.kind
    )
}

fn gvk(resource: &Resource) -> Value {
    json!({"group": resource.group, "version": resource.version, "kind": resource.kind})
}

/// The schema of a resource's objects: its Kind's schema under `spec`.
fn schema(resource: &Resource) -> Value {
    let spec = match &resource.schema {
        Some(Value::Object(schema)) => Value::Object(schema.clone()),
        _ => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    };
    json!({
        "type": "object",
        "description": resource.description.clone().unwrap_or_else(|| format!("A {} object of reactor-host.", resource.kind)),
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"description": "Standard object's metadata.", "allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}]},
            "spec": spec,
            "status": {"type": "object", "description": "What the reactors observed.", "x-kubernetes-preserve-unknown-fields": true},
        },
        "x-kubernetes-group-version-kind": [gvk(resource)],
    })
}

fn object_meta() -> Value {
    let text = |description: &str| json!({"type": "string", "description": description});
    let map = |description: &str| json!({"type": "object", "additionalProperties": {"type": "string"}, "description": description});
    json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "properties": {
            "name": text("Name is unique within a kind."),
            "uid": text("UID is the unique in time and space value for this object."),
            "resourceVersion": text("The revision of the object's last change; a compare-and-swap guard on writes."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number of the desired state (spec changes)."},
            "creationTimestamp": text("When the object was created (RFC 3339)."),
            "deletionTimestamp": text("Set once the object is being deleted and finalizers hold it."),
            "labels": map("Labels select objects."),
            "annotations": map("Annotations are notes tools keep on the object."),
            "finalizers": {"type": "array", "items": {"type": "string"}, "description": "What must happen before the object is removed."},
            "ownerReferences": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "description": "The object whose reactor made this one."},
        },
    })
}

fn operation(
    id: &str,
    resource: &Resource,
    verb: &str,
    query: &[&str],
    body: Option<&[&str]>,
) -> Value {
    let mut op = json!({
        "operationId": id,
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": gvk(resource),
        "parameters": query
            .iter()
            .map(|name| json!({"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": true}))
            .collect::<Vec<_>>(),
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{}", schema_name(resource))}}}}},
    });
    if let Some(types) = body {
        let content: Map<String, Value> = types
            .iter()
            .map(|t| ((*t).to_owned(), json!({"schema": {"type": "object"}})))
            .collect();
        op["requestBody"] = json!({"content": content, "required": true});
    }
    op
}

/// `/openapi/v3/apis/{group}/{version}`.
pub fn group_version(catalog: &Catalog, group: &str, version: &str) -> Result<Value, OpenApiError> {
    let resources: Vec<&Resource> = catalog.in_version(group, version).collect();
    if resources.is_empty() {
        return Err(OpenApiError::NotServed(format!("{group}/{version}")));
    }
    let mut schemas = Map::new();
    schemas.insert(OBJECT_META.to_owned(), object_meta());
    let mut paths = Map::new();
    let write: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
    let patch_types: &[&str] = &[
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    for resource in resources {
        schemas.insert(schema_name(resource), schema(resource));
        let kind = &resource.kind;
        let base = format!("/apis/{group}/{version}/{}", resource.plural);
        paths.insert(
            base.clone(),
            json!({
                "get": operation(&format!("list{kind}"), resource, "list", &["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch", "allowWatchBookmarks", "timeoutSeconds"], None),
                "post": operation(&format!("create{kind}"), resource, "post", write, Some(&["application/json"])),
                "delete": operation(&format!("deletecollection{kind}"), resource, "deletecollection", &["labelSelector", "fieldSelector", "dryRun"], None),
            }),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({
                "get": operation(&format!("read{kind}"), resource, "get", &[], None),
                "put": operation(&format!("replace{kind}"), resource, "put", write, Some(&["application/json"])),
                "patch": operation(&format!("patch{kind}"), resource, "patch", write, Some(patch_types)),
                "delete": operation(&format!("delete{kind}"), resource, "delete", &["dryRun"], None),
                "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
            }),
        );
    }
    Ok(json!({
        "openapi": "3.0.0",
        "info": {"title": "reactor-host", "version": format!("{group}/{version}")},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_core::object::Object;

    #[test]
    fn documents_name_each_kind_for_kubectl() {
        let widget: Object = serde_json::from_value(json!({"kind": "Kind", "name": "Widget",
            "spec": {"description": "A widget.", "schema": {"type": "object", "properties": {"size": {"type": "integer"}}}}}))
        .expect("kind");
        let catalog = Catalog::new("reactor.dev", std::slice::from_ref(&widget));
        let index = index(&catalog);
        let url = index["paths"]["apis/reactor.dev/v1"]["serverRelativeURL"]
            .as_str()
            .expect("a URL");
        assert!(
            url.starts_with("/openapi/v3/apis/reactor.dev/v1?hash="),
            "{url}"
        );
        let document = group_version(&catalog, "reactor.dev", "v1").expect("served");
        let schema = &document["components"]["schemas"]["dev.reactor.v1.Widget"];
        assert_eq!(
            schema["x-kubernetes-group-version-kind"][0]["kind"],
            "Widget"
        );
        assert_eq!(
            schema["properties"]["spec"]["properties"]["size"]["type"],
            "integer"
        );
        assert_eq!(schema["description"], "A widget.");
        let patch = &document["paths"]["/apis/reactor.dev/v1/widgets/{name}"]["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Widget");
        assert!(
            patch["parameters"]
                .as_array()
                .expect("parameters")
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
        assert!(
            patch["requestBody"]["content"]
                .get("application/strategic-merge-patch+json")
                .is_none(),
            "kubectl must not send strategic merge patches"
        );
        assert!(group_version(&catalog, "reactor.dev", "v9").is_err());
    }
}
