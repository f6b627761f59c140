//! The public handle: transactions run one at a time over the graph, with planning,
//! revert, retries, notifications, resync and inspection.

use super::api::{
    Descriptor, Dump, GraphNode, Key, RequestedValue, Resync, RetryOptions, TimelineEntry,
    TxnError, TxnMode, TxnOptions, TxnRecord, TxnType, Value, ValueState, ValueStatus,
};
use super::graph::Graph;
use super::history::History;
use super::refresh::{apply_retrieved, retrieve_all, retrieved_view};
use super::registry::Registry;
use super::retry::backoff;
use super::revert::undo_all;
use super::txn::Executor;
use std::sync::{Arc, Weak};
use std::time::SystemTime;
use tokio::sync::{Mutex, broadcast};

/// Records announced to subscribers; a slow subscriber misses the oldest.
const RECORD_CHANNEL: usize = 256;

#[derive(Default)]
struct Engine {
    graph: Graph,
    registry: Registry,
    history: History,
    seq: u64,
}

/// What one call asks the engine to do.
enum Work {
    Changes(Vec<(Key, Option<Value>)>),
    /// Keys with the transaction that left them RETRYING; a key changed since is skipped.
    Retry(Vec<(Key, u64)>),
    Notify(Key, Option<Value>),
    Resync(Resync),
}

/// The KV scheduler of an agent. Cloning gives another handle to the same scheduler.
#[derive(Clone)]
pub struct KvScheduler {
    engine: Arc<Mutex<Engine>>,
    records: broadcast::Sender<TxnRecord>,
}

impl std::fmt::Debug for KvScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvScheduler").finish_non_exhaustive()
    }
}

impl Default for KvScheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl KvScheduler {
    pub fn new() -> Self {
        Self {
            engine: Arc::default(),
            records: broadcast::channel(RECORD_CHANNEL).0,
        }
    }

    /// Registers a descriptor; one with the same name is replaced from the next transaction.
    /// UNIMPLEMENTED values it handles are applied by the next transaction.
    pub async fn register_descriptor(&self, descriptor: Arc<dyn Descriptor>) {
        self.engine.lock().await.registry.register(descriptor);
    }

    /// Forgets a descriptor (its component was removed): its values stay as they are, and
    /// later changes to them are UNIMPLEMENTED until a descriptor for them is registered.
    pub async fn unregister_descriptor(&self, name: &str) -> bool {
        self.engine.lock().await.registry.unregister(name)
    }

    /// Names of the registered descriptors.
    pub async fn descriptors(&self) -> Vec<String> {
        self.engine.lock().await.registry.names()
    }

    /// The status of every value the scheduler knows.
    pub async fn statuses(&self) -> Vec<ValueStatus> {
        let engine = self.engine.lock().await;
        engine
            .graph
            .nodes()
            .map(|n| n.status(&engine.graph))
            .collect()
    }

    /// Every transaction record from now on, as it completes.
    pub fn subscribe(&self) -> broadcast::Receiver<TxnRecord> {
        self.records.subscribe()
    }

    /// Changes the desired state: `Some` puts a value, `None` removes it.
    pub async fn transaction(
        &self,
        values: Vec<(Key, Option<Value>)>,
        options: TxnOptions,
    ) -> Result<TxnRecord, TxnError> {
        {
            let engine = self.engine.lock().await;
            if let Some((key, _)) = values
                .iter()
                .find(|(key, _)| engine.graph.get(key).is_some_and(|n| n.is_external()))
            {
                return Err(TxnError::ObtainedKey(key.clone()));
            }
        }
        self.run(TxnType::NbTransaction, Work::Changes(values), options)
            .await
    }

    /// A southbound notification: the value is OBTAINED (or gone, with `None`); PENDING
    /// values depending on it are applied, applied ones losing it go back to PENDING.
    pub async fn notify(&self, key: Key, value: Option<Value>) -> Result<TxnRecord, TxnError> {
        {
            let engine = self.engine.lock().await;
            if engine.graph.get(&key).is_some_and(|n| !n.is_external()) {
                return Err(TxnError::ManagedKey(key));
            }
        }
        let options = TxnOptions {
            description: "southbound notification".to_owned(),
            ..TxnOptions::default()
        };
        self.run(TxnType::SbNotification, Work::Notify(key, value), options)
            .await
    }

    /// Refreshes the southbound through the descriptors and repairs any drift.
    pub async fn resync(&self, resync: Resync) -> Result<TxnRecord, TxnError> {
        let txn_type = match resync {
            Resync::Full(_) => TxnType::FullResync,
            Resync::Downstream => TxnType::DownstreamResync,
        };
        self.run(txn_type, Work::Resync(resync), TxnOptions::default())
            .await
    }

