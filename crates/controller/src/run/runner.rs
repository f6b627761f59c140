//! The steps every callback run shares, a reconcile's and an `on-agent-status` round's: its
//! object read from the cache once that shows this controller's last commit, its writes held
//! and committed in one transaction, a commit that lost a race run again at once on the
//! store's state, and its metrics.

use crate::controller::parts::ControllerParts;
use crate::reactor::{Action, Failure, Reaction};
use crate::run::pending::{CACHE_WAIT, CachedReads, Pending};
use crate::watch::reflector::Reflector;
use metrics::Label;
use reactor_core::object::{Object, ObjectKey};
use reactor_store::{StoreError, targets};
use std::sync::Arc;

/// How many times a callback runs again at once when its commit lost a race, before the
/// object backs off as a failure.
pub const COMMIT_ATTEMPTS: usize = 8;

/// How one run of a callback ended.
pub enum Ran {
    /// Committed, or failed and handed to the failure rules.
    Done,
    /// Its commit lost a race: nothing of it landed, and it may run again at once.
    Conflict(String),
}

/// Which callback a run calls, as its metrics tell: a reconcile's series carry no
/// `callback` label, the others' say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callback {
    /// `on-create`, `on-update` or `on-delete`.
    Reconcile,
    /// `on-agent-status`, with the owner's propagation roll-up.
    AgentStatus,
}

impl Callback {
    /// The label value (and the name the status entry gives a failure).
    pub fn name(self) -> &'static str {
        match self {
            Callback::Reconcile => "reconcile",
            Callback::AgentStatus => "on-agent-status",
        }
    }

    fn labels(self, component: &str) -> Vec<Label> {
        let mut labels = vec![Label::new("component", component.to_owned())];
        if self != Callback::Reconcile {
            labels.push(Label::new("callback", self.name()));
        }
        labels
    }
}

/// Waits until `reflector` shows what this controller last committed for `key` (a commit, a
/// status), at most [`CACHE_WAIT`]: past it, a stale object costs a lost race at commit
/// instead.
pub async fn catch_up(controller: &ControllerParts, key: &ObjectKey, reflector: &Reflector) {
    let at = (controller.keys.committed_at(key).into_iter())
        .find(|(kind, _)| kind == reflector.kind())
        .map_or(0, |(_, at)| at);
    let _ = tokio::time::timeout(CACHE_WAIT, reflector.reached(at)).await;
}

/// The attempts of one run: the first on the object as the caches hold it, each after a
/// commit that lost a race on the store's state, at most [`COMMIT_ATTEMPTS`] in all; each lost
/// race is counted.
pub struct Attempts<'a> {
    controller: &'a ControllerParts,
    key: &'a ObjectKey,
    callback: Callback,
    /// The object the first attempt runs on, until it is taken.
    first: Option<Option<Arc<Object>>>,
    made: usize,
    /// Why the last commit lost.
    lost: String,
}

impl<'a> Attempts<'a> {
    /// Attempts of `callback` on `key`, the first on `cached` (as the caches hold it).
    pub fn new(
        controller: &'a ControllerParts,
        key: &'a ObjectKey,
        callback: Callback,
        cached: Option<Arc<Object>>,
    ) -> Self {
        Self {
            controller,
            key,
            callback,
            first: Some(cached),
            made: 0,
            lost: String::new(),
        }
    }

    /// The object the next attempt runs on, and whether it was read from the caches (only
    /// the first is). Errs with why the run gives up: its commit kept losing races, or the
    /// store could not be read; it then backs off as a failure.
    pub async fn next(&mut self) -> Result<(Option<Arc<Object>>, bool), String> {
        self.made += 1;
        if let Some(first) = self.first.take() {
            return Ok((first, true));
        }
        if self.made > COMMIT_ATTEMPTS {
            let lost = &self.lost;
            return Err(format!(
                "its writes kept conflicting with other writers: {lost}"
            ));
        }
        // The cache showed a state the store had left: read the store itself.
        let conflicts = reactor_core::metrics::RECONCILE_COMMIT_CONFLICTS;
        metrics::counter!(conflicts, self.callback.labels(&self.controller.info.name)).increment(1);
        let store = self.controller.context.store.as_ref();
        match store.get(self.key.kind(), self.key.name()).await {
            Ok(object) => Ok((object.map(Arc::new), false)),
            Err(e) => Err(format!("cannot read the object: {e}")),
        }
    }

    /// The attempt's commit lost a race (`message`): the next runs on the store's state.
    pub fn lost(&mut self, message: String) {
        self.lost = message;
    }
}

