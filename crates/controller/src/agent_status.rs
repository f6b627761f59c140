//! Agents' reports back to the reactors: the reports recorded on an owner's items are
//! coalesced per owner and agent, handed to the owning reactor's `on-agent-status` under the
//! owner's lock, and rolled up into the owner's `status.propagation`.

use super::context::EngineContext;
use super::failure_text::FailureText;
use super::pending::Pending;
use super::reactor::{Failure, Reactor};
use super::status::PROPAGATION;
use super::{QueueOptions, WorkQueue};
use parking_lot::Mutex;
use reactor_core::object::{Object, ObjectKey, Selector};
use reactor_nimbus as nimbus;
use reactor_nimbus::{AGENT_KIND, AgentReport, ITEM_KIND, Item, ReportState};
use reactor_store::update_status;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Failed reports of one owner, by agent and item key.
type FailedReports = BTreeMap<(String, String), AgentReport>;

/// The reports waiting for one reactor, and the queue of owners that have some.
pub struct ReportRelay {
    reactor: String,
    pending: Mutex<HashMap<ObjectKey, BTreeMap<String, AgentReport>>>,
    /// The failed reports among those offered, by agent and item: each is an event of the
    /// owner, also when a later report of the same agent (on another item) replaced it in
    /// `pending`.
    failed: Mutex<HashMap<ObjectKey, FailedReports>>,
    queue: WorkQueue<ObjectKey>,
    lock_retry: Duration,
    /// The most writes one `on-agent-status` may hold.
    max_writes: usize,
}

impl ReportRelay {
    pub fn new(
        reactor: &str,
        options: QueueOptions,
        lock_retry: Duration,
        max_writes: usize,
    ) -> Self {
        Self {
            reactor: reactor.to_owned(),
            pending: Mutex::new(HashMap::new()),
            failed: Mutex::new(HashMap::new()),
            queue: WorkQueue::new(options),
            lock_retry,
            max_writes,
        }
    }