    pub async fn status(&self, key: &str) -> ValueStatus {
        let engine = self.engine.lock().await;
        engine.graph.get(key).map_or_else(
            || ValueStatus::nonexistent(key),
            |n| n.status(&engine.graph),
        )
    }

    /// Desired, retrieved (read from the southbound now) and cached views.
    pub async fn dump(&self) -> Dump {
        let engine = self.engine.lock().await;
        let desired = engine
            .graph
            .nodes()
            .filter(|n| n.derived_from.is_none() && !n.is_external())
            .filter_map(|n| n.wanted.clone().map(|v| (n.key.clone(), v)))
            .collect();
        let (retrieved, _) = retrieve_all(&engine.graph, &engine.registry, None).await;
        Dump {
            desired,
            retrieved: retrieved_view(&engine.graph, &engine.registry, &retrieved),
            cached: engine
                .graph
                .nodes()
                .map(|n| n.status(&engine.graph))
                .collect(),
        }
    }

    pub async fn graph(&self) -> Vec<GraphNode> {
        self.engine.lock().await.graph.inspect()
    }

    pub async fn history(&self) -> Vec<TxnRecord> {
        self.engine.lock().await.history.records()
    }

    pub async fn timeline(&self, key: &str) -> Vec<TimelineEntry> {
        self.engine.lock().await.history.timeline(&key.to_owned())
    }

    async fn run(
        &self,
        txn_type: TxnType,
        work: Work,
        options: TxnOptions,
    ) -> Result<TxnRecord, TxnError> {
        let mut guard = self.engine.lock().await;
        let engine = &mut *guard;
        engine.seq += 1;
        let seq = engine.seq;
        let start = SystemTime::now();
        let (retry, revert) = match options.mode {
            TxnMode::BestEffort(retry) => (retry, false),
            TxnMode::Revert => (None, true),
        };
        let values = match &work {
            Work::Changes(values) => values
                .iter()
                .map(|(key, value)| RequestedValue {
                    key: key.clone(),
                    value: value.clone(),
                })
                .collect(),
            Work::Notify(key, value) => vec![RequestedValue {
                key: key.clone(),
                value: value.clone(),
            }],
            Work::Retry(keys) => keys
                .iter()
                .map(|(key, _)| RequestedValue {
                    key: key.clone(),
                    value: engine.graph.get(key).and_then(|n| n.wanted.clone()),
                })
                .collect(),
            Work::Resync(Resync::Full(values)) => values
                .iter()
                .map(|(key, value)| RequestedValue {
                    key: key.clone(),
                    value: Some(value.clone()),
                })
                .collect(),
            Work::Resync(Resync::Downstream) => Vec::new(),
        };

        let planned = {
            let mut plan_graph = engine.graph.clone();
            let mut planner = Executor::new(&mut plan_graph, &engine.registry, seq);
            planner.dry_run = true;
            // A plan must not read the southbound, so a resync is planned on belief alone.
            perform(&mut planner, &work, false).await;
            planner.ops
        };

        let snapshot = revert.then(|| engine.graph.clone());
        let mut executor = Executor::new(&mut engine.graph, &engine.registry, seq);
        executor.retry = retry;
        executor.stop_on_failure = revert;
        perform(&mut executor, &work, true).await;
        let mut executed = std::mem::take(&mut executor.ops);
        let failed = std::mem::take(&mut executor.failed);
        let undo = std::mem::take(&mut executor.undo);
        drop(executor);

        if !failed.is_empty() {
            // A failed operation may have done part of its work: believe the southbound.
            refresh_keys(engine, &failed, seq).await;
        }
        let reverted = revert && !failed.is_empty();
        if let Some(snapshot) = snapshot.filter(|_| reverted) {
            executed
                .extend(undo_all(&engine.graph, &engine.registry, undo, &failed, &snapshot).await);
            engine.graph = snapshot;
        }

        let record = TxnRecord {
            seq,
            txn_type,
            description: options.description,
            start,
            stop: SystemTime::now(),
            values,
            planned,
            executed,
        };
        engine.history.push(record.clone());
        if let Some(retry) = retry {
            self.schedule_retries(engine, retry);
        }
        drop(guard);
        // Nobody listening is fine.
        let _ = self.records.send(record.clone());
        if failed.is_empty() {
            Ok(record)
        } else {
            Err(TxnError::Failed {
                record: Box::new(record),
                reverted,
            })
        }
    }

