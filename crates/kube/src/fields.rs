//! Field sets: which fields of an object a manager set, as Kubernetes' `managedFields` record
//! them (`FieldsV1`). Maps are granular (each key its own field); lists and scalars are
//! atomic (one field, set whole), as Kubernetes treats a custom resource's lists by default.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// One field: the keys from the object's root to it, e.g. `["spec", "size"]`.
pub type Path = Vec<String>;

/// The fields of an object a manager owns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet(BTreeSet<Path>);

/// The parts of an object whose fields are managed through the main resource.
pub const MAIN: &[&[&str]] = &[
    &["metadata", "labels"],
    &["metadata", "annotations"],
    &["metadata", "finalizers"],
    &["spec"],
];

/// The part of an object managed through its `status` subresource.
pub const STATUS: &[&[&str]] = &[&["status"]];

impl FieldSet {
    /// The leaves `object` sets under each of `roots` (see [`MAIN`] and [`STATUS`]). A list
    /// root (`metadata.finalizers`) is one field.
    pub fn of(object: &Value, roots: &[&[&str]]) -> Self {
        let mut set = BTreeSet::new();
        for root in roots {
            let path: Path = root.iter().map(|k| (*k).to_owned()).collect();
            if let Some(value) = at(object, &path) {
                leaves(value, path, &mut set);
            }
        }
        Self(set)
    }

    /// The fields `after` sets that `before` did not set to the same value, and the fields
    /// `before` set that `after` no longer has: what an update changed.
    pub fn changed(before: &Value, after: &Value, roots: &[&[&str]]) -> (Self, Self) {
        let old = Self::of(before, roots);
        let new = Self::of(after, roots);
        let set = new
            .0
            .iter()
            .filter(|p| at(before, p) != at(after, p))
            .cloned()
            .collect();
        let gone = old.0.difference(&new.0).cloned().collect();
        (Self(set), Self(gone))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Path> {
        self.0.iter()
    }

    /// Whether `path` is one of these fields, or lies inside or around one of them.
    pub fn overlaps(&self, path: &[String]) -> Option<&Path> {
        self.0
            .iter()
            .find(|owned| owned.starts_with(path) || path.starts_with(owned))
    }

    pub fn insert(&mut self, path: Path) {
        self.0.insert(path);
    }

    /// Removes every field overlapping `path`.
    pub fn remove_overlapping(&mut self, path: &[String]) {
        self.0
            .retain(|owned| !(owned.starts_with(path) || path.starts_with(owned)));
    }

    pub fn union(&self, other: &Self) -> Self {
        Self(self.0.union(&other.0).cloned().collect())
    }

    pub fn difference(&self, other: &Self) -> Self {
        Self(self.0.difference(&other.0).cloned().collect())
    }

    /// The set as `FieldsV1` writes it: `{"f:spec": {"f:size": {}}}`.
    pub fn to_fields_v1(&self) -> Value {
        let mut root = Map::new();
        for path in &self.0 {
            let mut node = &mut root;
            for key in path {
                let entry = node
                    .entry(format!("f:{key}"))
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(next) = entry else {
                    unreachable!("every node is written as a map")
                };
                node = next;
            }
        }
        Value::Object(root)
    }

    /// A set read from `FieldsV1`. Keys other than `f:` (`k:`, `v:`, `i:` of list items,
    /// which this server never writes) and `.` end the path where they stand.
    pub fn from_fields_v1(fields: &Value) -> Self {
        fn walk(node: &Map<String, Value>, path: &mut Path, set: &mut BTreeSet<Path>) {
            let children: Vec<(&str, &Value)> = node
                .iter()
                .filter_map(|(k, v)| k.strip_prefix("f:").map(|k| (k, v)))
                .collect();
            if (children.is_empty() || node.contains_key(".")) && !path.is_empty() {
                set.insert(path.clone());
            }
            for (key, child) in children {
                path.push(key.to_owned());
                match child {
                    Value::Object(child) => walk(child, path, set),
                    _ => {
                        set.insert(path.clone());
                    }
                }
                path.pop();
            }
        }
        let mut set = BTreeSet::new();
        if let Value::Object(node) = fields {
            walk(node, &mut Vec::new(), &mut set);
        }
        Self(set)
    }
}

/// A field as Kubernetes names it in a conflict: `.spec.size`.
pub fn dotted(path: &[String]) -> String {
    path.iter().map(|k| format!(".{k}")).collect()
}

/// The value at `path` in `value`, if there is one.
pub fn at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |node, key| node.get(key))
}

