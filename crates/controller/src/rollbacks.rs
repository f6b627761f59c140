//! Versions rolled back, recorded in the store (one `ComponentRollback` object per component)
//! and followed into the runtime, so that no restart and no other replica serves them again.

use reactor_core::object::{ApplyRequest, Object};
use reactor_runtime::{Rejection, Runtime, version_of};
use reactor_store::{EventType, Follower, Listing, Store, StoreError, WatchEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// The host's own kind of the rollback records.
pub const ROLLBACK_KIND: &str = "ComponentRollback";

/// Why a rollback record could not be written, cleared or read.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    #[error("the store refused the rollback record of {component}: {source}")]
    Store {
        component: String,
        source: StoreError,
    },
    #[error("rollback record {name}: {message}")]
    Invalid { name: String, message: String },
}

/// The spec of a rollback record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RecordSpec {
    /// The component (its object name may be a hash of it: see [`record_name`]).
    component: String,
    /// sha256 of the version rolled back.
    sha256: String,
    /// The same, as `components` shows it.
    version: String,
    reason: String,
    /// sha256 of the version it was rolled back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restore: Option<String>,
}

/// Whether `text` is a sha256 as the runtime writes them.
fn is_sha256(text: &str) -> bool {
    text.len() == 64
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// The record's object name: the component's name when it is a valid object name, else
/// `rollback-` and a hash of it (component names may hold capitals and `_`).
fn record_name(component: &str) -> String {
    if reactor_core::object::validate_name(component).is_ok() {
        return component.to_owned();
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(component.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("rollback-{hex}")
}

/// Records that `component`'s version `rejection.sha256` was rolled back.
pub async fn record_rollback(
    store: &dyn Store,
    component: &str,
    rejection: &Rejection,
) -> Result<(), RollbackError> {
    let spec = RecordSpec {
        component: component.to_owned(),
        sha256: rejection.sha256.clone(),
        version: version_of(&rejection.sha256),
        reason: rejection.reason.clone(),
        restore: rejection.restore.clone(),
    };
    let invalid = |message: String| RollbackError::Invalid {
        name: record_name(component),
        message,
    };
    let request = ApplyRequest {
        kind: ROLLBACK_KIND.to_owned(),
        name: record_name(component),
        labels: BTreeMap::new(),
        annotations: Default::default(),
        spec: serde_json::to_value(&spec).map_err(|e| invalid(e.to_string()))?,
        expected_revision: None,
        owner: None,
    };
    store
        .apply(vec![request])
        .await
        .map_err(|source| RollbackError::Store {
            component: component.to_owned(),
            source,
        })?;
    Ok(())
}

/// Removes the rollback record of `component`; false if there was none.
pub async fn clear_rollback(store: &dyn Store, component: &str) -> Result<bool, RollbackError> {
    let failed = |source| RollbackError::Store {
        component: component.to_owned(),
        source,
    };
    match store
        .delete(ROLLBACK_KIND, &record_name(component), None)
        .await
    {
        Ok(_) => Ok(true),
        Err(StoreError::NotFound { .. }) => Ok(false),
        Err(e) => Err(failed(e)),
    }
}

/// The component and rejection a record holds.
fn parse(object: &Object) -> Result<(String, Rejection), RollbackError> {
    let invalid = |message: String| RollbackError::Invalid {
        name: object.name.clone(),
        message,
    };
    let spec: RecordSpec =
        serde_json::from_value(object.spec.clone()).map_err(|e| invalid(e.to_string()))?;
    let shas = std::iter::once(&spec.sha256).chain(spec.restore.as_ref());
    if let Some(bad) = shas.into_iter().find(|s| !is_sha256(s)) {
        return Err(invalid(format!("{bad:?} is not a sha256")));
    }
    let rejection = Rejection {
        sha256: spec.sha256,
        reason: spec.reason,
        restore: spec.restore,
    };
    Ok((spec.component, rejection))
}

/// The records of a listing, by component; bad ones are logged and left out.
fn parse_all(items: &[Object]) -> BTreeMap<String, Rejection> {
    items
        .iter()
        .filter_map(|object| match parse(object) {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                tracing::warn!("ignored: {e}");
                None
            }
        })
        .collect()
}

/// What the follower hands the task that applies it to the runtime, in store order.
enum Change {
    /// Every record as listed: the runtime's rejections become these.
    All(BTreeMap<String, Rejection>),
    Set(String, Rejection),
    Cleared(String),
}

/// The rollback records followed into a runtime, as long as this is held.
pub struct Rollbacks {
    changes: UnboundedSender<Change>,
}

impl Rollbacks {
    /// Seeds `runtime` with every rollback recorded in `store` (so call it before the
    /// components are loaded), then follows the records: one recorded by another server is
    /// rejected here too, and one removed is cleared.
    pub async fn follow(
        store: Arc<dyn Store>,
        runtime: Runtime,
    ) -> Result<Arc<Rollbacks>, RollbackError> {
        match store.list(ROLLBACK_KIND, &Default::default()).await {
            Ok(listing) => apply(&runtime, Change::All(parse_all(&listing.items))).await,
            // A store that cannot list them now (damaged, unreachable) must not keep the
            // server from starting: the follow below lists them again until it can.
            Err(error @ (StoreError::Corrupt { .. } | StoreError::Damaged { .. })) => {
                tracing::error!(%error, "cannot read the rollback records at start; following them until they can be read")
            }
            Err(source) => {
                return Err(RollbackError::Store {
                    component: "*".into(),
                    source,
                });
            }
        }
        let (changes, mut pending) = unbounded_channel();
        tokio::spawn(async move {
            while let Some(change) = pending.recv().await {
                apply(&runtime, change).await;
            }
        });
        let rollbacks = Arc::new(Rollbacks { changes });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&rollbacks),
            store,
            ROLLBACK_KIND,
            "rollback records",
        ));
        Ok(rollbacks)
    }
}

