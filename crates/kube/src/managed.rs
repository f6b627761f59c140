//! `metadata.managedFields`: which manager set which fields, by what operation. An update
//! (create, replace, patch) takes over the fields it changed; a server-side apply merges the
//! fields it sends, removes those its manager stopped sending, and conflicts on a field
//! another manager set to another value unless forced.

use super::fields::{FieldSet, Path, at, dotted, remove, set};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
use serde_json::Value;

/// How a manager last wrote its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// Who writes, through what: the manager's name, and `""` or `"status"`.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    pub manager: &'a str,
    pub subresource: &'a str,
    /// The resource's `group/version`, recorded with the fields.
    pub api_version: &'a str,
    /// Now, in ms since the Unix epoch.
    pub now_ms: u64,
}

/// A server-side apply that sets fields other managers set to other values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", conflict_message(.0))]
pub struct Conflicts(pub Vec<(String, String, Path)>);

/// Kubernetes' wording: `Apply failed with 1 conflict: conflict with "m" using g/v: .spec.a`.
fn conflict_message(conflicts: &[(String, String, Path)]) -> String {
    let count = conflicts.len();
    let plural = if count == 1 { "" } else { "s" };
    let mut message = format!("Apply failed with {count} conflict{plural}: ");
    if let [(manager, api_version, path)] = conflicts {
        message.push_str(&format!(
            "conflict with \"{manager}\" using {api_version}: {}",
            dotted(path)
        ));
        return message;
    }
    let mut managers: Vec<(&str, &str)> = Vec::new();
    for (manager, api_version, _) in conflicts {
        if !managers.contains(&(manager.as_str(), api_version.as_str())) {
            managers.push((manager, api_version));
        }
    }
    for (i, (manager, api_version)) in managers.iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        message.push_str(&format!(
            "conflicts with \"{manager}\" using {api_version}:"
        ));
        for (_, _, path) in conflicts
            .iter()
            .filter(|(m, v, _)| m == manager && v == api_version)
        {
            message.push_str(&format!("\n- {}", dotted(path)));
        }
    }
    message
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    manager: String,
    operation: Operation,
    subresource: String,
    api_version: String,
    time_ms: u64,
    fields: FieldSet,
}

impl Entry {
    fn is(&self, writer: &Writer<'_>, operation: Operation) -> bool {
        self.manager == writer.manager
            && self.operation == operation
            && self.subresource == writer.subresource
    }
}

/// The managers of one object's fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Managers(Vec<Entry>);

impl Managers {
    /// The managers recorded in `managed` (the stored `managedFields` list); entries that are
    /// not in Kubernetes' shape are dropped.
    pub fn read(managed: &Value) -> Self {
        let entries: Vec<ManagedFieldsEntry> = match managed {
            Value::Array(items) => items
                .iter()
                .filter_map(|item| serde_json::from_value(item.clone()).ok())
                .collect(),
            _ => Vec::new(),
        };
        Self(
            entries
                .into_iter()
                .filter_map(|entry| {
                    let operation = match entry.operation.as_deref() {
                        Some("Apply") => Operation::Apply,
                        Some("Update") => Operation::Update,
                        _ => return None,
                    };
                    Some(Entry {
                        manager: entry.manager?,
                        operation,
                        subresource: entry.subresource.unwrap_or_default(),
                        api_version: entry.api_version.unwrap_or_default(),
                        time_ms: entry
                            .time
                            .and_then(|t| u64::try_from(t.0.as_millisecond()).ok())
                            .unwrap_or_default(),
                        fields: entry
                            .fields_v1
                            .map(|f| FieldSet::from_fields_v1(&f.0))
                            .unwrap_or_default(),
                    })
                })
                .collect(),
        )
    }

    /// The `managedFields` list to store and show (`null` when no one manages a field).
    pub fn to_value(&self) -> Value {
        if self.0.is_empty() {
            return Value::Null;
        }
        let entries: Vec<ManagedFieldsEntry> = self
            .0
            .iter()
            .map(|entry| ManagedFieldsEntry {
                api_version: Some(entry.api_version.clone()),
                fields_type: Some("FieldsV1".to_owned()),
                fields_v1: Some(FieldsV1(entry.fields.to_fields_v1())),
                manager: Some(entry.manager.clone()),
                operation: Some(entry.operation.name().to_owned()),
                subresource: (!entry.subresource.is_empty()).then(|| entry.subresource.clone()),
                time: i64::try_from(entry.time_ms)
                    .ok()
                    .and_then(|ms| k8s_openapi::jiff::Timestamp::from_millisecond(ms).ok())
                    .map(Time),
            })
            .collect();
        serde_json::to_value(entries).unwrap_or(Value::Null)
    }

