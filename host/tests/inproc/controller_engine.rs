//! The controller engine's guarantees, with a native reactor that records what it is called
//! with, on the real embedded store: per-object exclusion, edge callbacks from level state,
//! retries with growing backoff, permanent errors, requeue, resync, and finalizers that
//! deliver deletes across a restart, and not twice while the cache lags.

use async_trait::async_trait;
use futures::StreamExt;
use reactor_host::controller::{
    Action, Backoff, Controller, ControllerOptions, Engine, EngineContext, Failure, ObjectLocks,
    Reaction, Reactor, ReactorInfo, Reflectors, Watch, finalizer_of, status,
};
use reactor_host::nimbus::{
    AgentReport, ITEM_KIND, ItemTarget, OWNER_NAME, Owner, ReportState, Reporter, items_of,
    publish, register, unpublish,
};
use reactor_host::object::{ApplyRequest, Object, Revision, Selector};
use reactor_host::store::{
    Applied, EmbeddedStore, EmbeddedStoreOptions, Listing, Shards, Store, StoreError, WatchStream,
};
use reactor_testkit::eventually_async;
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, PartialEq)]
enum Call {
    Create(String, u64),
    Update(String, u64, u64),
    Delete(String),
}

type Script = Box<dyn Fn(&Call, usize) -> Reaction + Send + Sync>;

/// Records calls (with the virtual time they came at) and notices overlapping calls on one object.
struct Recorder {
    info: ReactorInfo,
    calls: Mutex<Vec<(Instant, Call)>>,
    in_flight: Mutex<HashSet<String>>,
    overlaps: Mutex<u32>,
    script: Script,
    work: Duration,
}

impl Recorder {
    fn new(handles_delete: bool, script: Script) -> Arc<Self> {
        Arc::new(Self {
            info: ReactorInfo {
                handles_delete,
                ..things("recorder")
            },
            calls: Mutex::new(Vec::new()),
            in_flight: Mutex::new(HashSet::new()),
            overlaps: Mutex::new(0),
            script,
            work: Duration::ZERO,
        })
    }

    async fn record(&self, call: Call, name: &str) -> Reaction {
        if !self.in_flight.lock().expect("lock").insert(name.to_owned()) {
            *self.overlaps.lock().expect("lock") += 1;
        }
        if !self.work.is_zero() {
            tokio::time::sleep(self.work).await;
        }
        let index = {
            let mut calls = self.calls.lock().expect("lock");
            calls.push((Instant::now(), call.clone()));
            calls.len()
        };
        self.in_flight.lock().expect("lock").remove(name);
        (self.script)(&call, index)
    }

    fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .expect("lock")
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }

    fn times(&self) -> Vec<Instant> {
        self.calls
            .lock()
            .expect("lock")
            .iter()
            .map(|(t, _)| *t)
            .collect()
    }
}

#[async_trait]
impl Reactor for Recorder {
    fn info(&self) -> ReactorInfo {
        self.info.clone()
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, o: &Object) -> Reaction {
        self.record(Call::Create(o.name.clone(), o.meta.generation), &o.name)
            .await
    }
    async fn on_update(&self, old: &Object, new: &Object) -> Reaction {
        self.record(
            Call::Update(new.name.clone(), old.meta.generation, new.meta.generation),
            &new.name,
        )
        .await
    }
    async fn on_delete(&self, o: &Object) -> Reaction {
        self.record(Call::Delete(o.name.clone()), &o.name).await
    }
}

fn ok() -> Script {
    Box::new(|_, _| Ok(Action::Done))
}

struct World {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
    shared: EngineContext,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    let shared = EngineContext::new(store.clone(), ObjectLocks::default());
    World {
        _dir: dir,
        store,
        shared,
    }
}

/// A reactor `name` of `Thing`s, watching nothing else, not handling deletes.
fn things(name: &str) -> ReactorInfo {
    ReactorInfo {
        name: name.into(),
        kinds: vec!["Thing".into()],
        resync: None,
        handles_delete: false,
        watches: Vec::new(),
    }
}

fn thing(name: &str, spec: serde_json::Value) -> ApplyRequest {
    ApplyRequest {
        kind: "Thing".into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec,
        expected_revision: None,
        owner: None,
    }
}

fn options(concurrency: usize) -> ControllerOptions {
    ControllerOptions {
        concurrency,
        backoff: Backoff {
            base: Duration::from_millis(10),
            cap: Duration::from_secs(5),
            jitter: 0.0,
        },
        ..ControllerOptions::default()
    }
}

