//! What a run's result does: success commits the callback's writes with the reconcile status,
//! failures drop them and back off (or stop, if permanent), deletes withdraw items and release
//! finalizers.

use crate::commit::failure_text::FailureText;
use crate::commit::status::{self, ReconcileStatus};
use crate::controller::parts::ControllerParts;
use crate::reactor::Action;
use crate::run::decide::Decision;
use crate::run::finalizers;
use crate::run::pending::Pending;
use crate::run::runner::{self, Callback, NotCommitted, Ran};
use reactor_core::object::{Object, ObjectKey};
use reactor_nimbus::{ITEM_KIND, REPORT_KIND, owner_selector};
use reactor_store::{Store, StoreError, Write};
use std::sync::Arc;

/// A callback that succeeded: what it decided, what it asked for next, and the version
/// that ran it.
pub struct Succeeded<'a> {
    pub decision: &'a Decision,
    pub action: Action,
    pub version: Option<String>,
}

/// The callback succeeded: its writes, the reconcile status (with the version that ran it)
/// and the finalizer change commit together.
pub async fn succeeded(
    controller: &ControllerParts,
    key: &ObjectKey,
    ran: Succeeded<'_>,
    current: Option<Arc<Object>>,
    pending: &Pending,
) -> Ran {
    let Succeeded {
        decision,
        action,
        version,
    } = ran;
    if matches!(decision, Decision::Delete { .. } | Decision::Release) {
        return deleted(controller, key, decision, current, pending).await;
    }
    let Some(object) = current else {
        return Ran::Done;
    };
    let entry = ReconcileStatus {
        observed_generation: Some(object.meta.generation),
        version,
        ..ReconcileStatus::default()
    };
    if let Err(e) = status::write(
        pending,
        key.kind(),
        key.name(),
        &controller.info.name,
        &entry,
    )
    .await
    {
        retry(
            controller,
            key,
            &format!("cannot write the reconcile status: {e}"),
        )
        .await;
        return Ran::Done;
    }
    if let Err(ran) = commit_writes(controller, key, pending).await {
        return ran;
    }
    landed(controller, key);
    controller.keys.handled(key, object);
    if let Action::RequeueAfter(delay) = action {
        controller.keys.force(key);
        controller.queue.add_after(key.clone(), delay);
    }
    Ran::Done
}

/// The object's delete was handled: its items are withdrawn and the finalizer released, with
/// whatever `on-delete` wrote, in one commit.
async fn deleted(
    controller: &ControllerParts,
    key: &ObjectKey,
    decision: &Decision,
    current: Option<Arc<Object>>,
    pending: &Pending,
) -> Ran {
    let uid = match decision {
        Decision::Delete { last } => Some(last.meta.uid.clone()),
        _ => None,
    };
    // The owner is going: so are the items it published.
    if let Err(e) = withdraw_all(controller, key, current.as_deref(), pending).await {
        if e.is_conflict() || matches!(e.root(), StoreError::NotFound { .. }) {
            return Ran::Conflict(e.to_string());
        }
        let message = format!("cannot withdraw the published items: {e}");
        retry(controller, key, &message).await;
        return Ran::Done;
    }
    if let Some(object) = &current
        && controller.info.handles_delete
        && let Err(e) = finalizers::remove(pending, object, &controller.info.name).await
    {
        retry(
            controller,
            key,
            &format!("cannot remove the finalizer: {e}"),
        )
        .await;
        return Ran::Done;
    }
    if let Err(ran) = commit_writes(controller, key, pending).await {
        return ran;
    }
    landed(controller, key);
    controller.keys.delete_handled(key, uid);
    Ran::Done
}