    /// Records an update by `writer` from `before` to `after` (both as the API shows them,
    /// `before` null for a create) of the fields under `roots`: the writer takes over the
    /// fields it changed; fields that are gone are no one's.
    pub fn update(
        &mut self,
        writer: &Writer<'_>,
        before: &Value,
        after: &Value,
        roots: &[&[&str]],
    ) {
        let (changed, gone) = FieldSet::changed(before, after, roots);
        if changed.is_empty() && gone.is_empty() {
            return;
        }
        for entry in &mut self.0 {
            for path in gone.iter() {
                entry.fields.remove_overlapping(path);
            }
            if !entry.is(writer, Operation::Update) {
                for path in changed.iter() {
                    entry.fields.remove_overlapping(path);
                }
            }
        }
        let mine = self.entry(writer, Operation::Update);
        mine.fields = mine.fields.union(&changed);
        mine.time_ms = writer.now_ms;
        self.0.retain(|e| !e.fields.is_empty());
    }

    /// A server-side apply by `writer` of `applied` (the configuration it sent, as the API
    /// shows objects) over `live`: the object to store, or the conflicts when `force` is not
    /// set. Fields the writer applied before and no longer sends are removed unless another
    /// manager also set them.
    pub fn apply(
        &mut self,
        writer: &Writer<'_>,
        live: &Value,
        applied: &Value,
        roots: &[&[&str]],
        force: bool,
    ) -> Result<Value, Conflicts> {
        let wanted = FieldSet::of(applied, roots);
        let mut conflicts = Vec::new();
        for entry in self.0.iter().filter(|e| !e.is(writer, Operation::Apply)) {
            for path in wanted.iter() {
                if let Some(owned) = entry.fields.overlaps(path)
                    && at(live, owned) != at(applied, owned)
                {
                    let conflict = (
                        entry.manager.clone(),
                        entry.api_version.clone(),
                        owned.clone(),
                    );
                    if !conflicts.contains(&conflict) {
                        conflicts.push(conflict);
                    }
                }
            }
        }
        if !conflicts.is_empty() && !force {
            return Err(Conflicts(conflicts));
        }
        for entry in self
            .0
            .iter_mut()
            .filter(|e| !e.is(writer, Operation::Apply))
        {
            for (manager, _, path) in &conflicts {
                if *manager == entry.manager {
                    entry.fields.remove_overlapping(path);
                }
            }
        }
        let before = self
            .0
            .iter()
            .find(|e| e.is(writer, Operation::Apply))
            .map(|e| e.fields.clone())
            .unwrap_or_default();
        let mut merged = live.clone();
        for dropped in before.difference(&wanted).iter() {
            let kept = self
                .0
                .iter()
                .filter(|e| !e.is(writer, Operation::Apply))
                .any(|e| e.fields.overlaps(dropped).is_some());
            if !kept && wanted.overlaps(dropped).is_none() {
                remove(&mut merged, dropped);
            }
        }
        for path in wanted.iter() {
            if let Some(value) = at(applied, path) {
                set(&mut merged, path, value.clone());
            }
        }
        let changed = merged != *live || before != wanted;
        let mine = self.entry(writer, Operation::Apply);
        mine.fields = wanted;
        if changed || mine.time_ms == 0 {
            mine.time_ms = writer.now_ms;
        }
        self.0.retain(|e| !e.fields.is_empty());
        Ok(merged)
    }

    fn entry(&mut self, writer: &Writer<'_>, operation: Operation) -> &mut Entry {
        let index = match self.0.iter().position(|e| e.is(writer, operation)) {
            Some(index) => index,
            None => {
                self.0.push(Entry {
                    manager: writer.manager.to_owned(),
                    operation,
                    subresource: writer.subresource.to_owned(),
                    api_version: writer.api_version.to_owned(),
                    time_ms: 0,
                    fields: FieldSet::default(),
                });
                self.0.len() - 1
            }
        };
        &mut self.0[index]
    }