/// The pending writes of a run of `key` decided from `current`: seeded with it, committing
/// only if the store still holds it. `cached`: reads come from the engine's caches (a first
/// attempt).
pub fn pending(
    controller: &ControllerParts,
    key: &ObjectKey,
    current: Option<&Arc<Object>>,
    cached: bool,
) -> Arc<Pending> {
    let mut pending = Pending::new(
        controller.context.store.clone(),
        controller.options.max_writes,
    );
    if cached {
        pending = pending.reading_from(CachedReads {
            reflectors: controller.context.reflectors.clone(),
            committed_at: controller.keys.committed_at(key),
        });
    }
    let pending = Arc::new(pending);
    if let Some(object) = current {
        pending.seed(object);
    }
    // Decided from `current`: if the store moved on meanwhile, nothing lands and it runs again.
    pending.require(key, current.map(|o| o.meta.revision));
    pending
}

/// How a callback's result is counted: success, requeue, error or permanent.
pub fn result_of(reaction: &Reaction) -> &'static str {
    match reaction {
        Ok(Action::Done) => "success",
        Ok(Action::RequeueAfter(_)) => "requeue",
        Err(Failure::Retry(_) | Failure::Crashed(_)) => "error",
        Err(Failure::Permanent(_)) => "permanent",
    }
}

/// Records how long a callback took.
pub fn record_time(controller: &ControllerParts, callback: Callback, seconds: f64) {
    let time = reactor_core::metrics::RECONCILE_TIME;
    metrics::histogram!(time, callback.labels(&controller.info.name)).record(seconds);
}

/// Counts a run that ended (`result` from [`result_of`]); a run whose commit lost a race is
/// not counted: the one that runs again is.
pub fn record_result(controller: &ControllerParts, callback: Callback, result: &'static str) {
    let mut labels = callback.labels(&controller.info.name);
    if result == "error" || result == "permanent" {
        let errors = reactor_core::metrics::RECONCILE_ERRORS;
        metrics::counter!(errors, labels.clone()).increment(1);
    }
    labels.push(Label::new("result", result));
    metrics::counter!(reactor_core::metrics::RECONCILE, labels).increment(1);
}

/// Why a run's commit did not land.
pub enum NotCommitted {
    /// It lost a race: nothing landed, and the run may go again at once.
    Conflict(String),
    /// The transaction is over the store's limits: it never will.
    TooLarge(String),
    /// Anything else: it may land later.
    Failed(String),
}

/// Commits a run's writes in one transaction, and remembers what it changed: later runs read
/// caches only once they show it, and writes to the kinds the reactor watches run nothing
/// again.
pub async fn commit(
    controller: &ControllerParts,
    key: &ObjectKey,
    callback: Callback,
    pending: &Pending,
) -> Result<(), NotCommitted> {
    let writes = pending.take();
    if writes.is_empty() {
        return Ok(());
    }
    let sizes = reactor_core::metrics::RECONCILE_COMMIT_WRITES;
    metrics::histogram!(sizes, callback.labels(&controller.info.name)).record(writes.len() as f64);
    let targets = targets(&writes);
    // The objects of the kinds it watches that it writes: their events run nothing again.
    let watched: Vec<ObjectKey> = targets
        .iter()
        .filter(|t| controller.watched.contains_key(t.kind()))
        .cloned()
        .collect();
    controller.own_writes.committing(watched.iter().cloned());
    let committed = controller.context.store.commit(writes).await;
    match &committed {
        Ok(written) => {
            for (target, w) in targets.iter().zip(written) {
                match (controller.watched.get(target.kind()), &w.object, w.change) {
                    (Some(_), Some(object), Some(_)) => {
                        (controller.own_writes).committed(target.clone(), object.meta.revision);
                    }
                    (Some(_), _, _) => controller.own_writes.unchanged([target.clone()]),
                    _ => {}
                }
            }
        }
        Err(_) => controller.own_writes.unchanged(watched),
    }
    match committed {
        Ok(written) => {
            // Later runs read caches only once they show these writes.
            let changed = targets.iter().zip(&written);
            let changed = changed.filter(|(_, w)| w.change.is_some());
            controller
                .keys
                .committed(key, changed.map(|(target, w)| (target.kind(), w.revision)));
            Ok(())
        }
        Err(e) if e.is_conflict() || matches!(e.root(), StoreError::NotFound { .. }) => {
            Err(NotCommitted::Conflict(e.to_string()))
        }
        Err(e @ StoreError::TxnTooLarge(_)) => Err(NotCommitted::TooLarge(format!(
            "cannot commit its writes: {e}"
        ))),
        Err(e) => Err(NotCommitted::Failed(format!(
            "cannot commit its writes: {e}"
        ))),
    }
}
