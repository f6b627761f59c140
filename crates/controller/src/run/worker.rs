//! A worker: takes a key from the queue, locks its object, decides the one callback level
//! state calls for, runs it with its writes held, and hands the result to the outcome rules
//! (which commit the writes); a commit that lost a race runs the callback again.

use crate::commit::outcome;
use crate::controller::parts::ControllerParts;
use crate::queue::key_state::RunStart;
use crate::reactor::imports::shadow_callback_name;
use crate::reactor::{Action, Failure, Reaction, Reactor};
use crate::rollout::shadow::{Beside, Served, Verdicts};
use crate::rollout::steps;
use crate::run::decide::{Decision, decide};
use crate::run::finalizers::{self, finalizer_of};
use crate::run::pending::Pending;
use crate::run::runner::{self, Callback, Ran};
use reactor_core::object::{Object, ObjectKey};
use std::sync::Arc;
use tracing::Instrument;

/// Works the queue until it shuts down. No callback runs before the caches of the reactor's
/// kinds and of the kinds it watches have loaded (as controller-runtime waits for its caches
/// to sync): a callback reading a watched object from a cache still loading would see nothing,
/// and the object's arrival in the initial listing runs nobody again.
pub async fn work(controller: &ControllerParts) {
    for reflector in controller
        .reflectors
        .values()
        .chain(controller.watched.values())
    {
        reflector.synced().await;
    }
    while let Some(key) = controller.queue.next().await {
        // Every line logged while the object is worked on (the host's, the guest's own) says
        // which reactor and object it belongs to.
        let span = tracing::info_span!("reconcile", component = %controller.info.name, kind = %key.kind(), name = %key.name());
        process(controller, &key).instrument(span).await;
        controller.queue.done(&key);
    }
}

async fn process(controller: &ControllerParts, key: &ObjectKey) {
    if !controller.context.locks.owns(key) {
        // Another replica's object: it runs there. Gaining the shard re-enqueues it.
        controller.queue.forget(key);
        steps::after_run(controller, key, None, false);
        return;
    }
    let Some(_guard) = controller.context.locks.try_lock(key) else {
        controller
            .queue
            .add_after(key.clone(), controller.options.lock_retry);
        return;
    };
    let Some(reflector) = controller.reflectors.get(key.kind()) else {
        return;
    };
    // The object as this controller last wrote it (a commit, a reconcile status).
    runner::catch_up(controller, key, reflector).await;
    let current = reflector.get(key.name());
    steps::before_run(controller, key, current.as_deref());
    let start = controller
        .keys
        .start_run(key, current.as_deref(), controller.info.name.as_str());
    let mut attempts = runner::Attempts::new(controller, key, Callback::Reconcile, current);
    loop {
        let (current, cached) = match attempts.next().await {
            Ok(next) => next,
            Err(message) => return outcome::retry(controller, key, &message).await,
        };
        match attempt_run(controller, key, &start, current, cached).await {
            Ran::Done => return,
            Ran::Conflict(message) => attempts.lost(message),
        }
    }
}

async fn attempt_run(
    controller: &ControllerParts,
    key: &ObjectKey,
    start: &RunStart,
    current: Option<Arc<Object>>,
    cached: bool,
) -> Ran {
    let name = controller.info.name.as_str();
    // Everything this run writes lands in one transaction at its end, or not at all.
    let pending = match open_pending(controller, key, current.as_ref(), cached).await {
        Ok(pending) => pending,
        Err(message) => {
            outcome::retry(controller, key, &message).await;
            return Ran::Done;
        }
    };
    let finalizer_pending = !start.delete_handled
        && current
            .as_ref()
            .is_some_and(|o| o.meta.finalizers.contains(&finalizer_of(name)));
    let decision = decide(
        start.handled.as_ref(),
        current.as_ref(),
        controller.info.handles_delete,
        start.forced,
        finalizer_pending,
    );
    let started = std::time::Instant::now();
    // The version that runs this callback, whatever is swapped in meanwhile: its status says so.
    let (reactor, version) = match controller.reactor().pin() {
        Some((pinned, version)) => (pinned, Some(version)),
        None => (controller.reactor(), None),
    };
    if matches!(decision, Decision::Nothing) {
        controller.queue.forget(key);
        if current.is_none() {
            controller.keys.forget_gone(key);
        }
        // A finalizer put back, if a user removed it.
        let _open = controller
            .context
            .callbacks
            .open(name, key, pending.clone());
        let ran = outcome::commit_alone(controller, key, &pending).await;
        if matches!(ran, Ran::Done) {
            steps::after_run(controller, key, None, false);
        }
        return ran;
    }
    // A version running as a shadow runs the same callback on the same state beside it, its
    // writes kept apart (under another name) and never committed, on a task of its own.
    let shadow = match controller.reactor().shadow() {
        Some((shadow, sha256)) if !matches!(decision, Decision::Release) => {
            beside(
                controller, key, &pending, &decision, &current, cached, shadow, sha256,
            )
            .await
        }
        _ => None,
    };
    let reaction = {
        let _open = controller
            .context
            .callbacks
            .open(name, key, pending.clone());
        call(reactor.as_ref(), &decision, current.as_deref()).await
    };
    let Some(reaction) = reaction else {
        if let Some(shadow) = shadow {
            shadow.abandon();
        }
        return Ran::Done;
    };
    // A callback refused a write for its limit fails for good, whatever it returned.
    let reaction = match pending.over_limit() {
        Some(message) => Err(Failure::Permanent(message)),
        None => reaction,
    };
    // The shadow's verdict on this object: only against a serving run that succeeded (a
    // failed one commits nothing to compare with). Judged off the object's path: the commit
    // does not wait for the shadow, and a promotion waits for the component's loads.
    if let Some(shadow) = shadow {
        match &reaction {
            Ok(_) => {
                let verdicts = Verdicts {
                    component: name.to_owned(),
                    events: controller.context.events.clone(),
                    store: controller.context.store.clone(),
                };
                let served = Served::of(&reaction, &pending);
                shadow.judge(served, verdicts, controller.reactor(), key.clone());
            }
            Err(_) => shadow.abandon(),
        }
    }
    runner::record_time(
        controller,
        Callback::Reconcile,
        started.elapsed().as_secs_f64(),
    );
    let result = runner::result_of(&reaction);
    let ran = finish(
        controller,
        key,
        start,
        decision,
        current,
        reaction,
        &pending,
        version.clone(),
    )
    .await;
    // A run whose commit lost a race left nothing: the one that runs again counts instead.
    if matches!(ran, Ran::Done) {
        let failed = result == "error" || result == "permanent";
        steps::after_run(controller, key, version.as_deref(), failed);
        runner::record_result(controller, Callback::Reconcile, result);
    }
    ran
}

