//! Agents gone: the owners whose items were meant for them roll up their propagation again.

use crate::watch::reflector::{Reflector, ReflectorEvent};
use reactor_core::object::{Object, ObjectKey, Selector};
use reactor_nimbus::Item;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};
use tokio::sync::broadcast::error::RecvError;

/// Where the owners go: the component that published their items, and the owner.
pub trait RollUp: Send + Sync + 'static {
    fn roll_up(&self, component: &str, owner: ObjectKey);
}

/// Follows the agents' deletions in `agents` until `target` is dropped: each owner of an item
/// in `items` that was meant for a deleted agent goes to `target`. (An agent that had
/// reported on an item is also heard as `removed` when its reports are withdrawn; one that
/// never did would otherwise stay counted as pending.)
pub fn follow(agents: &Reflector, items: Arc<Reflector>, target: Weak<dyn RollUp>) {
    let mut events = agents.subscribe();
    tokio::spawn(async move {
        loop {
            let gone: Option<Arc<Object>> = match events.recv().await {
                Ok(ReflectorEvent::Deleted(agent)) => Some(agent),
                Ok(ReflectorEvent::Applied(_)) => continue,
                // Some deletions were missed: every owner rolls up.
                Err(RecvError::Lagged(_)) => None,
                Err(RecvError::Closed) => return,
            };
            let Some(target) = target.upgrade() else {
                return;
            };
            for (component, owners) in owners_of(&items, gone.as_deref()) {
                for owner in owners {
                    target.roll_up(&component, owner);
                }
            }
        }
    });
}

/// The owners of the items meant for `agent` (of every item with `None`), by component.
fn owners_of(items: &Reflector, agent: Option<&Object>) -> BTreeMap<String, BTreeSet<ObjectKey>> {
    let mut owners: BTreeMap<String, BTreeSet<ObjectKey>> = BTreeMap::new();
    for object in items.list(&Selector::default()) {
        let Some(item) = Item::from_object(&object) else {
            continue;
        };
        if agent.is_some_and(|a| !item.target.selects(&a.name, &a.labels)) {
            continue;
        }
        let owner = ObjectKey::new(&item.owner.kind, &item.owner.name);
        owners
            .entry(item.owner.component)
            .or_default()
            .insert(owner);
    }
    owners
}