    /// Starts a timer per distinct backoff for values left RETRYING by this transaction.
    fn schedule_retries(&self, engine: &Engine, options: RetryOptions) {
        let retrying: Vec<(Key, u32)> = engine
            .graph
            .nodes()
            .filter(|n| n.state == ValueState::Retrying && n.last_txn == engine.seq)
            .map(|n| (n.key.clone(), n.attempts))
            .collect();
        let failed_in = engine.seq;
        for (key, attempts) in retrying {
            let delay = backoff(&options, attempts);
            let weak: Weak<Mutex<Engine>> = Arc::downgrade(&self.engine);
            let records = self.records.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let Some(engine) = weak.upgrade() else {
                    return;
                };
                let scheduler = KvScheduler { engine, records };
                let options = TxnOptions {
                    mode: TxnMode::BestEffort(Some(options)),
                    description: format!("retry of {key}"),
                };
                // The outcome is in the history and the value's state.
                let _ = scheduler
                    .run(
                        TxnType::RetryFailedOps,
                        Work::Retry(vec![(key, failed_in)]),
                        options,
                    )
                    .await;
            });
        }
    }
}

/// Applies `work` through `executor`; `refresh` lets a resync read the southbound.
async fn perform(executor: &mut Executor<'_>, work: &Work, refresh: bool) {
    match work {
        Work::Changes(values) => {
            for key in executor.graph.keys() {
                let revived = executor.graph.get(&key).is_some_and(|n| {
                    n.state == ValueState::Unimplemented
                        && executor.registry.for_key(&key).is_some()
                });
                if revived {
                    executor.reconcile(key).await;
                }
            }
            for (key, value) in values {
                executor.set_wanted(key.clone(), value.clone(), None).await;
            }
        }
        Work::Retry(keys) => {
            for (key, failed_in) in keys {
                let Some(node) = executor.graph.get_mut(key) else {
                    continue;
                };
                // A newer transaction took the value over (and scheduled its own retry).
                if node.state != ValueState::Retrying || node.last_txn != *failed_in {
                    continue;
                }
                node.attempts += 1;
                executor.reconcile(key.clone()).await;
            }
        }
        Work::Notify(key, value) => {
            executor
                .observe(key, value.clone(), ValueState::Obtained)
                .await;
        }
        Work::Resync(resync) => {
            if let Resync::Full(values) = resync {
                let unwanted: Vec<Key> = executor
                    .graph
                    .nodes()
                    .filter(|n| n.derived_from.is_none() && !n.is_external())
                    .filter(|n| !values.iter().any(|(k, _)| k == &n.key))
                    .map(|n| n.key.clone())
                    .collect();
                for key in unwanted {
                    executor.set_wanted(key, None, None).await;
                }
                for (key, value) in values {
                    let node = executor
                        .graph
                        .entry(key, super::api::ValueOrigin::FromNorthbound);
                    if !node.is_external() {
                        node.wanted = Some(value.clone());
                    }
                }
            }
            if refresh {
                let (retrieved, errors) =
                    retrieve_all(executor.graph, executor.registry, None).await;
                for (descriptor, error) in errors {
                    tracing::warn!(%descriptor, %error, "retrieve failed, keeping the scheduler's belief");
                }
                apply_retrieved(executor, &retrieved).await;
            }
            for key in parents_first(executor.graph) {
                executor.reconcile(key).await;
            }
        }
    }
}

/// Every key, each after the value it is derived from (a missing interface is re-created
/// before its missing addresses), otherwise in key order.
fn parents_first(graph: &Graph) -> Vec<Key> {
    let depth = |key: &Key| {
        let mut depth = 0usize;
        let mut at = graph.get(key).and_then(|n| n.derived_from.clone());
        while let Some(parent) = at {
            depth += 1;
            // Derivation has no cycles, but a corrupt graph must not hang a resync.
            if depth > 64 {
                break;
            }
            at = graph.get(&parent).and_then(|n| n.derived_from.clone());
        }
        depth
    };
    let mut keys: Vec<(usize, Key)> = graph.keys().into_iter().map(|k| (depth(&k), k)).collect();
    keys.sort();
    keys.into_iter().map(|(_, key)| key).collect()
}

/// Re-reads the failed keys from their descriptors.
async fn refresh_keys(engine: &mut Engine, keys: &[Key], seq: u64) {
    let names: Vec<String> = keys
        .iter()
        .filter_map(|k| engine.registry.for_key(k).map(|d| d.name().to_owned()))
        .collect();
    let (retrieved, _) = retrieve_all(&engine.graph, &engine.registry, Some(&names)).await;
    for key in keys {
        let Some(descriptor) = engine.registry.for_key(key) else {
            continue;
        };
        let Some(values) = retrieved.get(descriptor.name()) else {
            continue;
        };
        let found = values.iter().find(|v| &v.key == key);
        if let Some(node) = engine.graph.get_mut(key) {
            node.applied = found.map(|v| v.value.clone());
            if let Some(found) = found {
                node.metadata = found.metadata.clone();
            }
            node.last_txn = seq;
        }
    }
}
