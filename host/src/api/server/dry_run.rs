//! `POST /v1/objects?dryRun=true`: what an apply would do, decided by the store's own write
//! rules against the current objects, with nothing stored.

use crate::object::ApplyRequest;
use crate::store::{Applied, ApplyOutcome, EventType, Store, StoreError, plan_apply};
use std::collections::HashSet;

/// Each object as the apply would leave it (a created one has revision 0), in order. As in
/// the real apply, an object may appear once.
pub async fn plan(
    store: &dyn Store,
    requests: &[ApplyRequest],
) -> Result<Vec<Applied>, StoreError> {
    let mut seen = HashSet::new();
    let mut answers = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let in_document = |e| StoreError::in_document(i + 1, e);
        let key = request.key().to_string();
        if !seen.insert(key.clone()) {
            return Err(in_document(StoreError::Invalid(format!(
                "{key} appears twice in one apply"
            ))));
        }
        let existing = store
            .get(&request.kind, &request.name)
            .await
            .map_err(in_document)?;
        let change = plan_apply(existing.as_ref(), request).map_err(in_document)?;
        let applied = match (change, existing) {
            (Some(change), _) => Applied {
                outcome: if change.event_type == EventType::Created {
                    ApplyOutcome::Created
                } else {
                    ApplyOutcome::Updated
                },
                object: change.object,
            },
            (None, Some(object)) => Applied {
                outcome: ApplyOutcome::Unchanged,
                object,
            },
            (None, None) => {
                return Err(in_document(StoreError::Backend(format!(
                    "nothing planned for the new object {key}"
                ))));
            }
        };
        answers.push(applied);
    }
    Ok(answers)
}