/// The pending writes of a run of `key` decided from `current`: seeded with it, committing
/// only if the store still holds it, with the reactor's finalizer added where it needs one.
/// `cached`: reads come from the engine's caches (a first attempt). Errs with why the
/// finalizer could not be added.
async fn open_pending(
    controller: &ControllerParts,
    key: &ObjectKey,
    current: Option<&Arc<Object>>,
    cached: bool,
) -> Result<Arc<Pending>, String> {
    let name = controller.info.name.as_str();
    let pending = runner::pending(controller, key, current, cached);
    if controller.info.handles_delete
        && let Some(object) = current
        && !object.meta.deleting
        && !object.meta.finalizers.contains(&finalizer_of(name))
    {
        finalizers::add(pending.as_ref(), object, name)
            .await
            .map_err(|e| format!("cannot add the finalizer: {e}"))?;
    }
    Ok(pending)
}

/// Starts shadow version `shadow`'s call of the callback `decision` names beside the serving
/// version's run on `key` (its writes in `pending`), unless a shadow call on `key` still
/// runs or the reactor has as many running as workers.
#[allow(clippy::too_many_arguments)]
async fn beside(
    controller: &ControllerParts,
    key: &ObjectKey,
    pending: &Arc<Pending>,
    decision: &Decision,
    current: &Option<Arc<Object>>,
    cached: bool,
    shadow: Arc<dyn Reactor>,
    sha256: String,
) -> Option<Beside> {
    let in_flight = controller
        .shadows
        .start(key, controller.options.concurrency)?;
    let shadow_pending = open_pending(controller, key, current.as_ref(), cached)
        .await
        .ok()?;
    shadow_pending.beside(pending.clone());
    let (callbacks, key_owned) = (controller.context.callbacks.clone(), key.clone());
    let (decision, current) = (decision.clone(), current.clone());
    let (name, held) = (
        shadow_callback_name(&controller.info.name),
        shadow_pending.clone(),
    );
    let call = tokio::spawn(
        async move {
            let _open = callbacks.open(&name, &key_owned, held);
            call(shadow.as_ref(), &decision, current.as_deref()).await
        }
        .in_current_span(),
    );
    Some(Beside {
        sha256,
        pending: shadow_pending,
        call,
        _in_flight: in_flight,
    })
}

/// Runs the callback `decision` names on `reactor`; `None` when its object is gone.
async fn call(
    reactor: &dyn Reactor,
    decision: &Decision,
    current: Option<&Object>,
) -> Option<Reaction> {
    match decision {
        Decision::Create => Some(reactor.on_create(current?).await),
        Decision::Update { old } => Some(reactor.on_update(old, current?).await),
        Decision::Delete { last } => Some(reactor.on_delete(last).await),
        Decision::Release => Some(Ok(Action::Done)),
        Decision::Nothing => None,
    }
}

/// Hands a callback's result, from `version`, to the outcome rules, which commit its writes
/// if it succeeded.
#[allow(clippy::too_many_arguments)]
async fn finish(
    controller: &ControllerParts,
    key: &ObjectKey,
    start: &RunStart,
    decision: Decision,
    current: Option<Arc<Object>>,
    reaction: Reaction,
    pending: &Pending,
    version: Option<String>,
) -> Ran {
    let failure = match reaction {
        Ok(action) => {
            let ran = outcome::Succeeded {
                decision: &decision,
                action,
                version,
            };
            return outcome::succeeded(controller, key, ran, current, pending).await;
        }
        Err(failure) => failure,
    };
    // A failed callback keeps none of its writes (its transaction is all or none): one that
    // returned an error, went over its limit or crashed alike.
    match failure {
        Failure::Retry(message) | Failure::Crashed(message) => {
            outcome::retry(controller, key, &message).await;
        }
        Failure::Permanent(message) => {
            let handled = start.handled.as_ref().map(|h| h.meta.generation);
            outcome::permanent(controller, key, handled, message).await;
        }
    }
    Ran::Done
}