    /// The fields `manager` holds by `operation`, dotted (for tests and `describe`).
    pub fn fields_of(&self, manager: &str, operation: Operation) -> Vec<String> {
        self.0
            .iter()
            .filter(|e| e.manager == manager && e.operation == operation)
            .flat_map(|e| e.fields.iter().map(|p| dotted(p)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::MAIN;
    use super::*;
    use serde_json::json;

    fn writer(manager: &str) -> Writer<'_> {
        Writer {
            manager,
            subresource: "",
            api_version: "reactor.dev/v1",
            now_ms: 1_700_000_000_000,
        }
    }

    #[test]
    fn an_apply_sets_then_removes_what_it_stops_sending() {
        let mut managers = Managers::default();
        let live = json!({"metadata": {"name": "a"}});
        let first = json!({"metadata": {"name": "a", "labels": {"app": "web"}}, "spec": {"size": 3, "color": "red"}});
        let merged = managers
            .apply(&writer("alice"), &live, &first, MAIN, false)
            .expect("applied");
        assert_eq!(merged["spec"], json!({"size": 3, "color": "red"}));
        assert_eq!(
            managers.fields_of("alice", Operation::Apply),
            [".metadata.labels.app", ".spec.color", ".spec.size"]
        );
        // A field someone else set stays; the one alice stops sending goes.
        let mut live = merged;
        managers.update(
            &writer("bob"),
            &live.clone(),
            &{
                let mut after = live.clone();
                after["spec"]["extra"] = json!(1);
                after
            },
            MAIN,
        );
        live["spec"]["extra"] = json!(1);
        let second = json!({"metadata": {"name": "a"}, "spec": {"size": 3}});
        let merged = managers
            .apply(&writer("alice"), &live, &second, MAIN, false)
            .expect("applied");
        assert_eq!(merged["spec"], json!({"size": 3, "extra": 1}));
        assert_eq!(merged["metadata"].get("labels"), None);
        assert_eq!(
            managers.fields_of("bob", Operation::Update),
            [".spec.extra"]
        );
        // The record reads back from its stored form.
        assert_eq!(Managers::read(&managers.to_value()), managers);
        assert_eq!(managers.to_value()[0]["fieldsType"], "FieldsV1");
        assert_eq!(managers.to_value()[0]["time"], "2023-11-14T22:13:20Z");
    }

    #[test]
    fn another_managers_field_is_a_conflict_unless_forced_or_equal() {
        let mut managers = Managers::default();
        let live = json!({"spec": {"size": 3}});
        managers.update(&writer("kubectl-edit"), &Value::Null, &live, MAIN);
        // The same value: shared, no conflict.
        let same = json!({"spec": {"size": 3}});
        managers
            .apply(&writer("alice"), &live, &same, MAIN, false)
            .expect("the same value is shared");
        let other = json!({"spec": {"size": 5}});
        let conflicts = managers
            .clone()
            .apply(&writer("carol"), &live, &other, MAIN, false)
            .expect_err("conflict");
        assert_eq!(
            conflicts.to_string(),
            "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using reactor.dev/v1:\n- .spec.size\nconflicts with \"alice\" using reactor.dev/v1:\n- .spec.size"
        );
        let merged = managers
            .apply(&writer("carol"), &live, &other, MAIN, true)
            .expect("forced");
        assert_eq!(merged["spec"]["size"], 5);
        assert!(
            managers
                .fields_of("kubectl-edit", Operation::Update)
                .is_empty()
        );
        assert!(managers.fields_of("alice", Operation::Apply).is_empty());
        assert_eq!(
            managers.fields_of("carol", Operation::Apply),
            [".spec.size"]
        );
        let one = managers
            .apply(
                &writer("dave"),
                &merged,
                &json!({"spec": {"size": 6}}),
                MAIN,
                false,
            )
            .expect_err("conflict");
        assert_eq!(
            one.to_string(),
            "Apply failed with 1 conflict: conflict with \"carol\" using reactor.dev/v1: .spec.size"
        );
    }

    #[test]
    fn an_update_takes_over_what_it_changed_and_drops_what_is_gone() {
        let mut managers = Managers::default();
        let live = json!({"spec": {"a": 1, "b": 2}});
        managers
            .apply(&writer("alice"), &json!({}), &live, MAIN, false)
            .expect("applied");
        managers.update(&writer("bob"), &live, &json!({"spec": {"a": 9}}), MAIN);
        assert_eq!(
            managers.fields_of("alice", Operation::Apply),
            Vec::<String>::new()
        );
        assert_eq!(managers.fields_of("bob", Operation::Update), [".spec.a"]);
        // An update that changes nothing records nothing.
        let before = managers.clone();
        managers.update(&writer("eve"), &live, &live, MAIN);
        assert_eq!(managers, before);
    }
}
