//! Garbage collection of owned children: a child whose owner is gone, or is another object
//! of the same name, is deleted — whoever deleted the owner, and also when the host was down
//! at the time (the first sight of every child after a start judges it again).

use crate::controller::parts::ControllerParts;
use reactor_core::object::{Object, ObjectKey, Owner};
use reactor_store::StoreError;

/// Whether `owner` still exists as the very object that applied the child.
pub fn owner_alive(controller: &ControllerParts, owner: &Owner) -> bool {
    controller
        .reflectors
        .get(&owner.kind)
        .and_then(|reflector| reflector.uid(&owner.name))
        .is_some_and(|uid| uid == owner.uid)
}

/// Deletes `child`, whose owner is gone, unless it changed since it was read (its next event
/// decides again) or another replica runs its owner.
pub async fn collect(controller: &ControllerParts, child: &Object, owner: &Owner) {
    let owner_key = ObjectKey::new(&owner.kind, &owner.name);
    if !controller.context.locks.owns(&owner_key) {
        return;
    }
    let store = controller.context.store.as_ref();
    match store
        .delete(&child.kind, &child.name, Some(child.meta.revision))
        .await
    {
        Ok(_) | Err(StoreError::NotFound { .. }) => {
            metrics::counter!(reactor_core::metrics::COLLECTED, "component" => controller.info.name.clone())
                .increment(1);
            tracing::info!(reactor = %controller.info.name, child = %child.key(), owner = %owner_key, "owner gone: child collected");
        }
        Err(e) if e.is_conflict() => {}
        Err(e) => {
            tracing::warn!(reactor = %controller.info.name, child = %child.key(), error = %e, "cannot collect an orphaned child")
        }
    }
}

/// Collects every child of `owner_key` this reactor's watches have seen (the owner is gone).
pub async fn collect_children(controller: &ControllerParts, owner_key: &ObjectKey) {
    for child_key in controller.secondaries.children_of(owner_key) {
        let Some(reflector) = controller.watched.get(child_key.kind()) else {
            continue;
        };
        let Some(child) = reflector.get(child_key.name()) else {
            continue;
        };
        if let Some(owner) = controller.secondaries.owner_of(&child).cloned()
            && !owner_alive(controller, &owner)
        {
            collect(controller, &child, &owner).await;
        }
    }
}
