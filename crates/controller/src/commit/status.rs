//! The host-owned part of an object's status, `status.reconcile.<reactor>`: observed
//! generation, attempts, last error (a reconcile's, or an `on-agent-status` round's), next
//! retry, the component version that ran; and `status.propagation`. Written with
//! compare-and-swap, so it never overwrites a concurrent change; the reactor's own status keys
//! are kept beside it.

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

/// A reconcile entry as stored: with the callback whose failure `lastError` tells, when it is
/// not a reconcile's (`on-agent-status`). A reconcile that succeeds keeps such a failure; the
/// callback's next success clears it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Entry {
    #[serde(flatten)]
    status: ReconcileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    callback: Option<String>,
}

/// How a callback other than a reconcile's failed, as its owner's entry tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackFailure {
    /// Consecutive failures of the callback on this object.
    pub attempts: u32,
    pub message: String,
    pub permanent: bool,
    pub next_retry: Option<String>,
}

/// What `object`'s status records of `reactor`'s reconciles.
pub fn read(object: &Object, reactor: &str) -> Option<ReconcileStatus> {
    entry_in(&object.status, reactor).map(|entry| entry.status)
}

fn entry_in(status: &Value, reactor: &str) -> Option<Entry> {
    let entry = status.get(RECONCILE)?.get(reactor)?;
    serde_json::from_value(entry.clone()).ok()
}

/// A reconcile's `entry` written over `existing`: what it says, except that a failure of
/// another callback stays when the reconcile succeeded (that callback still retries).
fn reconciled(existing: Option<Entry>, entry: &ReconcileStatus) -> Entry {
    match existing {
        Some(old) if old.callback.is_some() && entry.last_error.is_none() => Entry {
            status: ReconcileStatus {
                observed_generation: entry.observed_generation,
                version: entry.version.clone(),
                ..old.status
            },
            callback: old.callback,
        },
        _ => Entry {
            status: entry.clone(),
            callback: None,
        },
    }
}

/// The entry after `callback` (not a reconcile) ended, `None` when it stays as it is. A
/// failure shows, unless the entry shows a reconcile's failure (which is left for the
/// reconcile to clear); a success clears the callback's own failure, and nothing else. The
/// reconcile's observed generation and version are kept.
fn after_callback(
    existing: Option<Entry>,
    callback: &str,
    failure: Option<&CallbackFailure>,
) -> Option<Entry> {
    let existing = existing.unwrap_or_default();
    let kept = ReconcileStatus {
        observed_generation: existing.status.observed_generation,
        version: existing.status.version.clone(),
        ..ReconcileStatus::default()
    };
    match failure {
        Some(_) if existing.status.last_error.is_some() && existing.callback.is_none() => None,
        Some(failure) => Some(Entry {
            status: ReconcileStatus {
                attempts: failure.attempts,
                last_error: Some(failure.message.clone()),
                permanent: failure.permanent,
                next_retry: failure.next_retry.clone(),
                ..kept
            },
            callback: Some(callback.to_owned()),
        }),
        None if existing.callback.as_deref() == Some(callback) => Some(Entry {
            status: kept,
            callback: None,
        }),
        None => None,
    }
}

/// `status` with `reactor`'s entry after `callback` (not a reconcile) ended: failed
/// (`failure`) or succeeded (`None`), by the rules of `after_callback`.
pub fn with_callback_outcome(
    status: &Value,
    reactor: &str,
    callback: &str,
    failure: Option<&CallbackFailure>,
) -> Value {
    match after_callback(entry_in(status, reactor), callback, failure) {
        Some(entry) => put_entry(status, reactor, &entry),
        None => status.clone(),
    }
}

/// `status` with the propagation roll-up `rolled`.
pub fn with_propagation(status: &Value, rolled: &Value) -> Value {
    let mut status = match status {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    status.insert(PROPAGATION.to_owned(), rolled.clone());
    Value::Object(status)
}

/// `status` with a reconcile's `entry` for `reactor`.
fn with_entry(status: &Value, reactor: &str, entry: &ReconcileStatus) -> Value {
    let entry = reconciled(entry_in(status, reactor), entry);
    put_entry(status, reactor, &entry)
}

fn put_entry(status: &Value, reactor: &str, entry: &Entry) -> Value {
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

/// Writes `reactor`'s reconcile entry (a failure of another callback it shows stays if the
/// entry is a success); answers the object's revision after it (`None`: the object is gone).
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

    #[test]
    fn an_agent_status_failure_shows_until_its_next_success_and_never_hides_a_reconciles() {
        let reconciled = ReconcileStatus {
            observed_generation: Some(3),
            version: Some("73d059a5c424".into()),
            ..Default::default()
        };
        let status = with_entry(&json!({}), "policy", &reconciled);
        let failure = CallbackFailure {
            attempts: 2,
            message: "no such rule".into(),
            permanent: false,
            next_retry: Some("2026-11-23T05:00:01.000Z".into()),
        };
        let failed = with_callback_outcome(&status, "policy", "on-agent-status", Some(&failure));
        assert_eq!(
            failed["reconcile"]["policy"],
            json!({"observedGeneration": 3, "attempts": 2, "lastError": "no such rule",
                   "nextRetry": "2026-11-23T05:00:01.000Z", "version": "73d059a5c424",
                   "callback": "on-agent-status"})
        );
        // A reconcile that succeeds meanwhile keeps it: the callback still retries.
        let again = ReconcileStatus {
            observed_generation: Some(4),
            ..reconciled.clone()
        };
        let kept = with_entry(&failed, "policy", &again);
        assert_eq!(kept["reconcile"]["policy"]["lastError"], "no such rule");
        assert_eq!(kept["reconcile"]["policy"]["observedGeneration"], 4);
        // Its next success clears it, and only it.
        let cleared = with_callback_outcome(&kept, "policy", "on-agent-status", None);
        assert_eq!(
            cleared["reconcile"]["policy"],
            json!({"observedGeneration": 4, "attempts": 0, "version": "73d059a5c424"})
        );
        // A reconcile's own failure is not replaced, nor cleared, by on-agent-status.
        let broken = ReconcileStatus {
            attempts: 1,
            last_error: Some("cannot publish".into()),
            ..reconciled
        };
        let broken = with_entry(&cleared, "policy", &broken);
        for outcome in [Some(&failure), None] {
            let after = with_callback_outcome(&broken, "policy", "on-agent-status", outcome);
            assert_eq!(after, broken);
        }
        // A reconcile's failure replaces an on-agent-status one.
        let entry = ReconcileStatus {
            attempts: 1,
            last_error: Some("cannot publish".into()),
            ..Default::default()
        };
        let replaced = with_entry(&failed, "policy", &entry);
        assert_eq!(
            replaced["reconcile"]["policy"]["lastError"],
            "cannot publish"
        );
        assert!(replaced["reconcile"]["policy"].get("callback").is_none());
        let rolled = with_propagation(&replaced, &json!({"updated": 1}));
        assert_eq!(rolled["propagation"], json!({"updated": 1}));
        assert_eq!(rolled["reconcile"], replaced["reconcile"]);
    }
}
