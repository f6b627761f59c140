//! A status written through the API: the client's keys replace the status, but the keys the
//! host owns (`status.reconcile`, `status.propagation`) are kept as the host wrote them.

use reactor_controller::status::{PROPAGATION, RECONCILE, merge_reactor_status};
use reactor_core::object::{Object, Revision};
use reactor_store::{Store, StoreError, Write, retry_on_conflict};
use serde_json::Value;

/// Writes `status` on `kind/name` with the host-owned keys of the current status kept (a
/// client's own values for them are ignored). With `revision`, only if the object is at
/// it (a conflict otherwise); without, retried on a concurrent change.
pub async fn write(
    store: &dyn Store,
    kind: &str,
    name: &str,
    status: Value,
    revision: Option<Revision>,
) -> Result<Object, StoreError> {
    write_managed(store, kind, name, status, revision, &|_, _| None).await
}

/// [`write()`], and in the same transaction the object's `managedFields` as `managed` makes
/// them of the object read and the status to be written (`None`: left as they are).
pub async fn write_managed(
    store: &dyn Store,
    kind: &str,
    name: &str,
    mut status: Value,
    revision: Option<Revision>,
    managed: &(dyn Fn(&Object, &Value) -> Option<Value> + Sync),
) -> Result<Object, StoreError> {
    if let Value::Object(map) = &mut status {
        map.remove(RECONCILE);
        map.remove(PROPAGATION);
    }
    let status = &status;
    let attempt = || async move {
        let current = store
            .get(kind, name)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                kind: kind.to_owned(),
                name: name.to_owned(),
            })?;
        let merged = merge_reactor_status(&current.status, status.clone());
        let expected = revision.unwrap_or(current.meta.revision);
        let Some(managed_fields) = managed(&current, &merged) else {
            return store.set_status(kind, name, merged, Some(expected)).await;
        };
        let written = store
            .commit(vec![
                Write::SetStatus {
                    kind: kind.to_owned(),
                    name: name.to_owned(),
                    status: merged,
                    expected: Some(expected),
                },
                Write::SetManagedFields {
                    kind: kind.to_owned(),
                    name: name.to_owned(),
                    managed_fields,
                },
            ])
            .await?;
        Ok(written
            .into_iter()
            .next()
            .and_then(|w| w.object)
            .map(std::sync::Arc::unwrap_or_clone)
            .unwrap_or(current))
    };
    match revision {
        Some(_) => attempt().await,
        None => retry_on_conflict(|| format!("status of {kind}/{name}"), attempt).await,
    }
}
