//! A controller, the engine's unit per reactor: its reflectors feed its work queue, its
//! workers run the callbacks, a resync re-runs everything periodically, and it stops when
//! dropped.

pub(crate) mod parts;

use crate::commit::collector;
use crate::controller::parts::ControllerParts;
use crate::engine::context::EngineContext;
use crate::engine::options::ControllerOptions;
use crate::queue::QueueActivity;
use crate::reactor::{Reactor, ReactorInfo};
use crate::reports::relay::ReportRelay;
use crate::reports::rounds;
use crate::rollout::state::RolloutPlan;
use crate::rollout::steps;
use crate::run::worker;
use crate::watch::trigger::Trigger;
use crate::watch::watches;
use crate::{QueueOptions, Reflector, ReflectorEvent, WorkQueue};
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
pub struct Controller {
    parts: Arc<ControllerParts>,
    tasks: Vec<JoinHandle<()>>,
    /// Queues the objects of the rollout started last.
    rollout: parking_lot::Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("reactor", &self.parts.info.name)
            .finish()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.parts.queue.shut_down();
        self.parts.relay.shut_down();
        for task in &self.tasks {
            task.abort();
        }
        if let Some(task) = self.rollout.lock().take() {
            task.abort();
        }
    }
}

impl Controller {
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
        let controller = Arc::new(ControllerParts::new(
            reactor, context, reflectors, queue, relay, options,
        ));
        let mut tasks = Vec::new();
        for reflector in controller.reflectors.values() {
            tasks.push(tokio::spawn(feed(controller.clone(), reflector.clone())));
        }
        for reflector in controller.watched.values() {
            tasks.push(tokio::spawn(watches::follow(
                controller.clone(),
                reflector.clone(),
            )));
        }
        if let Some(period) = controller.info.resync.filter(|p| !p.is_zero()) {
            tasks.push(tokio::spawn(resync(controller.clone(), period)));
        }
        for _ in 0..controller.options.concurrency.max(1) {
            let controller = controller.clone();
            tasks.push(tokio::spawn(async move { worker::work(&controller).await }));
        }
        for _ in 0..REPORT_WORKERS {
            let controller = controller.clone();
            tasks.push(tokio::spawn(async move { rounds::work(&controller).await }));
        }
        if let Some(gained) = controller.context.locks.gained() {
            tasks.push(tokio::spawn(regain(controller.clone(), gained)));
        }
        Self {
            parts: controller,
            tasks,
            rollout: parking_lot::Mutex::new(None),
        }
    }

    /// Rolls `plan.version` out: every object of the reactor's kinds runs again, behind fresh
    /// events, at `rate` per second. Replaces a rollout in progress.
    pub fn start_rollout(&self, plan: RolloutPlan, rate: f64) {
        self.parts.queue.set_slow_rate(rate);
        let task = tokio::spawn(steps::start(self.parts.clone(), plan));
        if let Some(previous) = self.rollout.lock().replace(task) {
            previous.abort();
        }
    }

    /// Runs every object of the reactor's kinds this replica owns again, in the slow lane at
    /// the rollout's pace (a failing one keeps its own retries): a version just held as a
    /// shadow compares on all of them.
    pub fn run_all_again(&self) {
        let owned = (self.parts.reflectors.values())
            .flat_map(|r| {
                r.names()
                    .into_iter()
                    .map(|name| ObjectKey::new(r.kind(), &name))
            })
            .filter(|key| self.parts.context.locks.owns(key))
            .collect();
        steps::enqueue(&self.parts, owned);
    }

    /// The version serving now.
    pub fn reactor(&self) -> Arc<dyn Reactor> {
        self.parts.reactor()
    }

    /// Callbacks this controller runs at once.
    pub fn concurrency(&self) -> usize {
        self.parts.options.concurrency
    }

    pub fn info(&self) -> &ReactorInfo {
        &self.parts.info
    }

    /// Runs the next callbacks on `reactor` (a new version with the same description),
    /// keeping the queue, the backoffs and what was handled.
    pub fn replace_reactor(&self, reactor: Arc<dyn Reactor>) {
        self.parts.replace_reactor(reactor);
    }

    /// Hands an agent's report on an item that `owner` published to `on-agent-status`.
    pub fn offer_report(&self, owner: ObjectKey, report: AgentReport) {
        self.parts.relay.offer(owner, report);
    }

    /// Rolls up the propagation of `owner`, one of whose items went to an agent now gone.
    pub fn roll_up_propagation(&self, owner: ObjectKey) {
        self.parts.relay.roll_up_later(owner);
    }

    /// What its queue holds (see [`WorkQueue::activity`]).
    pub fn activity(&self) -> QueueActivity<ObjectKey> {
        self.parts.queue.activity()
    }

    /// Runs `key` now if it waits for a backoff or a requeue.
    pub fn run_now(&self, key: &ObjectKey) -> bool {
        self.parts.queue.hurry(key)
    }

    /// Drops the run of `key` due later; it runs again when it changes.
    pub fn cancel_delayed(&self, key: &ObjectKey) -> bool {
        self.parts.queue.cancel_delayed(key)
    }

    /// Keys waiting to run now.
    pub fn queue_len(&self) -> usize {
        self.parts.queue.len()
    }
}

