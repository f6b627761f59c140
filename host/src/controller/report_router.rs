//! Follows the agents' report sheets and hands each changed report to the controller of the
//! component that published the item. At start every recorded report is handed over once
//! more: a report recorded just before a crash still reaches its reactor.

use super::reflector::{Reflector, ReflectorEvent};
use crate::nimbus::{AgentReport, ReportState, Sheet, SheetEntry};
use crate::object::{Object, ObjectKey};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};
use tokio::sync::broadcast::error::RecvError;

/// Where reports go: the component that published the item, and the item's owner.
pub trait ReportSink: Send + Sync + 'static {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport);
}

/// Runs until the sheets' reflector closes or `sink` is gone.
pub async fn route(sink: Weak<dyn ReportSink>, sheets: Arc<Reflector>) {
    let mut events = sheets.subscribe();
    sheets.synced().await;
    let mut seen: HashMap<String, BTreeMap<String, SheetEntry>> = HashMap::new();
    let mut rescan = true;
    loop {
        let Some(target) = sink.upgrade() else { return };
        if std::mem::take(&mut rescan) {
            for name in sheets.names() {
                if let Some(object) = sheets.get(&name) {
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

/// Offers the entries of a sheet that differ from those seen before.
fn forward(
    sink: &dyn ReportSink,
    seen: &mut HashMap<String, BTreeMap<String, SheetEntry>>,
    object: &Object,
) {
    let Some(sheet) = Sheet::from_object(object) else {
        return;
    };
    let before = seen.get(&object.name);
    let owner = ObjectKey::new(&sheet.owner_kind, &sheet.owner_name);
    for (key, entry) in &sheet.items {
        if before.and_then(|b| b.get(key)) != Some(entry)
            && let Some(report) = sheet.report(key)
        {
            sink.offer_report(&sheet.component, owner.clone(), report);
        }
    }
    // An entry gone from the sheet: the item left that agent (withdrawn or re-targeted).
    for (key, entry) in before.into_iter().flatten() {
        if !sheet.items.contains_key(key) {
            let removed = AgentReport {
                key: key.clone(),
                agent: sheet.agent.clone(),
                state: ReportState::Removed,
                message: None,
                revision: entry.revision,
            };
            sink.offer_report(&sheet.component, owner.clone(), removed);
        }
    }
    seen.insert(object.name.clone(), sheet.items);
}
