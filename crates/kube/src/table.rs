//! `kubectl get`'s tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): NAME, the
//! Kind's printer columns (the cells `reactor-host get` shows), then AGE.

use super::catalog::Catalog;
use super::mapping::to_kube;
use super::naming::Resource;
use reactor_core::object::{Object, Revision, column_cell};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};

/// What each row carries of its object (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    /// The object's metadata (a `PartialObjectMetadata`): what kubectl asks for by default.
    #[default]
    Metadata,
    Object,
}

/// Why a table cannot be made as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("includeObject must be None, Metadata or Object, not {0:?}")]
    IncludeObject(String),
}

impl IncludeObject {
    pub fn parse(value: Option<&str>) -> Result<Self, TableError> {
        match value {
            None | Some("") | Some("Metadata") => Ok(Self::Metadata),
            Some("None") => Ok(Self::None),
            Some("Object") => Ok(Self::Object),
            Some(other) => Err(TableError::IncludeObject(other.to_owned())),
        }
    }
}

/// Whether an `Accept` header asks for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
    })
}

/// The table of `objects` (a watch event's has one row), `revision` in its metadata.
pub fn table(
    objects: &[Object],
    resource: &Resource,
    catalog: &Catalog,
    revision: Option<Revision>,
    include: IncludeObject,
) -> Value {
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "The object's name, unique within its kind.",
    })];
    for column in &resource.columns {
        columns.push(json!({
            "name": column.name, "type": "string", "format": "", "priority": 0,
            "description": column.description.clone().unwrap_or_else(|| column.path.clone()),
        }));
    }
    columns.push(json!({
        "name": "Age", "type": "string", "format": "", "priority": 0,
        "description": "How long ago the object was created.",
    }));
    let queries: Vec<_> = resource.columns.iter().map(|c| c.query().ok()).collect();
    let now = SystemTime::now();
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let mut cells = vec![json!(object.name)];
            if !queries.is_empty() {
                let value = serde_json::to_value(object).unwrap_or_default();
                cells.extend(
                    queries
                        .iter()
                        .map(|query| json!(column_cell(query.as_ref(), &value))),
                );
            }
            cells.push(json!(age(&object.meta.created, now)));
            let mut row = json!({"cells": cells});
            let shown = match include {
                IncludeObject::None => None,
                IncludeObject::Metadata => {
                    let full = to_kube(object, resource, catalog);
                    Some(json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": full["metadata"],
                    }))
                }
                IncludeObject::Object => Some(to_kube(object, resource, catalog)),
            };
            if let Some(shown) = shown {
                row["object"] = shown;
            }
            row
        })
        .collect();
    let mut metadata = serde_json::Map::new();
    if let Some(revision) = revision {
        metadata.insert("resourceVersion".into(), json!(revision.to_string()));
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// How long ago `created` was, as kubectl shows an age (`45s`, `12m`, `5h`, `3d`).
pub fn age(created: &str, now: SystemTime) -> String {
    let Ok(created) = humantime::parse_rfc3339_weak(created) else {
        return "<unknown>".to_owned();
    };
    let since = now.duration_since(created).unwrap_or(Duration::ZERO);
    human(since)
}

fn human(since: Duration) -> String {
    let seconds = since.as_secs();
    match seconds {
        0..120 => format!("{seconds}s"),
        120..600 => format!("{}m{}s", seconds / 60, seconds % 60),
        600..10_800 => format!("{}m", seconds / 60),
        10_800..172_800 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_as_kubectl_shows_them() {
        let cases = [
            (5, "5s"),
            (150, "2m30s"),
            (1200, "20m"),
            (18_000, "5h"),
            (400_000, "4d"),
        ];
        for (seconds, shown) in cases {
            assert_eq!(human(Duration::from_secs(seconds)), shown);
        }
        assert_eq!(age("not a time", SystemTime::now()), "<unknown>");
    }

    #[test]
    fn a_table_has_the_kinds_columns() {
        let kind: Object = serde_json::from_value(json!({"kind": "Kind", "name": "Policy",
            "spec": {"columns": [{"name": "READY", "path": ".status.ready"}, {"name": "N", "path": ".spec.n"}]}}))
        .expect("kind");
        let catalog = Catalog::new("reactor.dev", &[kind]);
        let resource = catalog.by_kind("Policy").expect("served");
        let object: Object = serde_json::from_value(json!({"kind": "Policy", "name": "a",
            "spec": {"n": 3}, "status": {"ready": true}, "meta": {"created": "2026-01-01T00:00:00Z"}}))
        .expect("object");
        let shown = table(
            &[object],
            resource,
            &catalog,
            Some(7),
            IncludeObject::Metadata,
        );
        let names: Vec<&str> = shown["columnDefinitions"]
            .as_array()
            .expect("columns")
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["Name", "READY", "N", "Age"]);
        assert_eq!(shown["rows"][0]["cells"][0], "a");
        assert_eq!(shown["rows"][0]["cells"][1], "true");
        assert_eq!(shown["rows"][0]["cells"][2], "3");
        assert_eq!(shown["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(shown["metadata"]["resourceVersion"], "7");
        assert!(wants_table(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
        assert!(!wants_table("application/json"));
        assert_eq!(IncludeObject::parse(Some("None")), Ok(IncludeObject::None));
        assert!(IncludeObject::parse(Some("x")).is_err());
    }
}
