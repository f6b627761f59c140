//! Watch events as Kubernetes streams them: `{"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR",
//! "object": ...}`, one JSON document per line.

use super::catalog::Catalog;
use super::mapping::to_kube;
use super::naming::Resource;
use super::status::KubeError;
use super::table::{IncludeObject, table};
use reactor_core::object::{Object, Revision};
use reactor_core::watch_event::{EventType, WatchEvent};
use serde_json::{Value, json};

/// The annotation of the bookmark that ends the initial events (`sendInitialEvents=true`).
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// How events show their objects: as objects, or as one-row tables (`kubectl get -w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Object,
    Table(IncludeObject),
}

/// Why an event cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("a {0:?} event carries no object")]
    NoObject(EventType),
}

fn shown(object: &Object, resource: &Resource, catalog: &Catalog, shape: Shape) -> Value {
    match shape {
        Shape::Object => to_kube(object, resource, catalog),
        Shape::Table(include) => table(
            std::slice::from_ref(object),
            resource,
            catalog,
            Some(object.meta.revision),
            include,
        ),
    }
}

/// An event of an object: `ADDED` for `type_name` `ADDED` etc.
pub fn object_event(
    type_name: &str,
    object: &Object,
    resource: &Resource,
    catalog: &Catalog,
    shape: Shape,
) -> Value {
    json!({"type": type_name, "object": shown(object, resource, catalog, shape)})
}

/// The line of a store event (`None` for a bookmark when bookmarks were not asked for).
pub fn from_store(
    event: &WatchEvent,
    resource: &Resource,
    catalog: &Catalog,
    shape: Shape,
    bookmarks: bool,
) -> Result<Option<Value>, EventError> {
    let type_name = match event.event_type {
        EventType::Bookmark => {
            return Ok(bookmarks.then(|| bookmark(event.revision, resource, false)));
        }
        EventType::Created => "ADDED",
        EventType::Updated => "MODIFIED",
        EventType::Deleted => "DELETED",
    };
    let object = event
        .object
        .as_deref()
        .ok_or(EventError::NoObject(event.event_type))?;
    let mut object = object.clone();
    // A deleted object's last version is the delete's.
    object.meta.revision = event.revision;
    Ok(Some(object_event(
        type_name, &object, resource, catalog, shape,
    )))
}

/// A `BOOKMARK`: the watch has seen everything up to `revision`.
pub fn bookmark(revision: Revision, resource: &Resource, initial_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if initial_end {
        metadata["annotations"] = json!({INITIAL_EVENTS_END: "true"});
    }
    json!({
        "type": "BOOKMARK",
        "object": {"apiVersion": resource.api_version(), "kind": resource.kind, "metadata": metadata},
    })
}

/// An `ERROR` event: the watch ends with this Status (e.g. `Expired` once compacted).
pub fn error(error: &KubeError) -> Value {
    json!({"type": "ERROR", "object": error.status(None)})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn store_events_as_kubernetes_events() {
        let catalog = Catalog::new("reactor.dev", &[]);
        let resource = catalog.by_kind("Kind").expect("kinds");
        let object: Object = serde_json::from_value(
            json!({"kind": "Kind", "name": "Policy", "meta": {"revision": 3}}),
        )
        .expect("object");
        let event = |event_type, revision| WatchEvent {
            event_type,
            revision,
            object: Some(Arc::new(object.clone())),
        };
        let line = from_store(
            &event(EventType::Created, 3),
            resource,
            &catalog,
            Shape::Object,
            false,
        )
        .expect("ok")
        .expect("a line");
        assert_eq!(line["type"], "ADDED");
        assert_eq!(line["object"]["metadata"]["name"], "Policy");
        let deleted = from_store(
            &event(EventType::Deleted, 9),
            resource,
            &catalog,
            Shape::Object,
            false,
        )
        .expect("ok")
        .expect("a line");
        assert_eq!(deleted["type"], "DELETED");
        assert_eq!(deleted["object"]["metadata"]["resourceVersion"], "9");
        let table = from_store(
            &event(EventType::Updated, 4),
            resource,
            &catalog,
            Shape::Table(IncludeObject::Metadata),
            false,
        )
        .expect("ok")
        .expect("a line");
        assert_eq!(table["type"], "MODIFIED");
        assert_eq!(table["object"]["kind"], "Table");
        let mark = WatchEvent::bookmark(12);
        assert_eq!(
            from_store(&mark, resource, &catalog, Shape::Object, false),
            Ok(None)
        );
        let shown = from_store(&mark, resource, &catalog, Shape::Object, true)
            .expect("ok")
            .expect("a bookmark");
        assert_eq!(shown["type"], "BOOKMARK");
        assert_eq!(shown["object"]["metadata"]["resourceVersion"], "12");
        let end = bookmark(12, resource, true);
        assert_eq!(
            end["object"]["metadata"]["annotations"][INITIAL_EVENTS_END],
            "true"
        );
        let expired = error(&KubeError::Expired("too old".into()));
        assert_eq!(expired["object"]["reason"], "Expired");
        assert_eq!(expired["object"]["code"], 410);
    }
}
