//! One attached reactor's reconcile loop: its reflectors feed its work queue, its workers run
//! the callbacks, a resync re-runs everything periodically, and it stops when dropped.

use super::agent_status::ReportRelay;
use super::attachment::Attachment;
use super::collector;
use super::context::EngineContext;
use super::options::ControllerOptions;
use super::queue::QueueActivity;
use super::reactor::{Reactor, ReactorInfo};
use super::report_rounds;
use super::rollout::RolloutPlan;
use super::rollout_steps;
use super::trigger::Trigger;
use super::watches;
use super::worker;
use super::{QueueOptions, Reflector, ReflectorEvent, WorkQueue};
use reactor_core::object::ObjectKey;
use reactor_nimbus::AgentReport;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

/// Owners whose agents' reports are delivered at once, per controller.
const REPORT_WORKERS: usize = 2;

/// A running controller of one reactor; it stops when dropped.
pub struct Reconciler {
    run: Arc<Attachment>,
    tasks: Vec<JoinHandle<()>>,
    /// Queues the objects of the rollout started last.
    rollout: parking_lot::Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Reconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciler")
            .field("reactor", &self.run.info.name)
            .finish()
    }
}

impl Drop for Reconciler {
    fn drop(&mut self) {
        self.run.queue.shut_down();
        self.run.relay.shut_down();
        for task in &self.tasks {
            task.abort();
        }
        if let Some(task) = self.rollout.lock().take() {
            task.abort();
        }
    }
}

impl Reconciler {
    pub fn start(
        reactor: Arc<dyn Reactor>,
        context: EngineContext,
        options: ControllerOptions,
    ) -> Self {
        let info = reactor.info();
        let reflectors: HashMap<String, Arc<Reflector>> = info
            .kinds
            .iter()
            .filter_map(|kind| Some((kind.clone(), context.reflectors.acquire(kind)?)))
            .collect();
        let queue_options = |name: String| QueueOptions {
            name,
            backoff: options.backoff,
            max_rate: options.max_rate,
            burst: options.max_rate.max(1.0),
            slow_rate: options.rollout_rate,
        };
        let queue = WorkQueue::new(queue_options(info.name.clone()));
        let relay = ReportRelay::new(queue_options(format!("{}-reports", info.name)));
        let run = Arc::new(Attachment::new(
            reactor, context, reflectors, queue, relay, options,
        ));
        let mut tasks = Vec::new();
        for reflector in run.reflectors.values() {
            tasks.push(tokio::spawn(feed(run.clone(), reflector.clone())));
        }
        for reflector in run.watched.values() {
            tasks.push(tokio::spawn(watches::follow(
                run.clone(),
                reflector.clone(),
            )));
        }
        if let Some(period) = run.info.resync.filter(|p| !p.is_zero()) {
            tasks.push(tokio::spawn(resync(run.clone(), period)));
        }
        for _ in 0..run.options.concurrency.max(1) {
            let run = run.clone();
            tasks.push(tokio::spawn(async move { worker::work(&run).await }));
        }
        for _ in 0..REPORT_WORKERS {
            let run = run.clone();
            tasks.push(tokio::spawn(async move { report_rounds::work(&run).await }));
        }
        if let Some(gained) = run.context.locks.gained() {
            tasks.push(tokio::spawn(regain(run.clone(), gained)));
        }
        Self {
            run,
            tasks,
            rollout: parking_lot::Mutex::new(None),
        }
    }

    /// Rolls `plan.version` out: every object of the reactor's kinds runs again, behind fresh
    /// events, at `rate` per second. Replaces a rollout in progress.
    pub fn start_rollout(&self, plan: RolloutPlan, rate: f64) {
        self.run.queue.set_slow_rate(rate);
        let task = tokio::spawn(rollout_steps::start(self.run.clone(), plan));
        if let Some(previous) = self.rollout.lock().replace(task) {
            previous.abort();
        }
    }

    /// Runs every object of the reactor's kinds this replica owns again, in the slow lane at
    /// the rollout's pace (a failing one keeps its own retries): a version just held as a
    /// shadow compares on all of them.
    pub fn run_all_again(&self) {
        let owned = (self.run.reflectors.values())
            .flat_map(|r| {
                r.names()
                    .into_iter()
                    .map(|name| ObjectKey::new(r.kind(), &name))
            })
            .filter(|key| self.run.context.locks.owns(key))
            .collect();
        rollout_steps::enqueue(&self.run, owned);
    }

    pub fn info(&self) -> &ReactorInfo {
        &self.run.info
    }

