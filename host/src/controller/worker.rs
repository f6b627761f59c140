//! A worker: takes a key from the queue, locks its object, decides the one callback level
//! state calls for, runs it, and hands the result to the outcome rules.

use super::attachment::Attachment;
use super::decide::{Decision, decide};
use super::finalizers::{self, finalizer_of};
use super::outcome;
use super::reactor::{Action, Failure};
use crate::object::ObjectKey;

/// Works the queue until it shuts down.
pub async fn work(run: &Attachment) {
    while let Some(key) = run.queue.next().await {
        process(run, &key).await;
        run.queue.done(&key);
    }
}

async fn process(run: &Attachment, key: &ObjectKey) {
    if !run.context.locks.owns(key) {
        // Another replica's object: it runs there. Gaining the shard re-enqueues it.
        run.queue.forget(key);
        return;
    }
    let Some(_guard) = run.context.locks.try_lock(key) else {
        run.queue.add_after(key.clone(), run.options.lock_retry);
        return;
    };
    let Some(reflector) = run.reflectors.get(key.kind()) else {
        return;
    };
    let current = reflector.get(key.name());
    let name = run.info.name.as_str();
    let start = run.keys.start_run(key, current.as_ref(), name);
    if run.info.handles_delete
        && let Some(object) = &current
        && !object.meta.deleting
        && !object.meta.finalizers.contains(&finalizer_of(name))
        && let Err(e) = finalizers::add(run.context.store.as_ref(), object, name).await
    {
        outcome::retry(run, key, &format!("cannot add the finalizer: {e}")).await;
        return;
    }
    let finalizer_pending = !start.delete_handled
        && current
            .as_ref()
            .is_some_and(|o| o.meta.finalizers.contains(&finalizer_of(name)));
    let decision = decide(
        start.handled.as_ref(),
        current.as_ref(),
        run.info.handles_delete,
        start.forced,
        finalizer_pending,
    );
    let started = std::time::Instant::now();
    let reactor = run.reactor();
    let reaction = match &decision {
        Decision::Nothing => {
            run.queue.forget(key);
            if current.is_none() {
                run.keys.forget_gone(key);
            }
            return;
        }
        Decision::Create => match &current {
            Some(object) => reactor.on_create(object).await,
            None => return,
        },
        Decision::Update { old } => match &current {
            Some(object) => reactor.on_update(old, object).await,
            None => return,
        },
        Decision::Delete { last } => reactor.on_delete(last).await,
        Decision::Release => Ok(Action::Done),
    };
    let seconds = started.elapsed().as_secs_f64();
    metrics::histogram!("reconcile_time_seconds", "component" => name.to_owned()).record(seconds);
    let result = match &reaction {
        Ok(Action::Done) => "success",
        Ok(Action::RequeueAfter(_)) => "requeue",
        Err(Failure::Retry(_)) => "error",
        Err(Failure::Permanent(_)) => "permanent",
    };
    metrics::counter!("reconcile_total", "component" => name.to_owned(), "result" => result)
        .increment(1);
    match reaction {
        Ok(action) => outcome::succeeded(run, key, &decision, current, action).await,
        Err(Failure::Retry(message)) => {
            metrics::counter!("reconcile_errors_total", "component" => name.to_owned())
                .increment(1);
            outcome::retry(run, key, &message).await;
        }
        Err(Failure::Permanent(message)) => {
            metrics::counter!("reconcile_errors_total", "component" => name.to_owned())
                .increment(1);
            let handled = start.handled.map(|h| h.meta.generation);
            outcome::permanent(run, key, handled, message).await;
        }
    }
}
