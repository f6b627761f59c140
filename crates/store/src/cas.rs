//! Compare-and-swap: read, decide, write with the revision read, and again on a conflict.

use super::{Store, StoreError};
use reactor_core::object::Object;
use serde_json::Value;

/// How many times a read-modify-write is tried before it gives up.
pub const CAS_ATTEMPTS: usize = 16;

impl StoreError {
    /// Whether the write lost a race (the object changed, or went, since it was read).
    pub fn is_conflict(&self) -> bool {
        matches!(
            self.root(),
            StoreError::Conflict { .. } | StoreError::ConflictMissing { .. }
        )
    }
}

/// Runs `attempt` (one read-modify-write that writes with the revision it read) until it
/// does not lose a race, at most [`CAS_ATTEMPTS`] times; `what` names the object for the
/// error when it kept changing.
pub async fn retry_on_conflict<T, Fut>(
    what: impl FnOnce() -> String,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, StoreError>
where
    Fut: Future<Output = Result<T, StoreError>>,
{
    for _ in 0..CAS_ATTEMPTS {
        match attempt().await {
            Err(e) if e.is_conflict() => continue,
            other => return other,
        }
    }
    Err(StoreError::Backend(format!(
        "{} kept changing: gave up after {CAS_ATTEMPTS} attempts",
        what()
    )))
}

/// Rewrites `kind/name`'s status with `update` applied to its current value, retrying on
/// conflicts. Does nothing if the object is gone or the status would not change.
pub async fn update_status(
    store: &dyn Store,
    kind: &str,
    name: &str,
    update: impl Fn(&Value) -> Value,
) -> Result<Option<Object>, StoreError> {
    let update = &update;
    retry_on_conflict(
        || format!("status of {kind}/{name}"),
        || async move {
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
                Ok(object) => Ok(Some(object)),
                Err(StoreError::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        },
    )
    .await
}
