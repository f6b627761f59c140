//! The host-owned part of an object's status, `status.reconcile.<reactor>`: observed
//! generation, attempts, last error, next retry, the component version that ran. Written
//! with compare-and-swap, so it never overwrites a concurrent change; the reactor's own
//! status keys are kept beside it.

use reactor_core::object::{Object, Revision};
pub use reactor_store::update_status;
use reactor_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The key under `status` that the host owns for each reactor's reconciles.
pub const RECONCILE: &str = "reconcile";

/// The key under `status` where the host rolls up propagation to agents.
pub const PROPAGATION: &str = "propagation";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileStatus {
    /// The generation the reactor last handled successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<u64>,
    /// Consecutive failures of the current attempt.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The last error was permanent: no retry until the object changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub permanent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_retry: Option<String>,
    /// The component version that ran this reconcile, as `components` shows it (the first
    /// 12 hex digits of its sha256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// What `object`'s status records of `reactor`'s reconciles.
pub fn read(object: &Object, reactor: &str) -> Option<ReconcileStatus> {
    let entry = object.status.get(RECONCILE)?.get(reactor)?;
    serde_json::from_value(entry.clone()).ok()
}

fn with_entry(status: &Value, reactor: &str, entry: &ReconcileStatus) -> Value {
    let mut status = match status {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let reconcile = status
        .entry(RECONCILE)
        .or_insert_with(|| Value::Object(Map::new()));
    if !reconcile.is_object() {
        *reconcile = Value::Object(Map::new());
    }
    if let Value::Object(map) = reconcile {
        map.insert(
            reactor.to_owned(),
            serde_json::to_value(entry).unwrap_or(Value::Null),
        );
    }
    Value::Object(status)
}

/// The keys under `status` that the host owns: reconcile entries and the propagation roll-up.
const HOST_KEYS: [&str; 2] = [RECONCILE, PROPAGATION];

/// The status a reactor sets, with the host-owned part of `current` kept.
pub fn merge_reactor_status(current: &Value, set: Value) -> Value {
    let kept: Vec<(&str, &Value)> = HOST_KEYS
        .iter()
        .filter_map(|key| Some((*key, current.get(*key)?)))
        .collect();
    if kept.is_empty() {
        return set;
    }
    let mut map = match set {
        Value::Object(map) => map,
        other => Map::from_iter([("value".to_owned(), other)]),
    };
    for (key, value) in kept {
        map.insert(key.to_owned(), value.clone());
    }
    Value::Object(map)
}

/// Writes `reactor`'s reconcile entry; answers the object's revision after it (`None`: the
/// object is gone).
pub async fn write(
    store: &dyn Store,
    kind: &str,
    name: &str,
    reactor: &str,
    entry: &ReconcileStatus,
) -> Result<Option<Revision>, StoreError> {
    update_status(store, kind, name, |status| {
        with_entry(status, reactor, entry)
    })
    .await
    .map(|written| written.map(|o| o.meta.revision))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_host_part_survives_a_reactor_status_write() {
        let entry = ReconcileStatus {
            observed_generation: Some(2),
            ..Default::default()
        };
        let current = with_entry(&json!({"ruleCount": 1}), "policy", &entry);
        assert_eq!(current["ruleCount"], 1);
        assert_eq!(current["reconcile"]["policy"]["observedGeneration"], 2);
        let merged = merge_reactor_status(&current, json!({"ruleCount": 3}));
        assert_eq!(
            merged,
            json!({"ruleCount": 3, "reconcile": {"policy": {"observedGeneration": 2, "attempts": 0}}})
        );
        let mut object: Object =
            serde_json::from_value(json!({"kind": "A", "name": "a"})).expect("object");
        object.status = merged;
        assert_eq!(read(&object, "policy"), Some(entry));
        assert_eq!(read(&object, "other"), None);
    }
}
