//! Versions rolled back, recorded in the store (one `ComponentRollback` object per component)
//! and followed into the runtime, so that no restart and no other replica serves them again.

use crate::rollout::records::{Followed, RecordKind};
use async_trait::async_trait;
use reactor_core::component::{is_sha256, record_name};
use reactor_core::object::Object;
use reactor_runtime::{Rejection, Runtime, version_of};
use reactor_store::write_record;
use reactor_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The host's own kind of the rollback records.
pub const ROLLBACK_KIND: &str = "ComponentRollback";

/// What a record's name starts with when the component's name is not an object name.
const RECORD_PREFIX: &str = "rollback";

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
    let name = record_name(RECORD_PREFIX, component);
    let spec = serde_json::to_value(&spec).map_err(|e| RollbackError::Invalid {
        name: name.clone(),
        message: e.to_string(),
    })?;
    write_record(store, ROLLBACK_KIND, name, spec)
        .await
        .map_err(|source| RollbackError::Store {
            component: component.to_owned(),
            source,
        })
}

/// Removes the rollback record of `component`; false if there was none.
pub async fn clear_rollback(store: &dyn Store, component: &str) -> Result<bool, RollbackError> {
    let failed = |source| RollbackError::Store {
        component: component.to_owned(),
        source,
    };
    match store
        .delete(ROLLBACK_KIND, &record_name(RECORD_PREFIX, component), None)
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

/// The rollback records, as the store keeps them and the runtime takes them.
pub struct RollbackRecords;

#[async_trait]
impl RecordKind for RollbackRecords {
    type Value = Rejection;
    const KIND: &'static str = ROLLBACK_KIND;
    const WHAT: &'static str = "rollback records";

    fn parse(object: &Object) -> Result<(String, Rejection), String> {
        parse(object).map_err(|e| e.to_string())
    }

    async fn all(runtime: &Runtime, records: BTreeMap<String, Rejection>) {
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

    async fn set(runtime: &Runtime, component: String, rejection: Rejection) {
        if runtime.rejections().get(&component) != Some(&rejection) {
            runtime.reject(&component, rejection).await;
        }
    }

    async fn removed(runtime: &Runtime, component: String) {
        runtime.clear_rejection(&component).await;
    }
}

/// The rollback records followed into a runtime: `follow` seeds the runtime with them, then
/// follows them, so one recorded by another server is rejected here too, and one removed is
/// cleared.
pub type Rollbacks = Followed<RollbackRecords>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_host_s_own() {
        assert!(reactor_core::object::is_reserved(ROLLBACK_KIND));
    }

    #[test]
    fn any_component_name_makes_a_record_name() {
        assert_eq!(record_name(RECORD_PREFIX, "versioned"), "versioned");
        let hashed = record_name(RECORD_PREFIX, "My_Component");
        assert!(hashed.starts_with("rollback-"), "{hashed}");
        assert!(
            reactor_core::object::validate_name(&hashed).is_ok(),
            "{hashed}"
        );
        assert_ne!(hashed, record_name(RECORD_PREFIX, "my_Component"));
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
            "name": record_name(RECORD_PREFIX, "My_Component"),
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