/// Withdraws the items `key` published and the agents' reports on them. Those the run's
/// transaction has no room for go first, in transactions of at most the callback limit
/// (each lands only if the object is still as the run saw it: `current`); the rest, with
/// those the callback wrote, are withdrawn in the run's transaction.
async fn withdraw_all(
    controller: &ControllerParts,
    key: &ObjectKey,
    current: Option<&Object>,
    pending: &Pending,
) -> Result<(), StoreError> {
    let selector = owner_selector(key.kind(), key.name());
    let mut published = Vec::new();
    for kind in [ITEM_KIND, REPORT_KIND] {
        // As the run reads them: with what the callback wrote.
        published.extend(pending.list(kind, &selector).await?.items);
    }
    let beyond = published.len().saturating_sub(pending.room());
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for object in published {
        // What the callback wrote can only go with the rest of its writes.
        match first.len() < beyond && pending.staged(&object.key()).is_none() {
            true => first.push(object),
            false => rest.push(object),
        }
    }
    let seen = Write::Check {
        kind: key.kind().to_owned(),
        name: key.name().to_owned(),
        expected: current.map(|o| o.meta.revision),
    };
    let store = controller.context.store.as_ref();
    for batch in first.chunks(controller.options.max_writes.max(1)) {
        let deletes = batch.iter().map(|o| Write::Delete {
            kind: o.kind.clone(),
            name: o.name.clone(),
            expected: Some(o.meta.revision),
        });
        store
            .commit(std::iter::once(seen.clone()).chain(deletes).collect())
            .await?;
    }
    for object in rest {
        match pending.delete(&object.kind, &object.name, None).await {
            Ok(_) | Err(StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The run's writes landed: the object leaves the queue (an event says so after failures).
fn landed(controller: &ControllerParts, key: &ObjectKey) {
    let failures = controller.queue.failures(key);
    controller.queue.forget(key);
    crate::events::hooks::succeeded(&controller.context, &controller.info.name, key, failures);
}

/// Commits what a run decided without a callback (a finalizer put back), if anything.
pub async fn commit_alone(controller: &ControllerParts, key: &ObjectKey, pending: &Pending) -> Ran {
    if !pending.writes_anything() {
        return Ran::Done;
    }
    match commit_writes(controller, key, pending).await {
        Ok(()) => Ran::Done,
        Err(ran) => ran,
    }
}

/// Commits a run's writes in one transaction. A lost race is `Err(Conflict)`: nothing landed
/// and the run may go again; any other failure is handed to the failure rules.
pub async fn commit_writes(
    controller: &ControllerParts,
    key: &ObjectKey,
    pending: &Pending,
) -> Result<(), Ran> {
    match runner::commit(controller, key, Callback::Reconcile, pending).await {
        Ok(()) => Ok(()),
        Err(NotCommitted::Conflict(message)) => Err(Ran::Conflict(message)),
        Err(NotCommitted::TooLarge(message)) => {
            let handled = controller.keys.handled_generation(key);
            permanent(controller, key, handled, message).await;
            Err(Ran::Done)
        }
        Err(NotCommitted::Failed(message)) => {
            retry(controller, key, &message).await;
            Err(Ran::Done)
        }
    }
}

/// The callback failed and may succeed later: back off, and say so in the status (its
/// message's first line), the event (the whole message) and the component's log (what
/// followed the first line: a guest's traceback).
pub async fn retry(controller: &ControllerParts, key: &ObjectKey, message: &str) {
    let text = FailureText::new(message);
    let delay = controller.queue.add_rate_limited(key.clone());
    let attempts = controller.queue.failures(key);
    let next = std::time::SystemTime::now() + delay;
    let entry = ReconcileStatus {
        observed_generation: controller.keys.handled_generation(key),
        attempts,
        last_error: Some(text.line.clone()),
        permanent: false,
        next_retry: Some(humantime::format_rfc3339_millis(next).to_string()),
        version: controller.version(),
    };
    tracing::debug!(reactor = %controller.info.name, object = %key, attempts, ?delay, error = %text.line, "retrying");
    // The status first: whoever sees the event then finds the error in the status too.
    write_status(controller, key, &entry).await;
    text.log(&controller.info.name, key);
    crate::events::hooks::retrying(
        &controller.context,
        &controller.info.name,
        key,
        &text.whole(),
    );
}

/// The callback failed for good: no retry until the object changes. The message is shown
/// as [`retry`] shows it.
pub async fn permanent(
    controller: &ControllerParts,
    key: &ObjectKey,
    handled: Option<u64>,
    message: String,
) {
    let text = FailureText::new(&message);
    controller.queue.forget(key);
    let entry = ReconcileStatus {
        observed_generation: handled,
        attempts: 1,
        last_error: Some(text.line.clone()),
        permanent: true,
        next_retry: None,
        version: controller.version(),
    };
    write_status(controller, key, &entry).await;
    text.log(&controller.info.name, key);
    crate::events::hooks::permanent(
        &controller.context,
        &controller.info.name,
        key,
        &text.whole(),
    );
}

async fn write_status(controller: &ControllerParts, key: &ObjectKey, entry: &ReconcileStatus) {
    let store = controller.context.store.as_ref();
    match status::write(store, key.kind(), key.name(), &controller.info.name, entry).await {
        // The next run starts from an object that shows it (a failed run leaves nothing
        // else of itself).
        Ok(Some(revision)) => controller
            .keys
            .committed(key, std::iter::once((key.kind(), revision))),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(reactor = %controller.info.name, object = %key, error = %e, "cannot write the reconcile status");
        }
    }
}
