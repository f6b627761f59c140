//! Follows the items' status for agents' reports and hands each new report to the controller
//! of the component that published the item. At start every recorded report is handed over
//! once more: a report recorded just before a crash still reaches its reactor.

use super::reflector::{Reflector, ReflectorEvent};
use crate::nimbus::{AgentReport, Item, reports_of};
use crate::object::{Object, ObjectKey};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use tokio::sync::broadcast::error::RecvError;

/// Where reports go: the component that published the item, and the item's owner.
pub trait ReportSink: Send + Sync + 'static {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport);
}

/// Runs until the items' reflector closes or `sink` is gone.
pub async fn route(sink: Weak<dyn ReportSink>, items: Arc<Reflector>) {
    let mut events = items.subscribe();
    items.synced().await;
    let mut seen: HashMap<String, BTreeMap<String, AgentReport>> = HashMap::new();
    let mut rescan = true;
    loop {
        let Some(target) = sink.upgrade() else { return };
        if std::mem::take(&mut rescan) {
            for name in items.names() {
                if let Some(object) = items.get(&name) {
                    forward(target.as_ref(), &mut seen, &object);
                }
            }
        }
        drop(target);
        let event = events.recv().await;
        let Some(target) = sink.upgrade() else { return };
        match event {
            Ok(ReflectorEvent::Applied(object)) => forward(target.as_ref(), &mut seen, &object),
            Ok(ReflectorEvent::Deleted(object)) => {
                seen.remove(&object.name);
            }
            Err(RecvError::Lagged(_)) => rescan = true,
            Err(RecvError::Closed) => return,
        }
    }
}

/// Offers the reports of `object` that differ from those seen before.
fn forward(
    sink: &dyn ReportSink,
    seen: &mut HashMap<String, BTreeMap<String, AgentReport>>,
    object: &Object,
) {
    let Some(item) = Item::from_object(object) else {
        return;
    };
    let now = reports_of(object);
    let before = seen.get(&object.name);
    let owner = ObjectKey::new(&item.owner.kind, &item.owner.name);
    for (agent, report) in &now {
        if before.and_then(|b| b.get(agent)) != Some(report) {
            sink.offer_report(&item.owner.component, owner.clone(), report.clone());
        }
    }
    seen.insert(object.name.clone(), now);
}
