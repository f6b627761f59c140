//! The feed of one kind a reactor watches besides its own: a change there runs the mapped
//! objects of the reactor again (referencing, selected, or owning), and an owned child whose
//! owner is gone is collected.

use crate::commit::collector;
use crate::controller::parts::ControllerParts;
use crate::watch::reflector::{Reflector, ReflectorEvent};
use reactor_core::object::{ObjectKey, Selector};
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// Follows `reflector` (a watched kind) for the attached reactor `controller` until it stops.
pub async fn follow(controller: Arc<ControllerParts>, reflector: Arc<Reflector>) {
    let mut events = reflector.subscribe();
    // Owners must be known before a child can be judged an orphan.
    for primary in controller.reflectors.values() {
        primary.synced().await;
    }
    reflector.synced().await;
    judge_all(&controller, &reflector).await;
    loop {
        match events.recv().await {
            Ok(event) => changed(&controller, &event).await,
            Err(RecvError::Lagged(_)) => {
                // Missed changes: run every mapped object again and judge every child.
                for object in reflector.list(&Selector::default()) {
                    changed(&controller, &ReflectorEvent::Applied(object)).await;
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Learns every watched object as it is now (selectors, children) and collects the children
/// whose owner went while nobody watched; the reactor's own objects all run at start anyway.
/// Also when this replica gains shards: their orphans were left to the replica that had them.
pub async fn judge_all(controller: &ControllerParts, reflector: &Reflector) {
    for object in reflector.list(&Selector::default()) {
        let event = ReflectorEvent::Applied(object);
        controller.secondaries.relevant(&event);
        controller.secondaries.mapped(&event);
        settle_child(controller, &event, false).await;
    }
}

async fn changed(controller: &ControllerParts, event: &ReflectorEvent) {
    // Checked first: a change of the reactor's own is forgotten even if it matters to nothing.
    let own = controller.own_writes.is_own(event);
    if !controller.secondaries.relevant(event) {
        return;
    }
    // The indexes learn the change either way; only the reruns are skipped for its own.
    let mapped = controller.secondaries.mapped(event);
    if !own {
        for key in mapped {
            controller.rerun(key);
        }
    }
    settle_child(controller, event, !own).await;
}

/// An owned child changed: its owner runs again (and restores it), or, with the owner gone,
/// the child is collected.
async fn settle_child(controller: &ControllerParts, event: &ReflectorEvent, rerun: bool) {
    let child = event.object();
    if !controller.secondaries.owns(&child.kind) {
        return;
    }
    let Some(owner) = controller.secondaries.owner_of(child).cloned() else {
        return;
    };
    let owner_key = ObjectKey::new(&owner.kind, &owner.name);
    match event {
        ReflectorEvent::Deleted(_) => controller.secondaries.disown(&child.key()),
        ReflectorEvent::Applied(_) => controller.secondaries.adopt(&child.key(), &owner_key),
    }
    if collector::owner_alive(controller, &owner) {
        if rerun {
            controller.rerun(owner_key);
        }
    } else if matches!(event, ReflectorEvent::Applied(_)) {
        collector::collect(controller, child, &owner).await;
    }
}
