//! Approvals of components' wider declarations, recorded in the store (one
//! `ComponentApproval` object per component) and followed into the runtime, so that they
//! survive a restart and every replica sharing the store loads the approved version.

use crate::rollout::records::{Followed, RecordKind};
use async_trait::async_trait;
use reactor_core::component::{Approval, Permissions};
use reactor_core::component::{is_sha256, record_name};
use reactor_core::object::Object;
use reactor_runtime::{Runtime, version_of};
use reactor_store::write_record;
use reactor_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The host's own kind of the approval records.
pub const APPROVAL_KIND: &str = "ComponentApproval";

/// What a record's name starts with when the component's name is not an object name.
const RECORD_PREFIX: &str = "approval";

/// Why an approval record could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("the store refused the approval record of {component}: {source}")]
    Store {
        component: String,
        source: StoreError,
    },
    #[error("approval record {name}: {message}")]
    Invalid { name: String, message: String },
}

/// The spec of an approval record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RecordSpec {
    /// The component (its object name may be a hash of it: see [`record_name`]).
    component: String,
    /// sha256 of the version approved.
    sha256: String,
    /// The same, as `components` shows it.
    version: String,
    /// Its declaration; absent: undeclared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    permissions: Option<Permissions>,
    /// Who approved it.
    approved_by: String,
}

/// Records that `by` approved `approval` for `component`.
pub async fn record_approval(
    store: &dyn Store,
    component: &str,
    approval: &Approval,
    by: &str,
) -> Result<(), ApprovalError> {
    let spec = RecordSpec {
        component: component.to_owned(),
        sha256: approval.sha256.clone(),
        version: version_of(&approval.sha256),
        permissions: approval.permissions.clone(),
        approved_by: by.to_owned(),
    };
    let name = record_name(RECORD_PREFIX, component);
    let spec = serde_json::to_value(&spec).map_err(|e| ApprovalError::Invalid {
        name: name.clone(),
        message: e.to_string(),
    })?;
    write_record(store, APPROVAL_KIND, name, spec)
        .await
        .map_err(|source| ApprovalError::Store {
            component: component.to_owned(),
            source,
        })
}

/// The component and approval a record holds.
fn parse(object: &Object) -> Result<(String, Approval), ApprovalError> {
    let invalid = |message: String| ApprovalError::Invalid {
        name: object.name.clone(),
        message,
    };
    let spec: RecordSpec =
        serde_json::from_value(object.spec.clone()).map_err(|e| invalid(e.to_string()))?;
    if !is_sha256(&spec.sha256) {
        return Err(invalid(format!("{:?} is not a sha256", spec.sha256)));
    }
    let approval = Approval {
        sha256: spec.sha256,
        permissions: spec.permissions,
    };
    Ok((spec.component, approval))
}

/// The approval records, as the store keeps them and the runtime takes them.
pub struct ApprovalRecords;

#[async_trait]
impl RecordKind for ApprovalRecords {
    type Value = Approval;
    const KIND: &'static str = APPROVAL_KIND;
    const WHAT: &'static str = "approval records";

    fn parse(object: &Object) -> Result<(String, Approval), String> {
        parse(object).map_err(|e| e.to_string())
    }

    async fn all(runtime: &Runtime, records: BTreeMap<String, Approval>) {
        for name in runtime.approvals().keys() {
            if !records.contains_key(name) {
                runtime.forget_approval(name);
            }
        }
        for (name, approval) in records {
            runtime.approve(&name, approval).await;
        }
    }

    async fn set(runtime: &Runtime, component: String, approval: Approval) {
        runtime.approve(&component, approval).await;
    }

    async fn removed(runtime: &Runtime, component: String) {
        runtime.forget_approval(&component);
    }
}

/// The approval records followed into a runtime: `follow` seeds the runtime with them, then
/// follows them, so one recorded by another server loads the approved version here too.
pub type Approvals = Followed<ApprovalRecords>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_host_s_own() {
        assert!(reactor_core::object::is_reserved(APPROVAL_KIND));
    }

    #[test]
    fn a_record_reads_back_and_a_bad_sha256_is_refused() {
        let approval = Approval {
            sha256: "a".repeat(64),
            permissions: Some(Permissions {
                publishes: true,
                ..Permissions::default()
            }),
        };
        let spec = RecordSpec {
            component: "My_Component".into(),
            sha256: approval.sha256.clone(),
            version: version_of(&approval.sha256),
            permissions: approval.permissions.clone(),
            approved_by: "admin".into(),
        };
        let mut object: Object = serde_json::from_value(serde_json::json!({
            "kind": APPROVAL_KIND,
            "name": record_name(RECORD_PREFIX, "My_Component"),
            "spec": spec,
        }))
        .expect("an object");
        assert!(object.name.starts_with("approval-"), "{}", object.name);
        let (component, read) = parse(&object).expect("a record");
        assert_eq!((component.as_str(), read), ("My_Component", approval));
        object.spec["sha256"] = "../x".into();
        let err = parse(&object).expect_err("not a sha256").to_string();
        assert!(err.contains("is not a sha256"), "{err}");
    }
}