/// Polls `check` until it holds, failing after ten real seconds (see `eventually_async`).
async fn eventually(what: &str, check: impl FnMut() -> bool) {
    eventually_async(what, Duration::from_secs(10), check).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_two_callbacks_on_one_object_under_concurrency_8() {
    let w = world();
    let mut recorder = Recorder::new(false, ok());
    Arc::get_mut(&mut recorder).expect("unique").work = Duration::from_millis(2);
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), options(8));
    for round in 0..20 {
        let batch: Vec<_> = (0..4)
            .map(|i| thing(&format!("t{i}"), json!({"round": round})))
            .collect();
        w.store.apply(batch).await.expect("apply");
    }
    eventually("every object reaches its last generation", || {
        let calls = recorder.calls();
        (0..4).all(|i| {
            calls
                .iter()
                .any(|c| matches!(c, Call::Update(n, _, 20) if *n == format!("t{i}")))
                || calls
                    .iter()
                    .any(|c| matches!(c, Call::Create(n, 20) if *n == format!("t{i}")))
        })
    })
    .await;
    assert_eq!(
        *recorder.overlaps.lock().expect("lock"),
        0,
        "no overlapping callbacks on one object"
    );
    let calls = recorder.calls();
    assert!(
        calls.len() < 80,
        "changes coalesced: {} calls for 80 changes",
        calls.len()
    );
    for i in 0..4 {
        let name = format!("t{i}");
        let mine: Vec<_> = calls
            .iter()
            .filter(|c| matches!(c, Call::Create(n, _) | Call::Update(n, _, _) if *n == name))
            .collect();
        assert!(
            matches!(mine[0], Call::Create(..)),
            "create first for {name}: {mine:?}"
        );
        let generations: Vec<u64> = mine
            .iter()
            .map(|c| match c {
                Call::Create(_, g) | Call::Update(_, _, g) => *g,
                Call::Delete(_) => 0,
            })
            .collect();
        assert!(
            generations.windows(2).all(|w| w[0] < w[1]),
            "in order for {name}: {generations:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapid_create_update_delete_never_deletes_before_create() {
    let w = world();
    let recorder = Recorder::new(true, ok());
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), options(4));
    for i in 0..20 {
        let name = format!("r{i}");
        w.store
            .apply(vec![thing(&name, json!(1))])
            .await
            .expect("create");
        w.store
            .apply(vec![thing(&name, json!(2))])
            .await
            .expect("update");
        w.store.delete("Thing", &name, None).await.expect("delete");
    }
    // An object created and deleted before the reactor first sees it is never reconciled
    // (as in controller-runtime): under load fewer than 20 are, so wait for the store.
    let store = w.store.clone();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !store
        .list("Thing", &Default::default())
        .await
        .expect("list")
        .items
        .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "objects still held by finalizers"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let calls = recorder.calls();
    for i in 0..20 {
        let name = format!("r{i}");
        let mine: Vec<_> = calls
            .iter()
            .filter(|c| match c {
                Call::Create(n, _) | Call::Update(n, _, _) | Call::Delete(n) => *n == name,
            })
            .collect();
        if let Some(first_delete) = mine.iter().position(|c| matches!(c, Call::Delete(_))) {
            assert!(
                mine[..first_delete]
                    .iter()
                    .any(|c| matches!(c, Call::Create(..))),
                "{name}: delete before create: {mine:?}"
            );
            assert_eq!(
                first_delete,
                mine.len() - 1,
                "{name}: nothing after the delete: {mine:?}"
            );
        }
    }
}

