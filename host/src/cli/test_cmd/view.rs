//! The result of a test as YAML: every object (children with their owner) and every Nimbus
//! item, in a fixed order, without what changes from run to run (uids, revisions,
//! timestamps, the component's version hash), so that the same fixtures print the same text.

use crate::nimbus::{AGENT_KIND, ITEM_KIND, Item, ItemTarget, REPORT_KIND};
use crate::object::{Object, Selector};
use crate::store::{Store, StoreError};
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Keys of `status.reconcile.<reactor>` dropped: when the next retry is due, and the
/// component version (a hash of the build).
const VOLATILE_RECONCILE: [&str; 2] = ["nextRetry", "version"];

/// The store's content as the test prints it.
pub async fn render(store: &dyn Store) -> anyhow::Result<String> {
    let mut objects = Vec::new();
    let mut items = Vec::new();
    for kind in kinds(store).await? {
        let listing = store.list(&kind, &Selector::default()).await?;
        if kind == ITEM_KIND {
            items.extend(listing.items.iter().filter_map(item_view));
        } else if kind != REPORT_KIND && kind != AGENT_KIND {
            objects.extend(listing.items.iter().map(object_view));
        }
    }
    items.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
    to_yaml(&json!({"objects": objects, "items": items}))
}

/// The text the result and an expectation are compared as.
pub fn to_yaml(value: &Value) -> anyhow::Result<String> {
    Ok(serde_yaml_ng::to_string(value)?)
}

/// Every kind ever written, from the store's change log (the test's store keeps all of it).
async fn kinds(store: &dyn Store) -> Result<BTreeSet<String>, StoreError> {
    let latest = store.revision().await?;
    let mut kinds = BTreeSet::new();
    if latest == 0 {
        return Ok(kinds);
    }
    let mut changes = store.watch(None, 0).await?;
    while let Some(change) = changes.next().await {
        let change = change?;
        if let Some(object) = &change.object {
            kinds.insert(object.kind.clone());
        }
        if change.revision >= latest {
            break;
        }
    }
    Ok(kinds)
}

fn object_view(object: &Object) -> Value {
    let mut view = Map::new();
    view.insert("kind".into(), json!(object.kind));
    view.insert("name".into(), json!(object.name));
    if !object.labels.is_empty() {
        view.insert("labels".into(), json!(object.labels));
    }
    if let Some(owner) = &object.meta.owner {
        view.insert(
            "owner".into(),
            json!({"kind": owner.kind, "name": owner.name, "component": owner.component}),
        );
    }
    if object.meta.deleting {
        view.insert("deleting".into(), json!(true));
        view.insert("finalizers".into(), json!(object.meta.finalizers));
    }
    view.insert("spec".into(), object.spec.clone());
    if !object.status.is_null() {
        view.insert("status".into(), status_view(&object.status));
    }
    Value::Object(view)
}

fn status_view(status: &Value) -> Value {
    let mut status = status.clone();
    if let Some(Value::Object(reactors)) = status.get_mut(crate::controller::status::RECONCILE) {
        for entry in reactors.values_mut() {
            if let Value::Object(entry) = entry {
                for key in VOLATILE_RECONCILE {
                    entry.remove(key);
                }
            }
        }
    }
    status
}

fn item_view(object: &Object) -> Option<Value> {
    let item = Item::from_object(object)?;
    let target = match &item.target {
        ItemTarget::Agents(ids) => json!({"agents": ids}),
        ItemTarget::Labels(labels) => json!({"labels": labels}),
    };
    Some(json!({
        "key": item.key,
        "owner": format!("{}/{}", item.owner.kind, item.owner.name),
        "target": target,
        "value": item.value,
    }))
}