    /// Runs the next callbacks on `reactor` (a new version with the same description),
    /// keeping the queue, the backoffs and what was handled.
    pub fn replace_reactor(&self, reactor: Arc<dyn Reactor>) {
        self.run.replace_reactor(reactor);
    }

    /// Hands an agent's report on an item that `owner` published to `on-agent-status`.
    pub fn offer_report(&self, owner: ObjectKey, report: AgentReport) {
        self.run.relay.offer(owner, report);
    }

    /// Rolls up the propagation of `owner`, one of whose items went to an agent now gone.
    pub fn roll_up_propagation(&self, owner: ObjectKey) {
        self.run.relay.roll_up_later(owner);
    }

    /// What its queue holds (see [`WorkQueue::activity`]).
    pub fn activity(&self) -> QueueActivity<ObjectKey> {
        self.run.queue.activity()
    }

    /// Runs `key` now if it waits for a backoff or a requeue.
    pub fn run_now(&self, key: &ObjectKey) -> bool {
        self.run.queue.hurry(key)
    }

    /// Drops the run of `key` due later; it runs again when it changes.
    pub fn cancel_delayed(&self, key: &ObjectKey) -> bool {
        self.run.queue.cancel_delayed(key)
    }

    /// Keys waiting to run now.
    pub fn queue_len(&self) -> usize {
        self.run.queue.len()
    }
}

/// Queues the object of `event` if something a reactor reacts to changed; its own status and
/// finalizer writes do not re-trigger it.
fn offer(run: &Arc<Attachment>, event: &ReflectorEvent) {
    run.secondaries.primary_changed(event);
    let key = event.object().key();
    if matches!(event, ReflectorEvent::Deleted(_)) && !run.secondaries.children_of(&key).is_empty()
    {
        // The owner is gone: so are its children (in the background, like Kubernetes').
        let (run, owner) = (run.clone(), key.clone());
        tokio::spawn(async move { collector::collect_children(&run, &owner).await });
    }
    let now = match event {
        ReflectorEvent::Applied(o) => Some(Trigger::of(o)),
        ReflectorEvent::Deleted(_) => None,
    };
    if run.keys.saw(&key, now) {
        run.queue.add(key);
    }
}

async fn feed(run: Arc<Attachment>, reflector: Arc<Reflector>) {
    let mut events = reflector.subscribe();
    reflector.synced().await;
    run.index_all(&reflector);
    // First sight (also after a restart): reconcile everything from the store.
    run.enqueue_all(&reflector, true);
    // And hand every report on its objects' items to `on-agent-status`: reports that changed
    // while no version of this reactor was attached (a restart, before the component was
    // loaded) were offered to nobody, and one recorded just before a crash may never have
    // been handed over.
    run.context.reports.synced().await;
    replay_reports(&run, &reflector);
    loop {
        match events.recv().await {
            Ok(event) => offer(&run, &event),
            Err(RecvError::Lagged(_)) => {
                run.index_all(&reflector);
                run.enqueue_all(&reflector, false)
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Re-runs everything when this replica gains shards: their objects were skipped until now.
async fn regain(run: Arc<Attachment>, mut gained: tokio::sync::watch::Receiver<u64>) {
    while gained.changed().await.is_ok() {
        for reflector in run.reflectors.values() {
            run.enqueue_all(reflector, true);
            replay_reports(&run, reflector);
        }
        for reflector in run.watched.values() {
            watches::judge_all(&run, reflector).await;
        }
    }
}

/// Hands the reports on the items of the objects this replica owns to `on-agent-status`
/// again: when it gains shards (while another replica owned them, they went there) and when
/// the reactor attaches.
fn replay_reports(run: &Attachment, reflector: &Reflector) {
    for name in reflector.names() {
        let owner = ObjectKey::new(reflector.kind(), &name);
        if !run.context.locks.owns(&owner) {
            continue;
        }
        let Some((component, reports)) = run.context.reports.reports_of(&owner) else {
            continue;
        };
        if component == run.info.name {
            for report in reports {
                run.relay.offer(owner.clone(), report);
            }
        }
    }
}

async fn resync(run: Arc<Attachment>, period: Duration) {
    let mut ticker = tokio::time::interval(period);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        for reflector in run.reflectors.values() {
            for name in reflector.names() {
                let key = ObjectKey::new(reflector.kind(), &name);
                // A failing object retries on its own schedule.
                if run.queue.failures(&key) == 0 {
                    run.keys.force(&key);
                    run.queue.add(key);
                }
            }
        }
    }
}