/// Real time: the exact doubling is pinned by the work queue's controlled-time tests; here
/// the whole path (reactor error → backoff → status → retry) is measured on the real store,
/// whose fsyncs would make a paused clock leap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_reactor_is_retried_with_growing_delays_until_it_succeeds() {
    let w = world();
    let recorder = Recorder::new(
        false,
        Box::new(|_, n| {
            if n <= 4 {
                Err(Failure::Retry(format!("not yet ({n})")))
            } else {
                Ok(Action::Done)
            }
        }),
    );
    let mut opts = options(2);
    opts.backoff.base = Duration::from_millis(50);
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), opts);
    w.store
        .apply(vec![thing("flaky", json!(1))])
        .await
        .expect("apply");
    let store = w.store.clone();
    eventually("a failure shows in status", || {
        futures::executor::block_on(store.get("Thing", "flaky"))
            .ok()
            .flatten()
            .and_then(|o| status::read(&o, "recorder"))
            .is_some_and(|s| {
                s.attempts >= 1 && s.last_error.is_some_and(|e| e.starts_with("not yet"))
            })
    })
    .await;
    eventually("the fifth call succeeds", || recorder.calls().len() >= 5).await;
    let times = recorder.times();
    let gaps: Vec<u128> = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect();
    for (gap, min) in gaps.iter().zip([50u128, 100, 200, 400]) {
        assert!(*gap >= min, "each retry waits its backoff: {gaps:?}");
    }
    assert!(gaps.windows(2).all(|w| w[1] > w[0]), "growing: {gaps:?}");
    eventually("status shows success", || {
        futures::executor::block_on(store.get("Thing", "flaky"))
            .ok()
            .flatten()
            .and_then(|o| status::read(&o, "recorder"))
            .is_some_and(|s| {
                s.observed_generation == Some(1) && s.last_error.is_none() && s.attempts == 0
            })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        recorder.calls().len(),
        5,
        "no more calls once it succeeded (status writes do not re-trigger)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_permanent_error_stops_retries_and_shows_in_status() {
    let w = world();
    let recorder = Recorder::new(
        false,
        Box::new(|_, _| Err(Failure::Permanent("bad spec".into()))),
    );
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), options(2));
    w.store
        .apply(vec![thing("broken", json!(1))])
        .await
        .expect("apply");
    let store = w.store.clone();
    eventually("status shows the permanent error", || {
        futures::executor::block_on(store.get("Thing", "broken"))
            .ok()
            .flatten()
            .and_then(|o| status::read(&o, "recorder"))
            .is_some_and(|s| s.permanent && s.last_error.as_deref() == Some("bad spec"))
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(recorder.calls().len(), 1, "not retried");
    w.store
        .apply(vec![thing("broken", json!(2))])
        .await
        .expect("apply");
    eventually("a new spec is tried again", || recorder.calls().len() == 2).await;
}

#[tokio::test(start_paused = true)]
async fn requeue_after_runs_the_object_again() {
    let w = world();
    let recorder = Recorder::new(
        false,
        Box::new(|_, n| {
            Ok(if n < 3 {
                Action::RequeueAfter(Duration::from_secs(2))
            } else {
                Action::Done
            })
        }),
    );
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), options(2));
    w.store
        .apply(vec![thing("poll", json!(1))])
        .await
        .expect("apply");
    eventually("three runs", || recorder.calls().len() >= 3).await;
    let times = recorder.times();
    assert!(
        times[1] - times[0] >= Duration::from_secs(2),
        "requeued after 2s"
    );
    assert!(
        matches!(recorder.calls()[1], Call::Update(_, 1, 1)),
        "a requeue re-runs as an update"
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(recorder.calls().len(), 3, "Done ends the requeues");
}

