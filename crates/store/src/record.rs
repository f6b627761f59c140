//! Writing one of the host's records about a component: an object of a host kind, replaced whole.

use crate::{Store, StoreError};
use reactor_core::object::ApplyRequest;
use std::collections::BTreeMap;

/// Writes the record `name` of the host's `kind` with `spec`, replacing the one there.
pub async fn write_record(
    store: &dyn Store,
    kind: &str,
    name: String,
    spec: serde_json::Value,
) -> Result<(), StoreError> {
    let request = ApplyRequest {
        kind: kind.to_owned(),
        name,
        labels: BTreeMap::new(),
        annotations: Default::default(),
        spec,
        expected_revision: None,
        owner: None,
    };
    store.apply(vec![request]).await.map(|_| ())
}
