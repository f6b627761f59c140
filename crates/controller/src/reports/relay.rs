//! Agents' reports back to the reactors, waiting for their rounds: the reports recorded on an
//! owner's items are coalesced per owner and agent, and the owners that have some are queued
//! (the rounds that hand them to `on-agent-status` are `report_rounds`').

use crate::{QueueOptions, WorkQueue};
use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use reactor_nimbus::{AgentReport, ReportState};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// Failed reports of one owner, by agent and item key.
pub type FailedReports = BTreeMap<(String, String), AgentReport>;

/// The reports waiting for one reactor, and the queue of owners that have some.
pub struct ReportRelay {
    pending: Mutex<HashMap<ObjectKey, BTreeMap<String, AgentReport>>>,
    /// The failed reports among those offered, by agent and item: each is an event of the
    /// owner, also when a later report of the same agent (on another item) replaced it in
    /// `pending`.
    failed: Mutex<HashMap<ObjectKey, FailedReports>>,
    queue: WorkQueue<ObjectKey>,
}

impl ReportRelay {
    pub fn new(options: QueueOptions) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            failed: Mutex::new(HashMap::new()),
            queue: WorkQueue::new(options),
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

    /// The next owner whose reports are due; `None` once shut down.
    pub async fn next(&self) -> Option<ObjectKey> {
        self.queue.next().await
    }

    /// `owner`'s round ended (see [`WorkQueue::done`]).
    pub fn done(&self, owner: &ObjectKey) {
        self.queue.done(owner);
    }

    /// Takes `owner`'s waiting reports, one per agent, and the failed ones among all offered.
    pub fn take(&self, owner: &ObjectKey) -> (Vec<AgentReport>, FailedReports) {
        let batch = self.pending().remove(owner).unwrap_or_default();
        let failed = self.failed.lock().remove(owner).unwrap_or_default();
        (batch.into_values().collect(), failed)
    }

    /// Drops what waits for `owner`: another replica owns it, and its own router hands it
    /// these reports.
    pub fn drop_owner(&self, owner: &ObjectKey) {
        self.pending().remove(owner);
        self.failed.lock().remove(owner);
        self.queue.forget(owner);
    }

    /// Tries `owner` again after `delay` (its lock is held).
    pub fn again_after(&self, owner: &ObjectKey, delay: Duration) {
        self.queue.add_after(owner.clone(), delay);
    }

    /// Every report of `owner` was handed over: its failures so far are forgotten.
    pub fn delivered(&self, owner: &ObjectKey) {
        self.queue.forget(owner);
    }

    /// Puts back the reports not delivered, unless newer ones arrived meanwhile, and backs
    /// `owner` off: answers the delay and how many rounds failed in a row.
    pub fn retry_later(
        &self,
        owner: &ObjectKey,
        reports: impl Iterator<Item = AgentReport>,
    ) -> (Duration, u32) {
        {
            let mut pending = self.pending();
            let waiting = pending.entry(owner.clone()).or_default();
            for report in reports {
                waiting.entry(report.agent.clone()).or_insert(report);
            }
        }
        let delay = self.queue.add_rate_limited(owner.clone());
        (delay, self.queue.failures(owner))
    }
}
