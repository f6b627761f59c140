//! A rollout's pace with controlled time, on the testkit's in-memory store (the embedded
//! store commits on a thread of its own, which paused time cannot wait for): the objects are
//! run again by the new version at the rate asked, each records that version in its status,
//! and a fresh object created mid-rollout is not held behind it. A shadow version's call
//! does not hold the serving version's commit back, and reads what the serving run read.

use async_trait::async_trait;
use reactor_host::controller::{
    Action, Controller, ControllerOptions, EngineContext, Failure, ObjectLocks, Reaction, Reactor,
    ReactorInfo, RolloutPlan, RolloutSink, ShadowOutcome, ShadowStep, shadow_callback_name, status,
};
use reactor_host::object::{ApplyRequest, Object, Selector};
use reactor_host::runtime::{RolloutInfo, RolloutPhase};
use reactor_host::store::{Store, update_status};
use reactor_testkit::{MemStore, eventually_async};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// When which object was run by which version.
type Runs = Arc<Mutex<Vec<(Instant, String, &'static str)>>>;

/// A reactor at one version: records when it ran which object.
struct Versioned {
    version: &'static str,
    runs: Runs,
}

impl Versioned {
    fn new(version: &'static str, runs: &Runs) -> Arc<Self> {
        Arc::new(Self {
            version,
            runs: runs.clone(),
        })
    }

    fn run(&self, object: &Object) -> Reaction {
        let mut runs = self.runs.lock().expect("lock");
        runs.push((Instant::now(), object.name.clone(), self.version));
        Ok(Action::Done)
    }
}

#[async_trait]
impl Reactor for Versioned {
    fn info(&self) -> ReactorInfo {
        ReactorInfo {
            name: "versioned".into(),
            kinds: vec!["Thing".into()],
            resync: None,
            handles_delete: false,
            watches: Vec::new(),
        }
    }
    fn pin(&self) -> Option<(Arc<dyn Reactor>, String)> {
        let me = Versioned {
            version: self.version,
            runs: self.runs.clone(),
        };
        Some((Arc::new(me), self.version.to_owned()))
    }
    async fn validate(&self, _: &Object) -> Result<(), String> {
        Ok(())
    }
    async fn on_create(&self, o: &Object) -> Reaction {
        self.run(o)
    }
    async fn on_update(&self, _: &Object, new: &Object) -> Reaction {
        self.run(new)
    }
    async fn on_delete(&self, _: &Object) -> Reaction {
        Ok(Action::Done)
    }
}

#[derive(Default)]
struct Progress(Mutex<Vec<RolloutInfo>>);

impl Progress {
    /// The newest progress reported.
    fn last(&self) -> RolloutInfo {
        let reports = self.0.lock().expect("lock");
        reports.last().cloned().expect("progress")
    }
}

impl RolloutSink for Progress {
    fn progress(&self, info: RolloutInfo) {
        self.0.lock().expect("lock").push(info);
    }
    fn roll_back(&self, _: &str, _: String) {}
}

fn thing(name: &str) -> ApplyRequest {
    ApplyRequest {
        kind: "Thing".into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::json!({}),
        expected_revision: None,
        owner: None,
    }
}

/// How many runs `version` made.
fn count(runs: &Runs, version: &str) -> usize {
    let runs = runs.lock().expect("lock");
    runs.iter().filter(|r| r.2 == version).count()
}

/// `n` Things on an in-memory store, each created by version v1 of the reactor.
async fn started_at_v1(n: usize) -> (Arc<dyn Store>, Runs, Controller) {
    let store: Arc<dyn Store> = Arc::new(MemStore::default());
    let requests = (0..n).map(|i| thing(&format!("t{i:03}"))).collect();
    store.apply(requests).await.expect("apply");
    let runs: Runs = Arc::default();
    let context = EngineContext::new(store.clone(), ObjectLocks::default());
    let controller = Controller::start(
        Versioned::new("v1", &runs),
        context,
        ControllerOptions::default(),
    );
    eventually_async("v1 created every object", Duration::from_secs(20), || {
        count(&runs, "v1") == n
    })
    .await;
    (store, runs, controller)
}

#[tokio::test(start_paused = true)]
async fn a_rollout_runs_every_object_at_its_pace_and_fresh_objects_go_first() {
    let n = 100;
    let (store, runs, controller) = started_at_v1(n).await;
    let count = |version: &str| count(&runs, version);

    controller.replace_reactor(Versioned::new("v2", &runs));
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    controller.start_rollout(
        RolloutPlan {
            version: "v2".into(),
            previous: Some("v1".into()),
            canary: None,
            sink: progress.clone(),
        },
        20.0,
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rolled = count("v2");
    assert!(
        (30..=50).contains(&rolled),
        "20 a second: about 40 after 2 s, not {rolled}"
    );
    let fresh_at = Instant::now();
    store.apply(vec![thing("fresh")]).await.expect("apply");
    eventually_async("v2 ran every object", Duration::from_secs(20), || {
        count("v2") == n + 1
    })
    .await;
    let runs = runs.lock().expect("lock").clone();
    let fresh = runs
        .iter()
        .find(|r| r.1 == "fresh")
        .map(|r| r.0 - fresh_at)
        .expect("the fresh object ran");
    assert!(
        fresh < Duration::from_millis(100),
        "a fresh object waits for no rollout: {fresh:?}"
    );
    let last = runs.iter().map(|r| r.0).max().expect("runs") - started;
    assert!(
        last >= Duration::from_millis(4900) && last < Duration::from_millis(6000),
        "100 objects at 20/s take about 5 s: {last:?}"
    );
    let done = progress.last();
    assert_eq!(
        (done.phase, done.rolled, done.total),
        (RolloutPhase::Done, n as u64, n as u64)
    );
    for i in 0..n {
        let object = store
            .get("Thing", &format!("t{i:03}"))
            .await
            .expect("get")
            .expect("exists");
        let entry = status::read(&object, "versioned").expect("a reconcile status");
        assert_eq!(entry.version.as_deref(), Some("v2"), "{}", object.name);
    }
}

#[tokio::test(start_paused = true)]
async fn a_newer_version_mid_rollout_rolls_out_to_every_object_again() {
    let n = 40;
    let (_store, runs, controller) = started_at_v1(n).await;
    let count = |version: &str| count(&runs, version);
    let progress = Arc::new(Progress::default());
    let plan = |version: &str, previous: &str| RolloutPlan {
        version: version.into(),
        previous: Some(previous.into()),
        canary: None,
        sink: progress.clone(),
    };
    controller.replace_reactor(Versioned::new("v2", &runs));
    controller.start_rollout(plan("v2", "v1"), 10.0);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let partly = count("v2");
    assert!((5..=15).contains(&partly), "about 10 after 1 s: {partly}");

    controller.replace_reactor(Versioned::new("v3", &runs));
    controller.start_rollout(plan("v3", "v2"), 10.0);
    let by_v3 = || {
        let runs = runs.lock().expect("lock");
        let names: std::collections::BTreeSet<String> = runs
            .iter()
            .filter(|r| r.2 == "v3")
            .map(|r| r.1.clone())
            .collect();
        names.len()
    };
    eventually_async("v3 ran every object", Duration::from_secs(20), || {
        by_v3() == n
    })
    .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(count("v2") < n, "v2's rollout stopped: {}", count("v2"));
    // An object in flight when v3 arrived may run once more; none is left out.
    assert!(count("v3") <= n + 2, "v3 ran {} times", count("v3"));
    let last = progress.last();
    assert_eq!(
        (last.version.as_str(), last.phase, last.rolled, last.total),
        ("v3", RolloutPhase::Done, n as u64, n as u64)
    );
}

/// Makes `Child/<name>` for each Thing unless it reads one, and records in the Thing's status
/// how many children it listed and whether it found its own. As a shadow it first waits for
/// `gate`; the serving one names it as its shadow and keeps the outcomes compared.
struct Mirror {
    context: EngineContext,
    name: &'static str,
    /// Where its writes are kept: the component's name, or its shadow's.
    writes_as: String,
    /// Fails with this message after its writes, if set.
    fails: Option<&'static str>,
    gate: Option<Arc<tokio::sync::Semaphore>>,
    shadow: Option<Arc<Mirror>>,
    outcomes: Arc<Mutex<Vec<ShadowOutcome>>>,
}

impl Mirror {
    async fn sync(&self, object: &Object) -> Reaction {
        if let Some(gate) = &self.gate {
            gate.acquire()
                .await
                .map_err(|e| Failure::Retry(e.to_string()))?
                .forget();
        }
        let failed = |e: reactor_host::store::StoreError| Failure::Retry(e.to_string());
        let store = self.context.store_for(&self.writes_as, &object.key());
        let store = store.as_ref();
        let listed = store
            .list("Child", &Selector::default())
            .await
            .map_err(failed)?;
        let found = store.get("Child", &object.name).await.map_err(failed)?;
        if found.is_none() {
            let child = ApplyRequest {
                kind: "Child".into(),
                ..thing(&object.name)
            };
            store.apply(vec![child]).await.map_err(failed)?;
        }
        update_status(store, &object.kind, &object.name, |current| {
            let mut status = current.clone();
            status["listed"] = serde_json::json!(listed.items.len());
            status["found"] = serde_json::json!(found.is_some());
            status
        })
        .await
        .map_err(failed)?;
        match self.fails {
            Some(message) => Err(Failure::Retry(message.into())),
            None => Ok(Action::Done),
        }
    }
}

#[async_trait]
impl Reactor for Mirror {
    fn info(&self) -> ReactorInfo {
        ReactorInfo {
            name: self.name.into(),
            kinds: vec!["Thing".into()],
            resync: None,
            handles_delete: false,
            watches: Vec::new(),
        }
    }
    fn shadow(&self) -> Option<(Arc<dyn Reactor>, String)> {
        let shadow: Arc<dyn Reactor> = self.shadow.clone()?;
        Some((shadow, "a-shadow".into()))
    }
    async fn shadow_compared(&self, _: &str, _: &str, outcome: ShadowOutcome) -> ShadowStep {
        self.outcomes.lock().expect("lock").push(outcome);
        ShadowStep::Running
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

#[tokio::test(start_paused = true)]
async fn a_shadow_still_running_holds_no_commit_back_and_reads_what_the_serving_run_read() {
    let store: Arc<dyn Store> = Arc::new(MemStore::default());
    let context = EngineContext::new(store.clone(), ObjectLocks::default());
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let outcomes: Arc<Mutex<Vec<ShadowOutcome>>> = Arc::default();
    let mirror = |writes_as: String, gate, shadow| Mirror {
        context: context.clone(),
        name: "mirror",
        writes_as,
        fails: None,
        gate,
        shadow,
        outcomes: outcomes.clone(),
    };
    let shadow = mirror(shadow_callback_name("mirror"), Some(gate.clone()), None);
    let serving = mirror("mirror".into(), None, Some(Arc::new(shadow)));
    let _controller = Controller::start(
        Arc::new(serving),
        context.clone(),
        ControllerOptions::default(),
    );
    store.apply(vec![thing("t")]).await.expect("apply");

    // The shadow waits at its gate; the serving version's writes land meanwhile.
    let started = Instant::now();
    loop {
        let child = store.get("Child", "t").await.expect("get");
        let thing = store.get("Thing", "t").await.expect("get");
        if child.is_some() && thing.is_some_and(|t| t.status["listed"] == 0) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the serving run never committed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // In controlled time: the commit did not wait out the second a shadow may run on.
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "the serving version's commit waited {:?} for its shadow",
        started.elapsed()
    );
    assert!(
        outcomes.lock().expect("lock").is_empty(),
        "the shadow has not run yet"
    );

    // Let go now, it reads the state before that commit: no child listed, none found. So it
    // makes the same writes, and matches.
    gate.add_permits(1);
    eventually_async("the shadow compared", Duration::from_secs(20), || {
        !outcomes.lock().expect("lock").is_empty()
    })
    .await;
    assert_eq!(
        outcomes.lock().expect("lock").first(),
        Some(&ShadowOutcome::Matched)
    );
    assert_eq!(
        store
            .list("Child", &Selector::default())
            .await
            .expect("list")
            .items
            .len(),
        1,
        "the shadow's writes were never committed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_shadows_traceback_is_in_the_components_log_and_its_first_line_in_the_outcome() {
    let store: Arc<dyn Store> = Arc::new(MemStore::default());
    let context = EngineContext::new(store.clone(), ObjectLocks::default());
    let outcomes: Arc<Mutex<Vec<ShadowOutcome>>> = Arc::default();
    let name = "careless-mirror";
    let shadow = Mirror {
        context: context.clone(),
        name,
        writes_as: shadow_callback_name(name),
        fails: Some(
            "KeyError: 'plan'\nTraceback (most recent call last):\n  File \"app.py\", line 7",
        ),
        gate: None,
        shadow: None,
        outcomes: outcomes.clone(),
    };
    let serving = Mirror {
        writes_as: name.into(),
        fails: None,
        shadow: Some(Arc::new(shadow)),
        ..Mirror {
            context: context.clone(),
            name,
            writes_as: String::new(),
            fails: None,
            gate: None,
            shadow: None,
            outcomes: outcomes.clone(),
        }
    };
    let _controller = Controller::start(Arc::new(serving), context, ControllerOptions::default());
    store.apply(vec![thing("t")]).await.expect("apply");
    eventually_async("the shadow compared", Duration::from_secs(20), || {
        !outcomes.lock().expect("lock").is_empty()
    })
    .await;
    assert_eq!(
        outcomes.lock().expect("lock").first(),
        Some(&ShadowOutcome::Failed("KeyError: 'plan'".into()))
    );
    let logged: Vec<String> = reactor_host::runtime::log_ring::lines(name, 0, 100)
        .unwrap_or_default()
        .into_iter()
        .map(|line| line.message)
        .collect();
    assert!(
        logged.iter().any(|m| m
            .starts_with("[host] shadow a-shadow on Thing/t failed: KeyError: 'plan'")
            && m.ends_with("line 7")),
        "{logged:?}"
    );
}