/// Sets the value at `path`, making the maps on the way.
pub fn set(value: &mut Value, path: &[String], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return;
    };
    let mut node = value;
    for key in parents {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else {
            unreachable!("made a map above")
        };
        node = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    if let Value::Object(map) = node {
        map.insert(last.clone(), new);
    }
}

/// Removes the value at `path`, and the maps it leaves empty on the way up (up to the root).
pub fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = &mut *value;
    for key in parents {
        match node.get_mut(key) {
            Some(next) => node = next,
            None => return,
        }
    }
    if let Value::Object(map) = node {
        map.remove(last);
        if map.is_empty() && parents.len() > 1 {
            remove(value, parents);
        }
    }
}

fn leaves(value: &Value, path: Path, set: &mut BTreeSet<Path>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let mut child_path = path.clone();
                child_path.push(key.clone());
                leaves(child, child_path, set);
            }
        }
        Value::Null => {}
        _ => {
            set.insert(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(dotted: &str) -> Path {
        dotted.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn the_leaves_of_the_managed_parts() {
        let object = json!({
            "metadata": {"name": "a", "labels": {"app": "web"}, "finalizers": ["f"]},
            "spec": {"size": 3, "rules": [1, 2], "deep": {"x": {"y": true}}, "gone": null},
            "status": {"ready": true}
        });
        let set = FieldSet::of(&object, MAIN);
        let paths: Vec<&Path> = set.iter().collect();
        assert_eq!(
            paths,
            [
                &path("metadata.finalizers"),
                &path("metadata.labels.app"),
                &path("spec.deep.x.y"),
                &path("spec.rules"),
                &path("spec.size"),
            ]
        );
        assert_eq!(
            FieldSet::of(&object, STATUS).iter().collect::<Vec<_>>(),
            [&path("status.ready")]
        );
    }

    #[test]
    fn fields_v1_both_ways() {
        let object =
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"size": 3, "deep": {"x": 1}}});
        let set = FieldSet::of(&object, MAIN);
        let v1 = set.to_fields_v1();
        assert_eq!(
            v1,
            json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:size": {}, "f:deep": {"f:x": {}}}})
        );
        assert_eq!(FieldSet::from_fields_v1(&v1), set);
        // Kubernetes' own `.` and list-item keys end a path where they stand.
        let theirs = json!({"f:spec": {".": {}, "f:rules": {"k:{\"name\":\"a\"}": {}}}});
        let read = FieldSet::from_fields_v1(&theirs);
        assert_eq!(
            read.iter().collect::<Vec<_>>(),
            [&path("spec"), &path("spec.rules")]
        );
    }

    #[test]
    fn what_an_update_changed() {
        let before = json!({"spec": {"a": 1, "b": 2, "c": {"d": 1}}});
        let after = json!({"spec": {"a": 1, "b": 3, "e": true}});
        let (changed, gone) = FieldSet::changed(&before, &after, MAIN);
        assert_eq!(
            changed.iter().collect::<Vec<_>>(),
            [&path("spec.b"), &path("spec.e")]
        );
        assert_eq!(gone.iter().collect::<Vec<_>>(), [&path("spec.c.d")]);
    }

    #[test]
    fn set_and_remove_keep_the_maps_tidy() {
        let mut value = json!({"spec": {"a": {"b": 1}}});
        set(&mut value, &path("spec.x.y"), json!(2));
        assert_eq!(value, json!({"spec": {"a": {"b": 1}, "x": {"y": 2}}}));
        remove(&mut value, &path("spec.a.b"));
        assert_eq!(value, json!({"spec": {"x": {"y": 2}}}));
        remove(&mut value, &path("spec.x.y"));
        assert_eq!(value, json!({"spec": {}}));
        remove(&mut value, &path("spec.nothing.here"));
        assert_eq!(value, json!({"spec": {}}));
        assert_eq!(dotted(&path("spec.size")), ".spec.size");
        let set = FieldSet::of(&json!({"spec": {"a": {"b": 1}}}), MAIN);
        assert!(set.overlaps(&path("spec.a")).is_some());
        assert!(set.overlaps(&path("spec.a.b.c")).is_some());
        assert!(set.overlaps(&path("spec.b")).is_none());
    }
}