#[tokio::test(start_paused = true)]
async fn resync_re_runs_every_object_at_its_period() {
    let w = world();
    let mut recorder = Recorder::new(false, ok());
    Arc::get_mut(&mut recorder).expect("unique").info.resync = Some(Duration::from_secs(60));
    let _controller = Controller::start(recorder.clone(), w.shared.clone(), options(2));
    w.store
        .apply(vec![thing("a", json!(1)), thing("b", json!(1))])
        .await
        .expect("apply");
    eventually("created", || recorder.calls().len() >= 2).await;
    tokio::time::sleep(Duration::from_secs(61)).await;
    eventually("resynced", || recorder.calls().len() >= 4).await;
    let calls = recorder.calls();
    assert!(
        calls[2..]
            .iter()
            .all(|c| matches!(c, Call::Update(_, 1, 1))),
        "{calls:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_made_while_no_controller_runs_is_delivered_after_restart() {
    let w = world();
    let recorder = Recorder::new(true, ok());
    let controller = Controller::start(recorder.clone(), w.shared.clone(), options(2));
    w.store
        .apply(vec![thing("keep", json!(1))])
        .await
        .expect("apply");
    let store = w.store.clone();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let object = store
            .get("Thing", "keep")
            .await
            .expect("get")
            .expect("exists");
        if object.meta.finalizers.contains(&finalizer_of("recorder"))
            && status::read(&object, "recorder").and_then(|s| s.observed_generation) == Some(1)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "finalizer and status never written"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(controller);
    let held = w.store.delete("Thing", "keep", None).await.expect("delete");
    assert!(held.expect("held by the finalizer").meta.deleting);

    // A new controller with nothing in memory, as after kill -9.
    let fresh = Recorder::new(true, ok());
    let shared = w
        .shared
        .clone()
        .with_reflectors(Arc::new(Reflectors::new(w.store.clone())));
    let _controller = Controller::start(fresh.clone(), shared, options(2));
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.get("Thing", "keep").await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the object was never released");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(fresh.calls(), vec![Call::Delete("keep".into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_takes_the_next_events_without_restarting_the_controller() {
    let w = world();
    let engine = reactor_host::controller::Engine::new(w.store.clone(), options(2));
    let first = Recorder::new(false, ok());
    engine.attach(first.clone());
    w.store
        .apply(vec![thing("obj", json!(1))])
        .await
        .expect("apply");
    eventually("the first version created it", || {
        first.calls() == vec![Call::Create("obj".into(), 1)]
    })
    .await;

    // The same reactor, reloaded: same name, same description, new logic.
    let second = Recorder::new(false, ok());
    engine.attach(second.clone());
    assert_eq!(engine.attached_names(), vec!["recorder".to_string()]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        second.calls().is_empty(),
        "a kept controller re-runs nothing: {:?}",
        second.calls()
    );

    w.store
        .apply(vec![thing("obj", json!(2))])
        .await
        .expect("apply");
    eventually("the new version gets the next change", || {
        second.calls() == vec![Call::Update("obj".into(), 1, 2)]
    })
    .await;
    assert_eq!(first.calls().len(), 1, "the old version gets nothing more");
    assert!(engine.detach("recorder"));
    assert!(engine.attached_names().is_empty());
}

/// A store whose watch events arrive `lag` late, as a reflector's cache lags the writes of a
/// remote store (etcd), and whose listings of `slow_kind` take `list_lag` (a large kind still
/// loading): reads and writes go straight through.
struct Lagging {
    inner: Arc<dyn Store>,
    /// Every watch event comes this late.
    lag: Duration,
    slow_kind: &'static str,
    /// Listings of `slow_kind` take this long.
    list_lag: Duration,
    /// Watch events of `slow_kind` come this much later again.
    kind_lag: Duration,
}

#[async_trait]
impl Store for Lagging {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        self.inner.get(kind, name).await
    }
    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        if kind == self.slow_kind {
            tokio::time::sleep(self.list_lag).await;
        }
        self.inner.list(kind, selector).await
    }
    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        self.inner.apply(requests).await
    }
    async fn set_status(
        &self,
        kind: &str,
        name: &str,
        status: serde_json::Value,
        expected_revision: Option<Revision>,
    ) -> Result<Object, StoreError> {
        self.inner
            .set_status(kind, name, status, expected_revision)
            .await
    }
    async fn set_finalizers(
        &self,
        kind: &str,
        name: &str,
        finalizers: Vec<String>,
        expected_revision: Option<Revision>,
    ) -> Result<Option<Object>, StoreError> {
        self.inner
            .set_finalizers(kind, name, finalizers, expected_revision)
            .await
    }
    async fn delete(
        &self,
        kind: &str,
        name: &str,
        expected_revision: Option<Revision>,
    ) -> Result<Option<Object>, StoreError> {
        self.inner.delete(kind, name, expected_revision).await
    }
    async fn commit(
        &self,
        writes: Vec<reactor_host::store::Write>,
    ) -> Result<Vec<reactor_host::store::Written>, StoreError> {
        self.inner.commit(writes).await
    }
    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        let mut lag = self.lag;
        if kind == Some(self.slow_kind) {
            lag += self.kind_lag;
        }
        let stream = self.inner.watch(kind, from).await?;
        Ok(stream
            .then(move |event| async move {
                tokio::time::sleep(lag).await;
                event
            })
            .boxed())
    }
    async fn revision(&self) -> Result<Revision, StoreError> {
        self.inner.revision().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handled_delete_is_not_handled_again_while_the_cache_still_shows_the_object() {
    let w = world();
    let lag = Duration::from_millis(400);
    let lagging: Arc<dyn Store> = Arc::new(Lagging {
        inner: w.store.clone(),
        lag,
        slow_kind: "",
        list_lag: Duration::ZERO,
        kind_lag: Duration::ZERO,
    });
    let shared = w
        .shared
        .clone()
        .with_reflectors(Arc::new(Reflectors::new(lagging)));
    // Resyncs far more often than the cache catches up: runs on the object keep coming while
    // the cache still shows it deleting after our own finalizer removal released it.
    let mut recorder = Recorder::new(true, ok());
    Arc::get_mut(&mut recorder).expect("unique").info.resync = Some(Duration::from_millis(20));
    let _controller = Controller::start(recorder.clone(), shared, options(2));
    w.store
        .apply(vec![thing("keep", json!(1))])
        .await
        .expect("apply");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let object = w.store.get("Thing", "keep").await.expect("get");
        let object = object.expect("exists");
        if object.meta.finalizers.contains(&finalizer_of("recorder"))
            && status::read(&object, "recorder").and_then(|s| s.observed_generation) == Some(1)
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never handled");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    w.store.delete("Thing", "keep", None).await.expect("delete");
    eventually("on-delete ran", || {
        recorder.calls().contains(&Call::Delete("keep".into()))
    })
    .await;
    // Past the window in which the cache still shows the object, and then some.
    tokio::time::sleep(lag * 3).await;
    assert!(
        w.store.get("Thing", "keep").await.expect("get").is_none(),
        "released"
    );
    let deletes = recorder
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Delete(_)))
        .count();
    assert_eq!(
        deletes,
        1,
        "on-delete ran {deletes} times for one delete: {:?}",
        recorder.calls()
    );
}

