//! What lands of a callback's writes, with a native reactor that publishes items through the
//! callback's store as a guest's `nimbus.publish` calls do: a callback that returns an error
//! keeps none of them; one refused a write over its limit keeps none, whatever it returns,
//! and fails for good naming the setting; a list longer than the limit goes out a batch per
//! run over requeues, and is withdrawn within the limit when its owner is deleted, on a store
//! that refuses larger transactions (as etcd does).

use async_trait::async_trait;
use reactor_host::controller::{
    Action, Backoff, Controller, ControllerOptions, EngineContext, Failure, ObjectLocks, Reaction,
    Reactor, ReactorInfo, status,
};
use reactor_host::nimbus::{ITEM_KIND, ItemTarget, NimbusError, Owner, items_of, publish};
use reactor_host::object::{ApplyRequest, Object, Revision, Selector};
use reactor_host::store::{
    Applied, EmbeddedStore, EmbeddedStoreOptions, Listing, Store, StoreError, WatchStream, Write,
    Written, targets, update_status,
};
use reactor_testkit::eventually_async;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const NAME: &str = "publisher";

/// Publishes the items `<name>/<i>` for `i` below `spec.count` and records in
/// `status.published` how far it got. `spec.batch`: at most that many a run, from where the
/// status says, then `requeue-after`; `spec.fail`: returns a retryable error after its
/// writes; `spec.ignoreRefusals`: goes on past a refused write and returns `done`.
struct Publisher {
    context: EngineContext,
    handles_delete: bool,
    calls: AtomicUsize,
}

