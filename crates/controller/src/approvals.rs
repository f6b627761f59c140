//! Approvals of components' wider declarations, recorded in the store (one
//! `ComponentApproval` object per component) and followed into the runtime, so that they
//! survive a restart and every replica sharing the store loads the approved version.

use reactor_core::component::{Approval, Permissions};
use reactor_core::object::{ApplyRequest, Object};
use reactor_runtime::{Runtime, version_of};
use reactor_store::{EventType, Follower, Listing, Store, StoreError, WatchEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// The host's own kind of the approval records.
pub const APPROVAL_KIND: &str = "ComponentApproval";

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

/// The record's object name: the component's name when it is a valid object name, else
/// `approval-` and a hash of it (component names may hold capitals and `_`).
fn record_name(component: &str) -> String {
    if reactor_core::object::validate_name(component).is_ok() {
        return component.to_owned();
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(component.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("approval-{hex}")
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
    let invalid = |message: String| ApprovalError::Invalid {
        name: record_name(component),
        message,
    };
    let request = ApplyRequest {
        kind: APPROVAL_KIND.to_owned(),
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
        .map_err(|source| ApprovalError::Store {
            component: component.to_owned(),
            source,
        })?;
    Ok(())
}

/// The component and approval a record holds.
fn parse(object: &Object) -> Result<(String, Approval), ApprovalError> {
    let invalid = |message: String| ApprovalError::Invalid {
        name: object.name.clone(),
        message,
    };
    let spec: RecordSpec =
        serde_json::from_value(object.spec.clone()).map_err(|e| invalid(e.to_string()))?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if spec.sha256.len() != 64 || !spec.sha256.chars().all(hex) {
        return Err(invalid(format!("{:?} is not a sha256", spec.sha256)));
    }
    let approval = Approval {
        sha256: spec.sha256,
        permissions: spec.permissions,
    };
    Ok((spec.component, approval))
}

/// The records of a listing, by component; bad ones are logged and left out.
fn parse_all(items: &[Object]) -> BTreeMap<String, Approval> {
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
    /// Every record as listed: the runtime's approvals become these.
    All(BTreeMap<String, Approval>),
    Set(String, Approval),
    Removed(String),
}

/// The approval records followed into a runtime, as long as this is held.
pub struct Approvals {
    changes: UnboundedSender<Change>,
}

impl Approvals {
    /// Seeds `runtime` with every approval recorded in `store` (so call it before the
    /// components are loaded), then follows the records: one recorded by another server
    /// loads the approved version here too.
    pub async fn follow(
        store: Arc<dyn Store>,
        runtime: Runtime,
    ) -> Result<Arc<Approvals>, ApprovalError> {
        match store.list(APPROVAL_KIND, &Default::default()).await {
            Ok(listing) => apply(&runtime, Change::All(parse_all(&listing.items))).await,
            // A store that cannot list them now must not keep the server from starting:
            // versions wider than the one serving stay held meanwhile.
            Err(error @ (StoreError::Corrupt { .. } | StoreError::Damaged { .. })) => {
                tracing::error!(%error, "cannot read the approval records at start; following them until they can be read")
            }
            Err(source) => {
                return Err(ApprovalError::Store {
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
        let approvals = Arc::new(Approvals { changes });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&approvals),
            store,
            APPROVAL_KIND,
            "approval records",
        ));
        Ok(approvals)
    }
}

async fn apply(runtime: &Runtime, change: Change) {
    match change {
        Change::All(records) => {
            for name in runtime.approvals().keys() {
                if !records.contains_key(name) {
                    runtime.forget_approval(name);
                }
            }
            for (name, approval) in records {
                runtime.approve(&name, approval).await;
            }
        }
        Change::Set(name, approval) => runtime.approve(&name, approval).await,
        Change::Removed(name) => {
            runtime.forget_approval(&name);
        }
    }
}

impl Follower for Approvals {
    fn listed(&self, listing: Listing) {
        let _ = self.changes.send(Change::All(parse_all(&listing.items)));
    }

    fn changed(&self, event: WatchEvent) {
        let Some(object) = &event.object else { return };
        let (component, approval) = match parse(object) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("ignored: {e}");
                return;
            }
        };
        let change = match event.event_type {
            EventType::Created | EventType::Updated => Change::Set(component, approval),
            EventType::Deleted => Change::Removed(component),
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
            "name": record_name("My_Component"),
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
