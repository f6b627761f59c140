//! One attached reactor: its reflectors feed its work queue; its workers lock the primary
//! object, decide the one callback level state calls for, run it, and record the outcome in
//! the queue (backoff, requeue), the status, the finalizers and the metrics.

use super::agent_status::ReportRelay;
use super::decide::{Decision, decide};
use super::locks::ObjectLocks;
use super::reactor::{Action, Failure, Reactor, ReactorInfo};
use super::status::{self, ReconcileStatus};
use super::{Backoff, QueueOptions, Reflector, ReflectorEvent, Reflectors, WorkQueue};
use crate::object::{Object, ObjectKey};
use crate::store::{Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

/// How a controller runs.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Callbacks running at once (on different objects).
    pub concurrency: usize,
    pub backoff: Backoff,
    /// The most callbacks per second, so a failing reactor cannot spin the CPU.
    pub max_rate: f64,
    /// How soon an object locked by another callback is tried again.
    pub lock_retry: Duration,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            concurrency: 4,
            backoff: Backoff::default(),
            max_rate: 10_000.0,
            lock_retry: Duration::from_millis(20),
        }
    }
}

/// Owners whose agents' reports are delivered at once, per controller.
const REPORT_WORKERS: usize = 2;

/// What every controller of a host shares.
#[derive(Clone)]
pub struct Shared {
    pub store: Arc<dyn Store>,
    pub reflectors: Arc<Reflectors>,
    pub locks: ObjectLocks,
}

/// The finalizer a reactor that handles deletes holds on the objects it watches.
pub fn finalizer_of(reactor: &str) -> String {
    format!("reactor-host/{reactor}")
}

