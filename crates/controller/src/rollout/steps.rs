//! Drives a reactor's rollout: queues its objects in the slow lane when a new version starts
//! serving, makes a run of a pending object run the callback even if nothing changed, and
//! acts on the canary's verdict; each step is an event of the component.

use crate::commit::status;
use crate::controller::parts::ControllerParts;
use crate::events::EventType;
use crate::rollout::state::{RolloutPlan, Step};
use reactor_core::object::{Object, ObjectKey};
use std::sync::Arc;

/// The kind under which a component's rollout events are kept (`events Component NAME`).
pub const COMPONENT_EVENT_KIND: &str = "Component";

fn event(controller: &ControllerParts, event_type: EventType, reason: &str, message: &str) {
    let key = ObjectKey::new(COMPONENT_EVENT_KIND, &controller.info.name);
    controller
        .context
        .events
        .record(&key, event_type, reason, "host", message);
}

/// Starts rolling `plan.version` out to every object of the reactor's kinds this replica
/// owns, once the caches are synced; replaces a rollout in progress.
pub async fn start(controller: Arc<ControllerParts>, plan: RolloutPlan) {
    let mut total = 0u64;
    let mut todo = Vec::new();
    for reflector in controller.reflectors.values() {
        reflector.synced().await;
        for object in reflector.list(&reactor_core::object::Selector::default()) {
            let key = object.key();
            if !controller.context.locks.owns(&key) {
                continue;
            }
            total += 1;
            if ran_by(&object, &controller.info.name).as_deref() != Some(plan.version.as_str()) {
                todo.push(key);
            }
        }
    }
    let (version, canary) = (plan.version.clone(), plan.canary.is_some());
    let from = plan.previous.clone().unwrap_or_else(|| "-".into());
    let count = todo.len();
    let queued = controller.rollout.begin(plan, todo, total);
    let how = if canary {
        format!(", a canary of {} first", queued.len())
    } else {
        String::new()
    };
    event(
        &controller,
        EventType::Normal,
        "RolloutStarted",
        &format!("rolling {version} out (replacing {from}) to {count} of {total} objects{how}"),
    );
    if queued.is_empty() {
        finished(&controller, &version);
    }
    enqueue(&controller, queued);
}

/// The version whose reconcile `object`'s status records for `reactor`.
fn ran_by(object: &Object, reactor: &str) -> Option<String> {
    status::read(object, reactor)?.version
}

/// Queues `keys` behind fresh events; a failing object keeps its own retry schedule (its
/// retry runs the new version).
pub fn enqueue(controller: &ControllerParts, keys: Vec<ObjectKey>) {
    for key in keys {
        if controller.queue.failures(&key) == 0 {
            controller.keys.force(&key);
            controller.queue.add_slow(key);
        }
    }
}

/// Before a run of `key`: an object still to be rolled whose status shows the version
/// already counts as rolled; any other runs the callback even if it did not change.
pub fn before_run(controller: &ControllerParts, key: &ObjectKey, current: Option<&Object>) {
    let Some(version) = controller.rollout.pending_version(key) else {
        return;
    };
    match current {
        Some(object)
            if ran_by(object, &controller.info.name).as_deref() == Some(version.as_str()) =>
        {
            after_run(controller, key, None, false);
        }
        _ => controller.keys.force(key),
    }
}

/// After a run of `key` by `version` (`None`: no callback ran): counts it, and acts on what
/// the rollout asks next.
pub fn after_run(
    controller: &ControllerParts,
    key: &ObjectKey,
    version: Option<&str>,
    failed: bool,
) {
    match controller.rollout.ran(key, version, failed) {
        Step::None => {}
        Step::Continue(rest) => {
            event(
                controller,
                EventType::Normal,
                "CanaryPassed",
                &format!("the canary passed; rolling out to the other {}", rest.len()),
            );
            enqueue(controller, rest);
        }
        Step::RollBack(reason) => {
            let Some((version, _)) = controller.rollout.rolling_or_last() else {
                return;
            };
            event(
                controller,
                EventType::Warning,
                "RolledBack",
                &format!("{version} rolled back: {reason}"),
            );
            if let Some(sink) = controller.rollout.sink() {
                sink.roll_back(&version, reason);
            }
        }
        Step::Finished => {
            if let Some((version, _)) = controller.rollout.rolling_or_last() {
                finished(controller, &version);
            }
        }
    }
}

fn finished(controller: &ControllerParts, version: &str) {
    let info = controller.rollout.info();
    let total = info.map_or(0, |i| i.total);
    event(
        controller,
        EventType::Normal,
        "RolloutFinished",
        &format!("{version} reconciled all {total} objects"),
    );
}