async fn apply(runtime: &Runtime, change: Change) {
    match change {
        Change::All(records) => {
            for name in runtime.rejections().keys() {
                if !records.contains_key(name) {
                    runtime.clear_rejection(name).await;
                }
            }
            let known = runtime.rejections();
            for (name, rejection) in records {
                if known.get(&name) != Some(&rejection) {
                    runtime.reject(&name, rejection).await;
                }
            }
        }
        Change::Set(name, rejection) => {
            if runtime.rejections().get(&name) != Some(&rejection) {
                runtime.reject(&name, rejection).await;
            }
        }
        Change::Cleared(name) => {
            runtime.clear_rejection(&name).await;
        }
    }
}

impl Follower for Rollbacks {
    fn listed(&self, listing: Listing) {
        let _ = self.changes.send(Change::All(parse_all(&listing.items)));
    }

    fn changed(&self, event: WatchEvent) {
        let Some(object) = &event.object else { return };
        let (component, rejection) = match parse(object) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("ignored: {e}");
                return;
            }
        };
        let change = match event.event_type {
            EventType::Created | EventType::Updated => Change::Set(component, rejection),
            EventType::Deleted => Change::Cleared(component),
            EventType::Bookmark => return,
        };
        let _ = self.changes.send(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_host_s_own() {
        assert!(reactor_core::object::is_reserved(ROLLBACK_KIND));
    }

    #[test]
    fn any_component_name_makes_a_record_name() {
        assert_eq!(record_name("versioned"), "versioned");
        let hashed = record_name("My_Component");
        assert!(hashed.starts_with("rollback-"), "{hashed}");
        assert!(
            reactor_core::object::validate_name(&hashed).is_ok(),
            "{hashed}"
        );
        assert_ne!(hashed, record_name("my_Component"));
    }

    #[test]
    fn a_record_reads_back_and_a_bad_sha256_is_refused() {
        let rejection = Rejection {
            sha256: "a".repeat(64),
            reason: "the canary failed".into(),
            restore: Some("b".repeat(64)),
        };
        let spec = RecordSpec {
            component: "My_Component".into(),
            sha256: rejection.sha256.clone(),
            version: version_of(&rejection.sha256),
            reason: rejection.reason.clone(),
            restore: rejection.restore.clone(),
        };
        let mut object: Object = serde_json::from_value(serde_json::json!({
            "kind": ROLLBACK_KIND,
            "name": record_name("My_Component"),
            "spec": spec,
        }))
        .expect("an object");
        let (component, read) = parse(&object).expect("a record");
        assert_eq!((component.as_str(), read), ("My_Component", rejection));
        object.spec["restore"] = "../../etc/passwd".into();
        let err = parse(&object).expect_err("not a sha256").to_string();
        assert!(err.contains("is not a sha256"), "{err}");
    }
}
