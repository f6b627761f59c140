//! What a run's result does: success records the handled state and the reconcile status,
//! failures back off (or stop, if permanent), deletes withdraw items and release finalizers.

use super::attachment::Attachment;
use super::decide::Decision;
use super::finalizers;
use super::reactor::Action;
use super::status::{self, ReconcileStatus};
use crate::object::{Object, ObjectKey};

/// The callback succeeded.
pub async fn succeeded(
    run: &Attachment,
    key: &ObjectKey,
    decision: &Decision,
    current: Option<Object>,
    action: Action,
) {
    let failures = run.queue.failures(key);
    run.queue.forget(key);
    super::event_hooks::succeeded(&run.context, &run.info.name, key, failures);
    if matches!(decision, Decision::Delete { .. } | Decision::Release) {
        deleted(run, key, decision, current).await;
        return;
    }
    let Some(object) = current else { return };
    let entry = ReconcileStatus {
        observed_generation: Some(object.meta.generation),
        ..ReconcileStatus::default()
    };
    run.keys.handled(key, object);
    write_status(run, key, &entry).await;
    if let Action::RequeueAfter(delay) = action {
        run.keys.force(key);
        run.queue.add_after(key.clone(), delay);
    }
}

/// The object's delete was handled: its items are withdrawn and the finalizer released.
async fn deleted(run: &Attachment, key: &ObjectKey, decision: &Decision, current: Option<Object>) {
    let uid = match decision {
        Decision::Delete { last } => Some(last.meta.uid.clone()),
        _ => None,
    };
    run.keys.delete_handled(key, uid);
    // The owner is going: so are the items it published.
    if let Err(e) =
        crate::nimbus::unpublish_all(run.context.store.as_ref(), key.kind(), key.name()).await
    {
        retry(
            run,
            key,
            &format!("cannot withdraw the published items: {e}"),
        )
        .await;
        return;
    }
    if let Some(object) = &current
        && run.info.handles_delete
        && let Err(e) = finalizers::remove(run.context.store.as_ref(), object, &run.info.name).await
    {
        retry(run, key, &format!("cannot remove the finalizer: {e}")).await;
    }
}

/// The callback failed and may succeed later: back off, and say so in the status.
pub async fn retry(run: &Attachment, key: &ObjectKey, message: &str) {
    let delay = run.queue.add_rate_limited(key.clone());
    let attempts = run.queue.failures(key);
    let next = std::time::SystemTime::now() + delay;
    let entry = ReconcileStatus {
        observed_generation: run.keys.handled_generation(key),
        attempts,
        last_error: Some(message.to_owned()),
        permanent: false,
        next_retry: Some(humantime::format_rfc3339_millis(next).to_string()),
    };
    tracing::debug!(reactor = %run.info.name, object = %key, attempts, ?delay, error = message, "retrying");
    super::event_hooks::retrying(&run.context, &run.info.name, key, message);
    write_status(run, key, &entry).await;
}

/// The callback failed for good: no retry until the object changes.
pub async fn permanent(run: &Attachment, key: &ObjectKey, handled: Option<u64>, message: String) {
    run.queue.forget(key);
    super::event_hooks::permanent(&run.context, &run.info.name, key, &message);
    let entry = ReconcileStatus {
        observed_generation: handled,
        attempts: 1,
        last_error: Some(message),
        permanent: true,
        next_retry: None,
    };
    write_status(run, key, &entry).await;
}

async fn write_status(run: &Attachment, key: &ObjectKey, entry: &ReconcileStatus) {
    let store = run.context.store.as_ref();
    if let Err(e) = status::write(store, key.kind(), key.name(), &run.info.name, entry).await {
        tracing::warn!(reactor = %run.info.name, object = %key, error = %e, "cannot write the reconcile status");
    }
}