/// Queues the object of `event` if something a reactor reacts to changed; its own status and
/// finalizer writes do not re-trigger it.
fn offer(controller: &Arc<ControllerParts>, event: &ReflectorEvent) {
    controller.secondaries.primary_changed(event);
    let key = event.object().key();
    if matches!(event, ReflectorEvent::Deleted(_))
        && !controller.secondaries.children_of(&key).is_empty()
    {
        // The owner is gone: so are its children (in the background, like Kubernetes').
        let (controller, owner) = (controller.clone(), key.clone());
        tokio::spawn(async move { collector::collect_children(&controller, &owner).await });
    }
    let now = match event {
        ReflectorEvent::Applied(o) => Some(Trigger::of(o)),
        ReflectorEvent::Deleted(_) => None,
    };
    if controller.keys.saw(&key, now) {
        controller.queue.add(key);
    }
}

async fn feed(controller: Arc<ControllerParts>, reflector: Arc<Reflector>) {
    let mut events = reflector.subscribe();
    reflector.synced().await;
    controller.index_all(&reflector);
    // First sight (also after a restart): reconcile everything from the store.
    controller.enqueue_all(&reflector, true);
    // And hand every report on its objects' items to `on-agent-status`: reports that changed
    // while no version of this reactor was attached (a restart, before the component was
    // loaded) were offered to nobody, and one recorded just before a crash may never have
    // been handed over.
    controller.context.reports.synced().await;
    replay_reports(&controller, &reflector);
    loop {
        match events.recv().await {
            Ok(event) => offer(&controller, &event),
            Err(RecvError::Lagged(_)) => {
                controller.index_all(&reflector);
                controller.enqueue_all(&reflector, false)
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Re-runs everything when this replica gains shards: their objects were skipped until now.
async fn regain(controller: Arc<ControllerParts>, mut gained: tokio::sync::watch::Receiver<u64>) {
    while gained.changed().await.is_ok() {
        for reflector in controller.reflectors.values() {
            controller.enqueue_all(reflector, true);
            replay_reports(&controller, reflector);
        }
        for reflector in controller.watched.values() {
            watches::judge_all(&controller, reflector).await;
        }
    }
}

/// Hands the reports on the items of the objects this replica owns to `on-agent-status`
/// again: when it gains shards (while another replica owned them, they went there) and when
/// the reactor attaches.
fn replay_reports(controller: &ControllerParts, reflector: &Reflector) {
    for name in reflector.names() {
        let owner = ObjectKey::new(reflector.kind(), &name);
        if !controller.context.locks.owns(&owner) {
            continue;
        }
        let Some((component, reports)) = controller.context.reports.reports_of(&owner) else {
            continue;
        };
        if component == controller.info.name {
            for report in reports {
                controller.relay.offer(owner.clone(), report);
            }
        }
    }
}

async fn resync(controller: Arc<ControllerParts>, period: Duration) {
    let mut ticker = tokio::time::interval(period);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        for reflector in controller.reflectors.values() {
            for name in reflector.names() {
                let key = ObjectKey::new(reflector.kind(), &name);
                // A failing object retries on its own schedule.
                if controller.queue.failures(&key) == 0 {
                    controller.keys.force(&key);
                    controller.queue.add(key);
                }
            }
        }
    }
}