/// A reactor of `Tenant`s naming a `Plan` in `spec.plan`, which it watches, and reads from the
/// engine's cache as a guest's `get` does; records whether each call found the Plan.
struct PlanReader {
    reflectors: Arc<Reflectors>,
    found: Mutex<Vec<bool>>,
}

impl PlanReader {
    fn read(&self, tenant: &Object) -> Reaction {
        let plan = tenant.spec["plan"].as_str().unwrap_or_default();
        let found = self
            .reflectors
            .acquire("Plan")
            .is_some_and(|plans| plans.get(plan).is_some());
        self.found.lock().expect("lock").push(found);
        Ok(Action::Done)
    }
}

#[async_trait]
impl Reactor for PlanReader {
    fn info(&self) -> ReactorInfo {
        ReactorInfo {
            name: "tenants".into(),
            kinds: vec!["Tenant".into()],
            resync: None,
            handles_delete: false,
            watches: vec![Watch::References {
                kind: "Plan".into(),
                path: "spec.plan".into(),
            }],
        }
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, object: &Object) -> Reaction {
        self.read(object)
    }
    async fn on_update(&self, _: &Object, new: &Object) -> Reaction {
        self.read(new)
    }
    async fn on_delete(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_callback_runs_before_the_watched_kinds_cache_has_loaded() {
    let w = world();
    let object = |kind: &str, name: &str, spec| ApplyRequest {
        kind: kind.into(),
        ..thing(name, spec)
    };
    // Both exist before the engine starts (a restart); the Plans take a while to list.
    w.store
        .apply(vec![
            object("Plan", "gold", json!({"seats": 5})),
            object("Tenant", "acme", json!({"plan": "gold"})),
        ])
        .await
        .expect("apply");
    let slow: Arc<dyn Store> = Arc::new(Lagging {
        inner: w.store.clone(),
        lag: Duration::ZERO,
        slow_kind: "Plan",
        list_lag: Duration::from_millis(300),
        kind_lag: Duration::ZERO,
    });
    let reflectors = Arc::new(Reflectors::new(slow));
    let shared = w.shared.clone().with_reflectors(reflectors.clone());
    let reader = Arc::new(PlanReader {
        reflectors,
        found: Mutex::new(Vec::new()),
    });
    let _controller = Controller::start(reader.clone(), shared, options(2));
    eventually("the Tenant was reconciled", || {
        !reader.found.lock().expect("lock").is_empty()
    })
    .await;
    // Had the Tenant run on the Plans' empty cache, it would have seen no Plan, and the Plan
    // arriving in the first listing runs nobody again.
    assert_eq!(reader.found.lock().expect("lock").first(), Some(&true));
}

/// A reactor of `Thing`s that records the agents' reports it is handed.
#[derive(Default)]
struct ReportListener {
    heard: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl Reactor for ReportListener {
    fn info(&self) -> ReactorInfo {
        things("recorder")
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
    async fn on_update(&self, _: &Object, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
    async fn on_delete(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
    async fn on_agent_status(&self, owner: &Object, report: &AgentReport) -> Reaction {
        let heard = (owner.name.clone(), report.agent.clone());
        self.heard.lock().expect("lock").push(heard);
        Ok(Action::Done)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_gains_a_shard_hands_over_the_reports_it_skipped() {
    let w = world();
    let shards = Shards::new(1);
    let engine = Engine::with_locks(
        w.store.clone(),
        options(2),
        ObjectLocks::sharded(shards.clone()),
    );
    let listener = Arc::new(ReportListener::default());
    engine.attach(listener.clone());
    w.store
        .apply(vec![thing("obj", json!(1))])
        .await
        .expect("apply");
    let owner = Owner {
        kind: "Thing".into(),
        name: "obj".into(),
        component: "recorder".into(),
    };
    let everyone = ItemTarget::Labels(Default::default());
    publish(w.store.as_ref(), &owner, "thing/obj", json!(1), everyone)
        .await
        .expect("publish");
    // The report arrives while another replica owns the object's shard: not for us.
    let reporter = Reporter::start(w.store.clone(), engine.context().reports.clone());
    let report = AgentReport {
        key: "thing/obj".into(),
        agent: "edge-1".into(),
        state: ReportState::Applied,
        message: None,
        revision: 1,
    };
    assert_eq!(reporter.record(vec![report]).await.expect("record"), 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(listener.heard.lock().expect("lock").is_empty());
    // The other replica went; this one gains the shard and hears the report it skipped.
    shards.gain(0);
    eventually("the report was handed over", || {
        *listener.heard.lock().expect("lock") == vec![("obj".to_owned(), "edge-1".to_owned())]
    })
    .await;
}

/// What one `on-agent-status` call of [`StatusWriter`] does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hook {
    /// Another writer changes the owner meanwhile, then the call writes as `Pass` does.
    Race,
    /// The call fails, to be retried.
    Fail,
    /// The call writes the reporting agent to the owner's `status.heard`.
    Pass,
}

/// A reactor of `Thing`s that publishes one item per Thing for every agent and, in
/// `on-agent-status`, does what `hook` says for each call (counted from 1), remembering the
/// owner's status as each call saw it.
struct StatusWriter {
    context: EngineContext,
    seen: Mutex<Vec<serde_json::Value>>,
    hook: Box<dyn Fn(usize) -> Hook + Send + Sync>,
}

impl StatusWriter {
    fn seen(&self) -> Vec<serde_json::Value> {
        self.seen.lock().expect("lock").clone()
    }
}

#[async_trait]
impl Reactor for StatusWriter {
    fn info(&self) -> ReactorInfo {
        things("writer")
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, object: &Object) -> Reaction {
        let store = self.context.store_for("writer", &object.key());
        let owner = Owner {
            kind: object.kind.clone(),
            name: object.name.clone(),
            component: "writer".into(),
        };
        let everyone = ItemTarget::Labels(Default::default());
        let key = format!("thing/{}", object.name);
        publish(store.as_ref(), &owner, &key, json!(1), everyone)
            .await
            .map_err(|e| Failure::Retry(e.to_string()))?;
        Ok(Action::Done)
    }
    async fn on_update(&self, _: &Object, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
    async fn on_delete(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
    async fn on_agent_status(&self, owner: &Object, report: &AgentReport) -> Reaction {
        let call = {
            let mut seen = self.seen.lock().expect("lock");
            seen.push(owner.status.clone());
            seen.len()
        };
        let failed = |e: StoreError| Failure::Retry(e.to_string());
        match (self.hook)(call) {
            Hook::Fail => return Err(Failure::Retry("the device is not ready".into())),
            Hook::Race => {
                // Another writer, past the callback's transaction: its commit must lose.
                let touched = |s: &serde_json::Value| with_key(s, "touched", json!(call));
                status::update_status(
                    self.context.store.as_ref(),
                    &owner.kind,
                    &owner.name,
                    touched,
                )
                .await
                .map_err(failed)?;
            }
            Hook::Pass => {}
        }
        let store = self.context.store_for("writer", &owner.key());
        let heard = |s: &serde_json::Value| with_key(s, "heard", json!(report.agent));
        status::update_status(store.as_ref(), &owner.kind, &owner.name, heard)
            .await
            .map_err(failed)?;
        Ok(Action::Done)
    }
}

fn with_key(status: &serde_json::Value, key: &str, value: serde_json::Value) -> serde_json::Value {
    let mut status = status.as_object().cloned().unwrap_or_default();
    status.insert(key.to_owned(), value);
    serde_json::Value::Object(status)
}

/// An engine with `StatusWriter` attached, agent `edge-1` registered, and Thing `obj` created
/// and reconciled (its item published).
async fn writer_world(
    hook: Box<dyn Fn(usize) -> Hook + Send + Sync>,
) -> (World, Arc<Engine>, Arc<StatusWriter>) {
    let w = world();
    let engine = Engine::new(w.store.clone(), options(2));
    let labels = [("role".to_owned(), "edge".to_owned())]
        .into_iter()
        .collect();
    register(w.store.as_ref(), "edge-1", labels)
        .await
        .expect("register");
    let writer = Arc::new(StatusWriter {
        context: engine.context().clone(),
        seen: Mutex::new(Vec::new()),
        hook,
    });
    engine.attach(writer.clone());
    w.store
        .apply(vec![thing("obj", json!(1))])
        .await
        .expect("apply");
    status_until(&w, "obj reconciled", |s| {
        s["reconcile"]["writer"]["observedGeneration"] == 1
    })
    .await;
    (w, engine, writer)
}

/// Polls Thing `obj`'s status until `check` holds, failing after ten seconds.
async fn status_until(
    w: &World,
    what: &str,
    check: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let object = w
            .store
            .get("Thing", "obj")
            .await
            .expect("get")
            .expect("exists");
        if check(&object.status) {
            return object.status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {}",
            object.status
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Agent `edge-1` reports Thing `obj`'s item applied.
async fn report_applied(w: &World, engine: &Engine) -> Reporter {
    let reporter = Reporter::start(w.store.clone(), engine.context().reports.clone());
    let report = AgentReport {
        key: "thing/obj".into(),
        agent: "edge-1".into(),
        state: ReportState::Applied,
        message: None,
        revision: 1,
    };
    assert_eq!(reporter.record(vec![report]).await.expect("record"), 1);
    reporter
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_round_that_loses_a_race_runs_again_and_commits_once_with_the_roll_up() {
    let hook = |call: usize| if call == 1 { Hook::Race } else { Hook::Pass };
    let (w, engine, writer) = writer_world(Box::new(hook)).await;
    let from = w.store.revision().await.expect("revision");
    let _reporter = report_applied(&w, &engine).await;
    status_until(&w, "the report's round landed", |s| {
        s["heard"] == "edge-1" && s["propagation"]["updated"] == 1
    })
    .await;
    // Whatever else would be written is, by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let until = w.store.revision().await.expect("revision");
    let mut events = w.store.watch(Some("Thing"), from).await.expect("watch");
    let mut written = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(2), events.next()).await {
        let event = event.expect("event");
        if let Some(object) = event.object.as_ref().filter(|o| o.name == "obj") {
            written.push(object.status.clone());
        }
        if event.revision >= until {
            break;
        }
    }
    // The other writer's change, then the round: the callback's write and the roll-up
    // together, with the status entry untouched.
    assert_eq!(written.len(), 2, "{written:#?}");
    assert_eq!(written[0]["touched"], 1);
    assert!(written[0].get("heard").is_none());
    assert!(written[0].get("propagation").is_none());
    let round = &written[1];
    assert_eq!(
        (&round["touched"], &round["heard"]),
        (&json!(1), &json!("edge-1"))
    );
    assert_eq!(round["propagation"]["updated"], 1);
    assert_eq!(round["propagation"]["pending"], 0);
    assert_eq!(
        round["reconcile"]["writer"],
        json!({"observedGeneration": 1, "attempts": 0})
    );
    // The call ran again at once, on the owner as the other writer left it.
    let seen = writer.seen();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen[0].get("touched").is_none());
    assert_eq!(seen[1]["touched"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_on_agent_status_shows_in_the_owners_entry_until_it_succeeds() {
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let fails = failing.clone();
    let hook = move |_| match fails.load(std::sync::atomic::Ordering::SeqCst) {
        true => Hook::Fail,
        false => Hook::Pass,
    };
    let (w, engine, _writer) = writer_world(Box::new(hook)).await;
    let _reporter = report_applied(&w, &engine).await;
    let status = status_until(&w, "the failure in the entry", |s| {
        s["reconcile"]["writer"]["attempts"].as_u64() >= Some(2)
    })
    .await;
    let entry = &status["reconcile"]["writer"];
    assert_eq!(entry["callback"], "on-agent-status", "{status}");
    assert_eq!(entry["lastError"], "the device is not ready");
    assert!(entry["nextRetry"].is_string(), "{status}");
    assert_eq!(entry["observedGeneration"], 1, "the reconcile's is kept");
    // The roll-up does not wait for the callback to succeed.
    assert_eq!(status["propagation"]["updated"], 1, "{status}");
    assert!(status.get("heard").is_none());
    failing.store(false, std::sync::atomic::Ordering::SeqCst);
    let status = status_until(&w, "the failure cleared", |s| s["heard"] == "edge-1").await;
    assert_eq!(
        status["reconcile"]["writer"],
        json!({"observedGeneration": 1, "attempts": 0}),
        "{status}"
    );
}

/// Publishes an item per name in `spec.rules` and withdraws those it published before that
/// are gone, as the Policy example does, through the callback's store as a guest's host
/// calls go.
struct RulePublisher {
    context: EngineContext,
}

impl RulePublisher {
    async fn sync(&self, object: &Object) -> Reaction {
        let store = self.context.store_for("publisher", &object.key());
        let store = store.as_ref();
        let owner = Owner {
            kind: object.kind.clone(),
            name: object.name.clone(),
            component: "publisher".into(),
        };
        let failed = |e: reactor_host::nimbus::NimbusError| Failure::Retry(e.to_string());
        let rules = object.spec["rules"].as_array().cloned().unwrap_or_default();
        let wanted: Vec<String> = (rules.iter())
            .filter_map(|rule| Some(format!("{}/{}", object.name, rule.as_str()?)))
            .collect();
        let published = items_of(store, &owner.kind, &owner.name, "").await;
        for (_, item) in published.map_err(failed)? {
            if !wanted.contains(&item.key) {
                unpublish(store, &owner, &item.key).await.map_err(failed)?;
            }
        }
        for key in wanted {
            let to = ItemTarget::Labels(Default::default());
            publish(store, &owner, &key, json!(1), to)
                .await
                .map_err(failed)?;
        }
        Ok(Action::Done)
    }
}

#[async_trait]
impl Reactor for RulePublisher {
    fn info(&self) -> ReactorInfo {
        things("publisher")
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, object: &Object) -> Reaction {
        self.sync(object).await
    }
    async fn on_update(&self, _: &Object, new: &Object) -> Reaction {
        self.sync(new).await
    }
    async fn on_delete(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
}

/// The engine of `w` with its items' cache 400 ms behind the store (the Things' is not), the
/// items indexed by owner as the engine's are.
fn items_lagging(w: &World) -> EngineContext {
    let lagging: Arc<dyn Store> = Arc::new(Lagging {
        inner: w.store.clone(),
        lag: Duration::ZERO,
        slow_kind: ITEM_KIND,
        list_lag: Duration::ZERO,
        kind_lag: Duration::from_millis(400),
    });
    let reflectors = Reflectors::new(lagging).indexing(ITEM_KIND, OWNER_NAME);
    w.shared.clone().with_reflectors(Arc::new(reflectors))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_reading_the_item_cache_sees_what_its_last_commit_published() {
    let w = world();
    let shared = items_lagging(&w);
    // Held as the engine holds it: callbacks read items from it.
    let _items = shared.reflectors.acquire(ITEM_KIND);
    let publisher = Arc::new(RulePublisher {
        context: shared.clone(),
    });
    let _controller = Controller::start(publisher, shared, options(2));
    let store = w.store.clone();
    let reconciled = |generation: u64| {
        let store = store.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let object = store.get("Thing", "p").await.expect("get").expect("exists");
                let status = status::read(&object, "publisher");
                if status.and_then(|s| s.observed_generation) == Some(generation) {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "generation {generation} never handled"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    w.store
        .apply(vec![thing("p", json!({"rules": ["a", "b"]}))])
        .await
        .expect("apply");
    reconciled(1).await;
    // At once, while the cache does not show a and b yet: the next run must withdraw them.
    w.store
        .apply(vec![thing("p", json!({"rules": ["c"]}))])
        .await
        .expect("apply");
    reconciled(2).await;
    let keys: Vec<String> = items_of(w.store.as_ref(), "Thing", "p", "")
        .await
        .expect("items")
        .into_iter()
        .map(|(_, item)| item.key)
        .collect();
    assert_eq!(keys, ["p/c"], "the rules withdrawn are withdrawn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_the_lagging_cache_does_not_show_yet_is_not_taken_from_its_owner() {
    let w = world();
    let shared = items_lagging(&w);
    let items = shared.reflectors.acquire(ITEM_KIND).expect("reflector");
    items.synced().await;
    // Another object publishes the key the Thing will want, just before the Thing comes.
    let other = Owner {
        kind: "Other".into(),
        name: "x".into(),
        component: "someone".into(),
    };
    let to = ItemTarget::Labels(Default::default());
    publish(w.store.as_ref(), &other, "p/a", json!(0), to)
        .await
        .expect("publish");
    let publisher = Arc::new(RulePublisher {
        context: shared.clone(),
    });
    let _controller = Controller::start(publisher, shared, options(2));
    w.store
        .apply(vec![thing("p", json!({"rules": ["a"]}))])
        .await
        .expect("apply");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let error = loop {
        let object = w
            .store
            .get("Thing", "p")
            .await
            .expect("get")
            .expect("exists");
        if let Some(error) = status::read(&object, "publisher").and_then(|s| s.last_error) {
            break error;
        }
        assert!(std::time::Instant::now() < deadline, "never refused");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(error.contains("belongs to Other/x"), "{error}");
    let items = items_of(w.store.as_ref(), "Other", "x", "")
        .await
        .expect("items");
    assert_eq!(items.len(), 1, "still the other object's");
    assert_eq!(items[0].1.value, json!(0), "unchanged");
}
