//! Drives a reactor's rollout: queues its objects in the slow lane when a new version starts
//! serving, makes a run of a pending object run the callback even if nothing changed, and
//! acts on the canary's verdict; each step is an event of the component.

use super::attachment::Attachment;
use super::events::EventType;
use super::rollout::{RolloutPlan, Step};
use super::status;
use reactor_core::object::{Object, ObjectKey};
use std::sync::Arc;

/// The kind under which a component's rollout events are kept (`events Component NAME`).
pub const COMPONENT_EVENT_KIND: &str = "Component";

fn event(run: &Attachment, event_type: EventType, reason: &str, message: &str) {
    let key = ObjectKey::new(COMPONENT_EVENT_KIND, &run.info.name);
    run.context
        .events
        .record(&key, event_type, reason, "host", message);
}

/// Starts rolling `plan.version` out to every object of the reactor's kinds this replica
/// owns, once the caches are synced; replaces a rollout in progress.
pub async fn start(run: Arc<Attachment>, plan: RolloutPlan) {
    let mut total = 0u64;
    let mut todo = Vec::new();
    for reflector in run.reflectors.values() {
        reflector.synced().await;
        for object in reflector.list(&reactor_core::object::Selector::default()) {
            let key = object.key();
            if !run.context.locks.owns(&key) {
                continue;
            }
            total += 1;
            if ran_by(&object, &run.info.name).as_deref() != Some(plan.version.as_str()) {
                todo.push(key);
            }
        }
    }
    let (version, canary) = (plan.version.clone(), plan.canary.is_some());
    let from = plan.previous.clone().unwrap_or_else(|| "-".into());
    let count = todo.len();
    let queued = run.rollout.begin(plan, todo, total);
    let how = if canary {
        format!(", a canary of {} first", queued.len())
    } else {
        String::new()
    };
    event(
        &run,
        EventType::Normal,
        "RolloutStarted",
        &format!("rolling {version} out (replacing {from}) to {count} of {total} objects{how}"),
    );
    if queued.is_empty() {
        finished(&run, &version);
    }
    enqueue(&run, queued);
}

/// The version whose reconcile `object`'s status records for `reactor`.
fn ran_by(object: &Object, reactor: &str) -> Option<String> {
    status::read(object, reactor)?.version
}

/// Queues `keys` behind fresh events; a failing object keeps its own retry schedule (its
/// retry runs the new version).
pub fn enqueue(run: &Attachment, keys: Vec<ObjectKey>) {
    for key in keys {
        if run.queue.failures(&key) == 0 {
            run.keys.force(&key);
            run.queue.add_slow(key);
        }
    }
}

/// Before a run of `key`: an object still to be rolled whose status shows the version
/// already counts as rolled; any other runs the callback even if it did not change.
pub fn before_run(run: &Attachment, key: &ObjectKey, current: Option<&Object>) {
    let Some(version) = run.rollout.pending_version(key) else {
        return;
    };
    match current {
        Some(object) if ran_by(object, &run.info.name).as_deref() == Some(version.as_str()) => {
            after_run(run, key, None, false);
        }
        _ => run.keys.force(key),
    }
}

/// After a run of `key` by `version` (`None`: no callback ran): counts it, and acts on what
/// the rollout asks next.
pub fn after_run(run: &Attachment, key: &ObjectKey, version: Option<&str>, failed: bool) {
    match run.rollout.ran(key, version, failed) {
        Step::None => {}
        Step::Continue(rest) => {
            event(
                run,
                EventType::Normal,
                "CanaryPassed",
                &format!("the canary passed; rolling out to the other {}", rest.len()),
            );
            enqueue(run, rest);
        }
        Step::RollBack(reason) => {
            let Some((version, _)) = run.rollout.rolling_or_last() else {
                return;
            };
            event(
                run,
                EventType::Warning,
                "RolledBack",
                &format!("{version} rolled back: {reason}"),
            );
            if let Some(sink) = run.rollout.sink() {
                sink.roll_back(&version, reason);
            }
        }
        Step::Finished => {
            if let Some((version, _)) = run.rollout.rolling_or_last() {
                finished(run, &version);
            }
        }
    }
}

fn finished(run: &Attachment, version: &str) {
    let info = run.rollout.info();
    let total = info.map_or(0, |i| i.total);
    event(
        run,
        EventType::Normal,
        "RolloutFinished",
        &format!("{version} reconciled all {total} objects"),
    );
}