/// What the controller remembers of one object.
#[derive(Debug, Default)]
struct KeyState {
    /// The object as the reactor last handled it successfully.
    handled: Option<Object>,
    /// What the last event showed of the fields a reactor reacts to.
    seen: Option<Fingerprint>,
    /// Run even if nothing changed (resync, requeue-after, first sight).
    forced: bool,
    /// The uid of the object whose `on-delete` succeeded here. Until the reflector sees our
    /// own finalizer removal, its cache still shows that object deleting, with a status that
    /// says it was handled: a run then must only release it, not call `on-delete` again.
    deleted: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Fingerprint {
    generation: u64,
    labels: BTreeMap<String, String>,
    deleting: bool,
}

impl Fingerprint {
    fn of(object: &Object) -> Self {
        Self {
            generation: object.meta.generation,
            labels: object.labels.clone(),
            deleting: object.meta.deleting,
        }
    }
}

struct Inner {
    info: ReactorInfo,
    /// Swapped by a reload that describes itself the same way; calls in flight keep theirs.
    reactor: std::sync::RwLock<Arc<dyn Reactor>>,
    shared: Shared,
    reflectors: HashMap<String, Arc<Reflector>>,
    queue: WorkQueue<ObjectKey>,
    keys: Mutex<HashMap<ObjectKey, KeyState>>,
    /// Agents' reports on the items this reactor's objects published.
    relay: ReportRelay,
    options: ControllerOptions,
}

/// A running controller; it stops when dropped.
pub struct Controller {
    inner: Arc<Inner>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("reactor", &self.inner.info.name)
            .finish()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.inner.queue.shut_down();
        self.inner.relay.shut_down();
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Controller {
    pub fn start(reactor: Arc<dyn Reactor>, shared: Shared, options: ControllerOptions) -> Self {
        let info = reactor.info();
        let reflectors: HashMap<String, Arc<Reflector>> = info
            .kinds
            .iter()
            .filter_map(|kind| Some((kind.clone(), shared.reflectors.acquire(kind)?)))
            .collect();
        let queue = WorkQueue::new(QueueOptions {
            name: info.name.clone(),
            backoff: options.backoff,
            max_rate: options.max_rate,
            burst: options.max_rate.max(1.0),
        });
        let relay = ReportRelay::new(
            &info.name,
            QueueOptions {
                name: format!("{}-reports", info.name),
                backoff: options.backoff,
                max_rate: options.max_rate,
                burst: options.max_rate.max(1.0),
            },
            options.lock_retry,
        );
        let inner = Arc::new(Inner {
            info,
            reactor: std::sync::RwLock::new(reactor),
            shared,
            reflectors,
            queue,
            keys: Mutex::new(HashMap::new()),
            relay,
            options,
        });
        let mut tasks = Vec::new();
        for reflector in inner.reflectors.values() {
            tasks.push(tokio::spawn(feed(inner.clone(), reflector.clone())));
        }
        if let Some(period) = inner.info.resync.filter(|p| !p.is_zero()) {
            tasks.push(tokio::spawn(resync(inner.clone(), period)));
        }
        for _ in 0..inner.options.concurrency.max(1) {
            tasks.push(tokio::spawn(work(inner.clone())));
        }
        for _ in 0..REPORT_WORKERS {
            let inner = inner.clone();
            tasks.push(tokio::spawn(async move {
                inner.relay.work(&inner.shared, || inner.reactor()).await;
            }));
        }
        if let Some(gained) = inner.shared.locks.gained() {
            tasks.push(tokio::spawn(regain(inner.clone(), gained)));
        }
        Self { inner, tasks }
    }

    pub fn info(&self) -> &ReactorInfo {
        &self.inner.info
    }

    /// Runs the next callbacks on `reactor` (a new version with the same description),
    /// keeping the queue, the backoffs and what was handled.
    pub fn replace_reactor(&self, reactor: Arc<dyn Reactor>) {
        *self
            .inner
            .reactor
            .write()
            .unwrap_or_else(|p| p.into_inner()) = reactor;
    }

    /// Hands an agent's report on an item that `owner` published to `on-agent-status`.
    pub fn offer_report(&self, owner: ObjectKey, report: crate::nimbus::AgentReport) {
        self.inner.relay.offer(owner, report);
    }

    /// Keys waiting to run now.
    pub fn queue_len(&self) -> usize {
        self.inner.queue.len()
    }
}

impl Inner {
    fn reactor(&self) -> Arc<dyn Reactor> {
        self.reactor
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectKey, KeyState>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enqueue_all(&self, reflector: &Reflector, forced: bool) {
        for name in reflector.names() {
            let key = ObjectKey::new(reflector.kind(), &name);
            if forced {
                self.keys().entry(key.clone()).or_default().forced = true;
            }
            self.queue.add(key);
        }
    }

    /// Queues the object if something a reactor reacts to changed; its own status and
    /// finalizer writes do not re-trigger it.
    fn offer(&self, event: &ReflectorEvent) {
        let object = event.object();
        let key = object.key();
        let now = match event {
            ReflectorEvent::Applied(o) => Some(Fingerprint::of(o)),
            ReflectorEvent::Deleted(_) => None,
        };
        let relevant = {
            let mut keys = self.keys();
            let state = keys.entry(key.clone()).or_default();
            let relevant = state.seen != now || now.is_none();
            state.seen = now;
            relevant
        };
        if relevant {
            self.queue.add(key);
        }
    }
}

async fn feed(inner: Arc<Inner>, reflector: Arc<Reflector>) {
    let mut events = reflector.subscribe();
    reflector.synced().await;
    // First sight (also after a restart): reconcile everything from the store.
    inner.enqueue_all(&reflector, true);
    loop {
        match events.recv().await {
            Ok(event) => inner.offer(&event),
            Err(RecvError::Lagged(_)) => inner.enqueue_all(&reflector, false),
            Err(RecvError::Closed) => return,
        }
    }
}

/// Re-runs everything when this replica gains shards: their objects were skipped until now.
async fn regain(inner: Arc<Inner>, mut gained: tokio::sync::watch::Receiver<u64>) {
    while gained.changed().await.is_ok() {
        for reflector in inner.reflectors.values() {
            inner.enqueue_all(reflector, true);
        }
    }
}

async fn resync(inner: Arc<Inner>, period: Duration) {
    let mut ticker = tokio::time::interval(period);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        for reflector in inner.reflectors.values() {
            for name in reflector.names() {
                let key = ObjectKey::new(reflector.kind(), &name);
                // A failing object retries on its own schedule.
                if inner.queue.failures(&key) == 0 {
                    inner.keys().entry(key.clone()).or_default().forced = true;
                    inner.queue.add(key);
                }
            }
        }
    }
}

async fn work(inner: Arc<Inner>) {
    while let Some(key) = inner.queue.next().await {
        process(&inner, &key).await;
        inner.queue.done(&key);
    }
}

async fn process(inner: &Inner, key: &ObjectKey) {
    if !inner.shared.locks.owns(key) {
        // Another replica's object: it runs there. Gaining the shard re-enqueues it.
        inner.queue.forget(key);
        return;
    }
    let Some(_guard) = inner.shared.locks.try_lock(key) else {
        inner.queue.add_after(key.clone(), inner.options.lock_retry);
        return;
    };
    let Some(reflector) = inner.reflectors.get(key.kind()) else {
        return;
    };
    let current = reflector.get(key.name());
    let name = inner.info.name.as_str();
    let (handled, forced) = {
        let mut keys = inner.keys();
        let state = keys.entry(key.clone()).or_default();
        let forced = std::mem::take(&mut state.forced);
        let uid = current.as_ref().map(|o| o.meta.uid.as_str());
        if state.deleted.is_some() && state.deleted.as_deref() != uid {
            // Gone, or a new object under the same name: the marker has done its work.
            state.deleted = None;
        }
        let delete_handled = state.deleted.is_some();
        // After a restart nothing is in memory: the status says what was handled.
        let handled = state.handled.clone().or_else(|| {
            if delete_handled {
                // Decides `Release`: the finalizer goes (again, if storing it failed), and
                // `on-delete` is not called twice for one delete.
                return None;
            }
            let object = current.as_ref()?;
            let generation = status::read(object, name)?.observed_generation?;
            let mut last = object.clone();
            last.meta.generation = generation;
            Some(last)
        });
        (handled, forced)
    };
    if inner.info.handles_delete
        && let Some(object) = &current
        && !object.meta.deleting
        && !object.meta.finalizers.contains(&finalizer_of(name))
        && let Err(e) = add_finalizer(inner, object).await
    {
        retry(inner, key, &format!("cannot add the finalizer: {e}")).await;
        return;
    }
    let decision = decide(
        handled.as_ref(),
        current.as_ref(),
        inner.info.handles_delete,
        forced,
    );
    let started = std::time::Instant::now();
    let reactor = inner.reactor();
    let reaction = match &decision {
        Decision::Nothing => {
            inner.queue.forget(key);
            return;
        }
        Decision::Create => match &current {
            Some(object) => reactor.on_create(object).await,
            None => return,
        },
        Decision::Update { old } => match &current {
            Some(object) => reactor.on_update(old, object).await,
            None => return,
        },
        Decision::Delete { last } => reactor.on_delete(last).await,
        Decision::Release => Ok(Action::Done),
    };
    let seconds = started.elapsed().as_secs_f64();
    metrics::histogram!("reconcile_time_seconds", "component" => name.to_owned()).record(seconds);
    let result = match &reaction {
        Ok(Action::Done) => "success",
        Ok(Action::RequeueAfter(_)) => "requeue",
        Err(Failure::Retry(_)) => "error",
        Err(Failure::Permanent(_)) => "permanent",
    };
    metrics::counter!("reconcile_total", "component" => name.to_owned(), "result" => result)
        .increment(1);
    match reaction {
        Ok(action) => succeeded(inner, key, &decision, current, action).await,
        Err(Failure::Retry(message)) => {
            metrics::counter!("reconcile_errors_total", "component" => name.to_owned())
                .increment(1);
            retry(inner, key, &message).await;
        }
        Err(Failure::Permanent(message)) => {
            metrics::counter!("reconcile_errors_total", "component" => name.to_owned())
                .increment(1);
            inner.queue.forget(key);
            let entry = ReconcileStatus {
                observed_generation: handled.map(|h| h.meta.generation),
                attempts: 1,
                last_error: Some(message),
                permanent: true,
                next_retry: None,
            };
            write_status(inner, key, &entry).await;
        }
    }
}

async fn succeeded(
    inner: &Inner,
    key: &ObjectKey,
    decision: &Decision,
    current: Option<Object>,
    action: Action,
) {
    inner.queue.forget(key);
    let deleted = matches!(decision, Decision::Delete { .. } | Decision::Release);
    if deleted {
        {
            let mut keys = inner.keys();
            let state = keys.entry(key.clone()).or_default();
            state.handled = None;
            if let Decision::Delete { last } = decision {
                state.deleted = Some(last.meta.uid.clone());
            }
        }
        // The owner is going: so are the items it published.
        if let Err(e) =
            crate::nimbus::unpublish_all(inner.shared.store.as_ref(), key.kind(), key.name()).await
        {
            retry(
                inner,
                key,
                &format!("cannot withdraw the published items: {e}"),
            )
            .await;
            return;
        }
        if let Some(object) = &current
            && inner.info.handles_delete
            && let Err(e) = remove_finalizer(inner, object).await
        {
            retry(inner, key, &format!("cannot remove the finalizer: {e}")).await;
        }
        return;
    }
    let Some(object) = current else { return };
    let entry = ReconcileStatus {
        observed_generation: Some(object.meta.generation),
        ..ReconcileStatus::default()
    };
    inner.keys().entry(key.clone()).or_default().handled = Some(object);
    write_status(inner, key, &entry).await;
    if let Action::RequeueAfter(delay) = action {
        inner.keys().entry(key.clone()).or_default().forced = true;
        inner.queue.add_after(key.clone(), delay);
    }
}

async fn retry(inner: &Inner, key: &ObjectKey, message: &str) {
    let delay = inner.queue.add_rate_limited(key.clone());
    let attempts = inner.queue.failures(key);
    let observed = inner
        .keys()
        .get(key)
        .and_then(|s| s.handled.as_ref().map(|h| h.meta.generation));
    let next = std::time::SystemTime::now() + delay;
    let entry = ReconcileStatus {
        observed_generation: observed,
        attempts,
        last_error: Some(message.to_owned()),
        permanent: false,
        next_retry: Some(humantime::format_rfc3339_millis(next).to_string()),
    };
    tracing::debug!(reactor = %inner.info.name, object = %key, attempts, ?delay, error = message, "retrying");
    write_status(inner, key, &entry).await;
}

async fn write_status(inner: &Inner, key: &ObjectKey, entry: &ReconcileStatus) {
    let store = inner.shared.store.as_ref();
    if let Err(e) = status::write(store, key.kind(), key.name(), &inner.info.name, entry).await {
        tracing::warn!(reactor = %inner.info.name, object = %key, error = %e, "cannot write the reconcile status");
    }
}

async fn add_finalizer(inner: &Inner, object: &Object) -> Result<(), StoreError> {
    let mine = finalizer_of(&inner.info.name);
    edit_finalizers(inner, object, |list| {
        if !list.contains(&mine) {
            list.push(mine.clone());
        }
    })
    .await
}

async fn remove_finalizer(inner: &Inner, object: &Object) -> Result<(), StoreError> {
    let mine = finalizer_of(&inner.info.name);
    edit_finalizers(inner, object, |list| list.retain(|f| *f != mine)).await
}

/// Changes the finalizer list with compare-and-swap, re-reading on conflict.
async fn edit_finalizers(
    inner: &Inner,
    object: &Object,
    edit: impl Fn(&mut Vec<String>),
) -> Result<(), StoreError> {
    let store = inner.shared.store.as_ref();
    for _ in 0..16 {
        let Some(current) = store.get(&object.kind, &object.name).await? else {
            return Ok(());
        };
        let mut list = current.meta.finalizers.clone();
        edit(&mut list);
        if list == current.meta.finalizers && !(current.meta.deleting && list.is_empty()) {
            return Ok(());
        }
        match store
            .set_finalizers(
                &object.kind,
                &object.name,
                list,
                Some(current.meta.revision),
            )
            .await
        {
            Ok(_) => return Ok(()),
            Err(StoreError::Conflict { .. }) => continue,
            Err(StoreError::NotFound { .. }) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Backend(format!(
        "finalizers of {} kept changing: gave up",
        object.key()
    )))
}
