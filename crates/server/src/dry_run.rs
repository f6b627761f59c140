//! `POST /v1/objects?dryRun=true`: what an apply would do, decided by the store's own write
//! rules against the current objects, with nothing stored.

use reactor_controller::Pending;
use reactor_core::object::ApplyRequest;
use reactor_store::{Applied, Store, StoreError};
use std::sync::Arc;

/// Each object as the apply would leave it (a created one has revision 0), in order: the
/// apply held as a callback's writes are, and never committed.
pub async fn plan(
    store: &Arc<dyn Store>,
    requests: &[ApplyRequest],
) -> Result<Vec<Applied>, StoreError> {
    Pending::new(store.clone(), usize::MAX)
        .apply(requests.to_vec())
        .await
}