    fn pending(
        &self,
    ) -> parking_lot::MutexGuard<'_, HashMap<ObjectKey, BTreeMap<String, AgentReport>>> {
        self.pending.lock()
    }

    /// Queues `report` for `owner`; a newer report of the same agent replaces an older one
    /// (the reactor reads the full picture through `nimbus.statuses` anyway).
    pub fn offer(&self, owner: ObjectKey, report: AgentReport) {
        if report.state == ReportState::Failed {
            let item = (report.agent.clone(), report.key.clone());
            (self.failed.lock().entry(owner.clone()).or_default()).insert(item, report.clone());
        }
        self.pending()
            .entry(owner.clone())
            .or_default()
            .insert(report.agent.clone(), report);
        self.queue.add(owner);
    }

    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// Rolls up `owner`'s propagation again, with no report to hand over (an agent it
    /// counted is gone).
    pub fn roll_up_later(&self, owner: ObjectKey) {
        self.queue.add(owner);
    }

    /// Works the queue until it shuts down; `reactor` gives the version serving now.
    pub async fn work(&self, context: &EngineContext, reactor: impl Fn() -> Arc<dyn Reactor>) {
        while let Some(owner) = self.queue.next().await {
            self.deliver(context, &owner, reactor()).await;
            self.queue.done(&owner);
        }
    }

    async fn deliver(&self, context: &EngineContext, owner: &ObjectKey, reactor: Arc<dyn Reactor>) {
        if !context.locks.owns(owner) {
            // Another replica owns the object; its own router hands it these reports.
            self.pending().remove(owner);
            self.failed.lock().remove(owner);
            self.queue.forget(owner);
            return;
        }
        let Some(_guard) = context.locks.try_lock(owner) else {
            self.queue.add_after(owner.clone(), self.lock_retry);
            return;
        };
        let batch = self.pending().remove(owner).unwrap_or_default();
        let failed = self.failed.lock().remove(owner).unwrap_or_default();
        super::event_hooks::agent_reports(context, &self.reactor, owner, failed.values());
        let mut reports = batch.into_values();
        while let Some(report) = reports.next() {
            // Fresh each time: the previous call may have changed the status.
            let current = match context.store.get(owner.kind(), owner.name()).await {
                Ok(Some(object)) if !object.meta.deleting => object,
                Ok(_) => return,
                Err(e) => {
                    self.retry_later(
                        owner,
                        std::iter::once(report).chain(reports),
                        &e.to_string(),
                    );
                    return;
                }
            };
            // Its writes land together, as a reconcile's do.
            let pending = Arc::new(Pending::new(context.store.clone(), self.max_writes));
            let current = Arc::new(current);
            pending.seed(&current);
            pending.require(owner, Some(current.meta.revision));
            let reaction = {
                let _open = context
                    .callbacks
                    .open(&self.reactor, owner, pending.clone());
                reactor.on_agent_status(&current, &report).await
            };
            // Only a call that succeeded commits what it wrote: a failed one (an error, a
            // write over its limit, a crash) leaves nothing.
            let reaction = match (pending.over_limit(), reaction) {
                (Some(message), _) => Err(Failure::Permanent(message)),
                (None, Err(failure)) => Err(failure),
                (None, Ok(_)) => match context.store.commit(pending.take()).await {
                    Ok(_) => Ok(()),
                    Err(e) => Err(Failure::Retry(format!("cannot commit its writes: {e}"))),
                },
            };
            match reaction {
                Ok(()) => {}
                Err(Failure::Permanent(message)) => {
                    let text = FailureText::new(&message);
                    text.log(&self.reactor, owner);
                    tracing::warn!(reactor = %self.reactor, object = %owner, agent = %report.agent, error = %text.line, "on-agent-status failed for good");
                }
                Err(Failure::Retry(message) | Failure::Crashed(message)) => {
                    let text = FailureText::new(&message);
                    text.log(&self.reactor, owner);
                    let reports = std::iter::once(report).chain(reports);
                    self.retry_later(owner, reports, &text.line);
                    return;
                }
            }
        }
        self.queue.forget(owner);
        if let Err(e) = roll_up(context, owner).await {
            tracing::warn!(object = %owner, error = %e, "cannot roll up propagation");
        }
    }

    /// Puts back the reports not delivered, unless newer ones arrived meanwhile.
    fn retry_later(
        &self,
        owner: &ObjectKey,
        reports: impl Iterator<Item = AgentReport>,
        message: &str,
    ) {
        {
            let mut pending = self.pending();
            let waiting = pending.entry(owner.clone()).or_default();
            for report in reports {
                waiting.entry(report.agent.clone()).or_insert(report);
            }
        }
        let delay = self.queue.add_rate_limited(owner.clone());
        tracing::debug!(reactor = %self.reactor, object = %owner, ?delay, error = message, "on-agent-status will retry");
    }
}

/// Writes `status.propagation` of `owner` from the cached items and agents.
async fn roll_up(
    context: &EngineContext,
    owner: &ObjectKey,
) -> Result<(), reactor_store::StoreError> {
    let (Some(items), Some(agents)) = (
        context.reflectors.acquire(ITEM_KIND),
        context.reflectors.acquire(AGENT_KIND),
    ) else {
        return Ok(());
    };
    let selector = nimbus::owner_selector(owner.kind(), owner.name());
    let owned: Vec<(Arc<Object>, Item)> = items
        .list(&selector)
        .into_iter()
        .filter_map(|o| Item::from_object(&o).map(|i| (o, i)))
        .collect();
    context.reports.synced().await;
    let sheets = context.reports.sheets_of(owner);
    let agents = agents.list(&Selector::default());
    let store = context.store.as_ref();
    let Some(current) = store.get(owner.kind(), owner.name()).await? else {
        return Ok(());
    };
    let rolled = nimbus::propagation(&current, &owned, &sheets, &agents);
    let rolled = serde_json::to_value(rolled).unwrap_or_default();
    update_status(store, owner.kind(), owner.name(), |status| {
        let mut status = match status {
            serde_json::Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        status.insert(PROPAGATION.to_owned(), rolled.clone());
        serde_json::Value::Object(status)
    })
    .await?;
    Ok(())
}