impl Publisher {
    fn new(context: &EngineContext, handles_delete: bool) -> Arc<Self> {
        Arc::new(Self {
            context: context.clone(),
            handles_delete,
            calls: AtomicUsize::new(0),
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    async fn sync(&self, object: &Object) -> Reaction {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let store = self.context.store_for(NAME, &object.key());
        let store = store.as_ref();
        let owner = Owner {
            kind: object.kind.clone(),
            name: object.name.clone(),
            component: NAME.into(),
        };
        let spec = &object.spec;
        let count = spec["count"].as_u64().unwrap_or(0);
        let from = object.status["published"].as_u64().unwrap_or(0);
        let until = count.min(from.saturating_add(spec["batch"].as_u64().unwrap_or(u64::MAX)));
        let failed = |e: NimbusError| Failure::Retry(e.to_string());
        for i in from..until {
            let key = format!("{}/{i}", object.name);
            let to = ItemTarget::Labels(Default::default());
            let published = publish(store, &owner, &key, json!(i), to).await;
            if spec["ignoreRefusals"] != true {
                published.map_err(failed)?;
            }
        }
        let (kind, name) = (&object.kind, &object.name);
        update_status(store, kind, name, |current| {
            let mut status = current.clone();
            status["published"] = json!(until);
            status
        })
        .await
        .map_err(|e| Failure::Retry(e.to_string()))?;
        if spec["fail"] == true {
            return Err(Failure::Retry("told to fail".into()));
        }
        Ok(match until < count {
            true => Action::RequeueAfter(Duration::from_millis(1)),
            false => Action::Done,
        })
    }
}

#[async_trait]
impl Reactor for Publisher {
    fn info(&self) -> ReactorInfo {
        ReactorInfo {
            name: NAME.into(),
            kinds: vec!["Thing".into()],
            resync: None,
            handles_delete: self.handles_delete,
            watches: Vec::new(),
        }
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

/// A store that refuses a transaction of more than `most` objects, as etcd refuses one over
/// its `--max-txn-ops`, and counts the transactions that wrote items.
struct Capped {
    inner: Arc<dyn Store>,
    most: usize,
    item_commits: AtomicUsize,
}

#[async_trait]
impl Store for Capped {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        self.inner.get(kind, name).await
    }
    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        self.inner.list(kind, selector).await
    }
    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        self.inner.apply(requests).await
    }
    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError> {
        let objects = targets(&writes);
        if objects.len() > self.most {
            return Err(StoreError::TxnTooLarge(format!(
                "{} objects, over {}",
                objects.len(),
                self.most
            )));
        }
        // Counted before the commit (and taken back if it fails): once a reader sees what
        // the commit wrote, it is counted.
        let items = objects.iter().any(|key| key.kind() == ITEM_KIND);
        if items {
            self.item_commits.fetch_add(1, Ordering::SeqCst);
        }
        let written = self.inner.commit(writes).await;
        if items && written.is_err() {
            self.item_commits.fetch_sub(1, Ordering::SeqCst);
        }
        written
    }
    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        self.inner.watch(kind, from).await
    }
    async fn revision(&self) -> Result<Revision, StoreError> {
        self.inner.revision().await
    }
}

struct World {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    World { _dir: dir, store }
}

/// A controller whose callbacks may make `max_writes` writes, retrying after 10 ms.
fn options(max_writes: usize) -> ControllerOptions {
    ControllerOptions {
        concurrency: 2,
        backoff: Backoff {
            base: Duration::from_millis(10),
            cap: Duration::from_millis(100),
            jitter: 0.0,
        },
        max_writes,
        ..ControllerOptions::default()
    }
}

async fn apply_thing(store: &dyn Store, name: &str, spec: serde_json::Value) {
    let request = ApplyRequest {
        kind: "Thing".into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec,
        expected_revision: None,
        owner: None,
    };
    store.apply(vec![request]).await.expect("apply");
}

async fn thing(store: &dyn Store, name: &str) -> Option<Object> {
    store.get("Thing", name).await.expect("get")
}

async fn item_count(store: &dyn Store, name: &str) -> usize {
    items_of(store, "Thing", name, "")
        .await
        .expect("items")
        .len()
}

/// Waits until `name` satisfies `check`; answers it.
async fn until(
    store: &dyn Store,
    name: &str,
    what: &str,
    check: impl Fn(&Object) -> bool,
) -> Object {
    let started = std::time::Instant::now();
    loop {
        if let Some(object) = thing(store, name).await
            && check(&object)
        {
            return object;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The reconcile status the host keeps for the publisher in `object`.
fn reconcile(object: &Object) -> status::ReconcileStatus {
    status::read(object, NAME).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_that_returns_an_error_keeps_none_of_its_writes() {
    let w = world();
    let context = EngineContext::new(w.store.clone(), ObjectLocks::default());
    let publisher = Publisher::new(&context, true);
    let _controller = Controller::start(publisher.clone(), context, options(1000));
    apply_thing(w.store.as_ref(), "t", json!({"count": 5, "fail": true})).await;
    let object = until(w.store.as_ref(), "t", "three failed attempts", |o| {
        reconcile(o).attempts >= 3
    })
    .await;
    assert!(publisher.calls() >= 3, "{} calls", publisher.calls());
    assert_eq!(item_count(w.store.as_ref(), "t").await, 0, "no item landed");
    assert!(
        object.status.get("published").is_none(),
        "its status did not land: {}",
        object.status
    );
    assert!(
        object.meta.finalizers.is_empty(),
        "nor the finalizer its first run adds: {:?}",
        object.meta.finalizers
    );
    // Told to succeed, the same writes land, all of them.
    apply_thing(w.store.as_ref(), "t", json!({"count": 5})).await;
    let object = until(w.store.as_ref(), "t", "success", |o| {
        reconcile(o).observed_generation == Some(2) && reconcile(o).last_error.is_none()
    })
    .await;
    assert_eq!(item_count(w.store.as_ref(), "t").await, 5);
    assert_eq!(object.status["published"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_over_its_limit_keeps_none_of_its_writes_and_fails_for_good() {
    let w = world();
    let context = EngineContext::new(w.store.clone(), ObjectLocks::default());
    let publisher = Publisher::new(&context, false);
    let _controller = Controller::start(publisher.clone(), context, options(10));
    // It goes on past the refusal of its 11th write and returns `done`: nothing lands anyway.
    let spec = json!({"count": 25, "ignoreRefusals": true});
    apply_thing(w.store.as_ref(), "big", spec).await;
    let object = until(w.store.as_ref(), "big", "a permanent error", |o| {
        reconcile(o).permanent
    })
    .await;
    let error = reconcile(&object).last_error.unwrap_or_default();
    assert!(
        error.contains("at most 10 writes") && error.contains("serve --max-callback-writes"),
        "{error}"
    );
    assert_eq!(
        item_count(w.store.as_ref(), "big").await,
        0,
        "no item landed"
    );
    assert!(
        object.status.get("published").is_none(),
        "{}",
        object.status
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        publisher.calls(),
        1,
        "not retried: it would fail the same way"
    );
    // Within the limit (9 items and its status), the same reactor succeeds.
    apply_thing(w.store.as_ref(), "big", json!({"count": 9})).await;
    until(w.store.as_ref(), "big", "success", |o| {
        reconcile(o).observed_generation == Some(2) && reconcile(o).last_error.is_none()
    })
    .await;
    assert_eq!(item_count(w.store.as_ref(), "big").await, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_over_the_limit_goes_out_over_requeues_and_is_withdrawn_within_it() {
    let w = world();
    // The callback's limit, its object and nothing more: etcd's bound with a guard of 1.
    let limit = 10;
    let capped = Arc::new(Capped {
        inner: w.store.clone(),
        most: limit + 1,
        item_commits: AtomicUsize::new(0),
    });
    let context = EngineContext::new(capped.clone(), ObjectLocks::default());
    let publisher = Publisher::new(&context, true);
    let _controller = Controller::start(publisher.clone(), context, options(limit));
    // 9 items and the status a run: 35 items in 4 runs.
    apply_thing(w.store.as_ref(), "long", json!({"count": 35, "batch": 9})).await;
    let object = until(w.store.as_ref(), "long", "every item published", |o| {
        o.status["published"] == 35
    })
    .await;
    assert_eq!(reconcile(&object).last_error, None);
    assert_eq!(item_count(w.store.as_ref(), "long").await, 35);
    let published_in = capped.item_commits.load(Ordering::SeqCst);
    assert_eq!(published_in, 4, "a transaction of 9 items a run");

    w.store.delete("Thing", "long", None).await.expect("delete");
    eventually_async("the object released", Duration::from_secs(10), || {
        futures::executor::block_on(thing(w.store.as_ref(), "long")).is_none()
    })
    .await;
    assert_eq!(
        item_count(w.store.as_ref(), "long").await,
        0,
        "all withdrawn"
    );
}
