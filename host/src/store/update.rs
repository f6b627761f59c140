//! Read-modify-write of an object's status with compare-and-swap, retried on conflicts.

use super::{Store, StoreError};
use crate::object::Object;
use serde_json::Value;

const CAS_ATTEMPTS: usize = 16;

/// Rewrites `kind/name`'s status with `update` applied to its current value, retrying on
/// conflicts. Does nothing if the object is gone or the status would not change.
pub async fn update_status(
    store: &dyn Store,
    kind: &str,
    name: &str,
    update: impl Fn(&Value) -> Value,
) -> Result<Option<Object>, StoreError> {
    for _ in 0..CAS_ATTEMPTS {
        let Some(current) = store.get(kind, name).await? else {
            return Ok(None);
        };
        let next = update(&current.status);
        if next == current.status {
            return Ok(Some(current));
        }
        match store
            .set_status(kind, name, next, Some(current.meta.revision))
            .await
        {
            Ok(object) => return Ok(Some(object)),
            Err(StoreError::Conflict { .. }) => continue,
            Err(StoreError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Backend(format!(
        "status of {kind}/{name} kept changing: gave up after {CAS_ATTEMPTS} attempts"
    )))
}
