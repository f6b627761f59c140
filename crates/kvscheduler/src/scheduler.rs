//! The public handle: transactions run one at a time over the graph, with planning,
//! revert, retries, notifications, resync and inspection.

use super::api::{
    Descriptor, Dump, DumpFilter, DumpView, GraphNode, Key, RecordedOp, RequestedValue, Resync,
    RetryOptions, TimelineEntry, TxnError, TxnMode, TxnOptions, TxnRecord, TxnType, Value,
    ValueOrigin, ValueState, ValueStatus,
};
use super::compress::compress;
use super::executor::Executor;
use super::graph::Graph;
use super::history::History;
use super::refresh::{apply_retrieved, retrieve_all, retrieved_view};
use super::registry::Registry;
use super::retry::backoff;
use super::revert::revert as revert_values;
use super::trial::Trial;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Weak};
use std::time::SystemTime;
use tokio::sync::{Mutex, broadcast};
use tracing::Instrument;

/// Records announced to subscribers; a slow subscriber misses the oldest.
const RECORD_CHANNEL: usize = 256;

#[derive(Default)]
struct SchedulerState {
    graph: Graph,
    registry: Registry,
    history: History,
    seq: u64,
    /// A descriptor was registered since the last northbound transaction: UNIMPLEMENTED
    /// values may have one now, so that transaction looks for them (once, not every time).
    registered: bool,
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
    engine: Arc<Mutex<SchedulerState>>,
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
        let mut engine = self.engine.lock().await;
        engine.registry.register(descriptor);
        engine.registered = true;
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

    /// Changes the desired state: `Some` puts a value, `None` removes it. A key given more
    /// than once takes its last change (Ligato's transaction is a map from key to value).
    /// A value the southbound owns (OBTAINED) is refused alone, left as it is: its refusal
    /// is a failed operation of the record, one of the errors of [`TxnError::Failed`], and
    /// the other values are applied (in revert mode, none is).
    pub async fn transaction(
        &self,
        values: Vec<(Key, Option<Value>)>,
        options: TxnOptions,
    ) -> Result<TxnRecord, TxnError> {
        let values = last_change_per_key(values);
        self.run(TxnType::NbTransaction, Work::Changes(values), options)
            .await
    }

    /// What `transaction` would do (Ligato's `WithSimulation`, as a dry run): the record
    /// of the planned operations, assuming each succeeds; nothing is executed, nothing
    /// changes, and the record is not kept in the history. A value the southbound owns is
    /// refused as by `transaction`: a planned operation with its error.
    pub async fn simulate(
        &self,
        values: Vec<(Key, Option<Value>)>,
        options: TxnOptions,
    ) -> Result<TxnRecord, TxnError> {
        let values = last_change_per_key(values);
        self.run_or_simulate(TxnType::NbTransaction, Work::Changes(values), options, true)
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
        self.resync_with(resync, TxnOptions::default()).await
    }

    /// A resync with the options of a northbound transaction (retries of what fails).
    pub async fn resync_with(
        &self,
        resync: Resync,
        options: TxnOptions,
    ) -> Result<TxnRecord, TxnError> {
        let txn_type = match resync {
            Resync::Full(_) => TxnType::FullResync,
            Resync::Downstream => TxnType::DownstreamResync,
        };
        self.run(txn_type, Work::Resync(resync), options).await
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
        self.dump_filtered(&DumpFilter::default()).await
    }

    /// The views `filter` asks for (all by default), with the values of one descriptor
    /// and/or under one key prefix (Ligato's `DumpValuesByDescriptor` / `ByKeyPrefix`).
    /// Only the retrieved view reads the southbound.
    pub async fn dump_filtered(&self, filter: &DumpFilter) -> Dump {
        let engine = self.engine.lock().await;
        let registry = &engine.registry;
        let wanted = |key: &str| {
            filter
                .key_prefix
                .as_deref()
                .is_none_or(|prefix| key.starts_with(prefix))
                && filter
                    .descriptor
                    .as_deref()
                    .is_none_or(|name| registry.for_key(key).is_some_and(|d| d.name() == name))
        };
        let shows = |view: DumpView| filter.view.is_none_or(|v| v == view);
        let mut dump = Dump {
            desired: Vec::new(),
            retrieved: Vec::new(),
            cached: Vec::new(),
        };
        if shows(DumpView::Nb) {
            dump.desired = engine
                .graph
                .nodes()
                .filter(|n| n.derived_from.is_none() && !n.is_external() && wanted(&n.key))
                .filter_map(|n| n.wanted.clone().map(|v| (n.key.clone(), v)))
                .collect();
        }
        if shows(DumpView::Sb) {
            let only: Option<Vec<String>> = filter.descriptor.clone().map(|d| vec![d]);
            let (retrieved, _) =
                retrieve_all(&engine.graph, registry, only.as_deref(), false).await;
            dump.retrieved = retrieved_view(&engine.graph, registry, &retrieved);
            dump.retrieved.retain(|s| wanted(&s.key));
        }
        if shows(DumpView::Cached) {
            dump.cached = engine
                .graph
                .nodes()
                .filter(|n| wanted(&n.key))
                .map(|n| n.status(&engine.graph))
                .collect();
        }
        dump
    }

    pub async fn graph(&self) -> Vec<GraphNode> {
        self.engine.lock().await.graph.inspect()
    }

    pub async fn history(&self) -> Vec<TxnRecord> {
        self.engine.lock().await.history.records()
    }

    /// The records of the transactions started within `since..=until` (either open).
    pub async fn history_between(
        &self,
        since: Option<SystemTime>,
        until: Option<SystemTime>,
    ) -> Vec<TxnRecord> {
        let mut records = self.history().await;
        records
            .retain(|r| since.is_none_or(|s| r.start >= s) && until.is_none_or(|u| r.start <= u));
        records
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
        let span = tracing::debug_span!("transaction", kind = ?txn_type);
        self.run_or_simulate(txn_type, work, options, false)
            .instrument(span)
            .await
    }

    /// Runs `work` as one transaction, or (`simulate`) only plans it.
    async fn run_or_simulate(
        &self,
        txn_type: TxnType,
        work: Work,
        options: TxnOptions,
        simulate: bool,
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

        let (retry_for_txn, retry_attempt) = match &work {
            Work::Retry(keys) => (
                keys.first().map(|(_, failed_in)| *failed_in),
                keys.first()
                    .and_then(|(key, _)| engine.graph.get(key))
                    .map_or(0, |n| n.attempts + 1),
            ),
            _ => (None, 0),
        };
        let retrying = matches!(work, Work::Retry(_));
        let revive = engine.registered;
        let planned = compress(plan(engine, &work, seq, retry, retrying, revive).await);
        if simulate {
            // Nothing ran: the number is not used up and nothing goes to the history.
            engine.seq -= 1;
            return Ok(TxnRecord {
                seq,
                txn_type,
                description: options.description,
                start,
                stop: SystemTime::now(),
                retry_for_txn,
                retry_attempt,
                with_simulation: true,
                values,
                planned,
                executed: Vec::new(),
            });
        }

        let mut executor = Executor::new(&mut engine.graph, &engine.registry, seq);
        executor.retry = retry;
        executor.retrying = retrying;
        executor.stop_on_failure = revert;
        perform(&mut executor, &work, true, revive).await;
        let mut executed = std::mem::take(&mut executor.ops);
        let mut failed = std::mem::take(&mut executor.failed);
        let refused = std::mem::take(&mut executor.refused);
        let processed = std::mem::take(&mut executor.processed);
        drop(executor);
        if matches!(work, Work::Changes(_)) {
            engine.registered = false;
        }

        if !failed.is_empty() {
            // A failed operation may have done part of its work: believe the southbound.
            refresh_keys(engine, &failed, seq).await;
        }
        let reverted = revert && !(failed.is_empty() && refused.is_empty());
        if reverted {
            let mut executor = Executor::new(&mut engine.graph, &engine.registry, seq);
            revert_values(&mut executor, processed).await;
            executed.append(&mut executor.ops);
            failed.append(&mut executor.failed);
        }

        let record = TxnRecord {
            seq,
            txn_type,
            description: options.description,
            start,
            stop: SystemTime::now(),
            retry_for_txn,
            retry_attempt,
            with_simulation: false,
            values,
            planned,
            executed: compress(executed),
        };
        engine.history.push(record.clone());
        self.schedule_retries(engine, &record);
        drop(guard);
        // Nobody listening is fine.
        let _ = self.records.send(record.clone());
        if failed.is_empty() && refused.is_empty() {
            Ok(record)
        } else {
            Err(TxnError::Failed {
                record: Box::new(record),
                reverted,
            })
        }
    }

    /// Starts a timer for each value left RETRYING by this transaction, with the retry
    /// options of the northbound transaction that requested it. Only the values the
    /// transaction operated on can have been left RETRYING by it.
    fn schedule_retries(&self, engine: &SchedulerState, record: &TxnRecord) {
        let touched: BTreeSet<&Key> = record.executed.iter().map(|op| &op.key).collect();
        let retrying: Vec<(Key, u32, RetryOptions)> = touched
            .into_iter()
            .filter_map(|key| engine.graph.get(key))
            .filter(|n| n.state == ValueState::Retrying && n.last_txn == engine.seq)
            .filter_map(|n| n.retry.map(|r| (n.key.clone(), n.attempts, r)))
            .collect();
        let failed_in = engine.seq;
        for (key, attempts, options) in retrying {
            let delay = backoff(&options, attempts);
            let weak: Weak<Mutex<SchedulerState>> = Arc::downgrade(&self.engine);
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

/// The operations `work` would do if each succeeded, planned on the graph itself: what the
/// plan changes is put back when it ends, so that it costs what it touches, not a copy of
/// the graph.
async fn plan(
    engine: &mut SchedulerState,
    work: &Work,
    seq: u64,
    retry: Option<RetryOptions>,
    retrying: bool,
    revive: bool,
) -> Vec<RecordedOp> {
    let mut trial = Trial::new(&mut engine.graph);
    let mut planner = Executor::new(trial.graph(), &engine.registry, seq);
    planner.dry_run = true;
    planner.retry = retry;
    planner.retrying = retrying;
    // A plan must not read the southbound, so a resync is planned on belief alone.
    perform(&mut planner, work, false, revive).await;
    std::mem::take(&mut planner.ops)
}

/// Applies `work` through `executor`; `refresh` lets a resync read the southbound,
/// `revive` lets northbound changes first apply UNIMPLEMENTED values that have a
/// descriptor now.
async fn perform(executor: &mut Executor<'_>, work: &Work, refresh: bool, revive: bool) {
    match work {
        Work::Changes(values) => {
            let unimplemented = if revive {
                executor.graph.keys()
            } else {
                Vec::new()
            };
            for key in unimplemented {
                let revived = executor.graph.get(&key).is_some_and(|n| {
                    n.state == ValueState::Unimplemented
                        && executor.registry.for_key(&key).is_some()
                });
                if revived {
                    executor.reconcile(key).await;
                }
            }
            // The southbound's own values are refused first, before anything is applied
            // (in revert mode a refusal stops the transaction there).
            let mut wanted = Vec::with_capacity(values.len());
            for (key, value) in values {
                if !executor.refuse_if_obtained(key, value.as_ref()) {
                    wanted.push((key.clone(), value.clone()));
                }
            }
            for (key, value) in in_ligato_order(executor, &wanted).await {
                executor.request(key, value).await;
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
                // As Ligato, the retry re-applies the base value (and so its derived
                // values); then the failed value itself, if it still waits.
                let mut base = key.clone();
                for _ in 0..64 {
                    match executor
                        .graph
                        .get(&base)
                        .and_then(|n| n.derived_from.clone())
                    {
                        Some(parent) => base = parent,
                        None => break,
                    }
                }
                if &base != key {
                    executor.reconcile(base).await;
                }
                executor.reconcile(key.clone()).await;
            }
        }
        Work::Notify(key, value) => {
            executor
                .observe(key, value.clone(), ValueState::Obtained)
                .await;
            if let Some(node) = executor.graph.get_mut(key) {
                node.notified = true;
            }
        }
        Work::Resync(resync) => {
            let full = matches!(resync, Resync::Full(_));
            if let Resync::Full(values) = resync {
                let wanted: HashMap<&Key, &Value> = values.iter().map(|(k, v)| (k, v)).collect();
                let held: Vec<Key> = executor
                    .graph
                    .nodes()
                    .filter(|n| n.derived_from.is_none() && !n.is_external())
                    .map(|n| n.key.clone())
                    .collect();
                for key in held {
                    if !wanted.contains_key(&key)
                        && let Some(node) = executor.graph.get_mut(&key)
                    {
                        node.wanted = None;
                    }
                }
                let retry = executor.retry;
                for (key, value) in values {
                    let node = executor.graph.entry(key, ValueOrigin::FromNorthbound);
                    if !node.is_external() {
                        node.wanted = Some(value.clone());
                        node.attempts = 0;
                        node.retry = retry;
                    }
                }
            }
            if refresh {
                let (retrieved, errors) =
                    retrieve_all(executor.graph, executor.registry, None, full).await;
                for (descriptor, error) in errors {
                    tracing::warn!(%descriptor, %error, "retrieve failed, keeping the scheduler's belief");
                }
                apply_retrieved(executor, &retrieved).await;
            }
            // As a Ligato resync transaction: the base values in its order (deletes first:
            // each removes its derived values and dependants before itself), then whatever
            // else drifted, each value after the one it is derived from.
            let base: Vec<(Key, Option<Value>)> = executor
                .graph
                .nodes()
                .filter(|n| n.derived_from.is_none() && !n.is_external())
                .map(|n| (n.key.clone(), n.wanted.clone()))
                .collect();
            for (key, _) in in_ligato_order(executor, &base).await {
                executor.reconcile(key).await;
            }
            for key in parents_first(executor.graph) {
                executor.reconcile(key).await;
            }
        }
    }
}

/// Each key once, with its last change, in the order of those last changes: a later
/// change of a key overrides an earlier one, as a later `SetValue` in a Ligato transaction
/// (a map from key to value). A value put and withdrawn in one batch is withdrawn.
fn last_change_per_key(values: Vec<(Key, Option<Value>)>) -> Vec<(Key, Option<Value>)> {
    let last: HashMap<Key, usize> = values
        .iter()
        .enumerate()
        .map(|(at, (key, _))| (key.clone(), at))
        .collect();
    values
        .into_iter()
        .enumerate()
        .filter(|(at, (key, _))| last.get(key) == Some(at))
        .map(|(_, change)| change)
        .collect()
}

/// The requested values in Ligato's order: by key within each group of deletes,
/// re-creates, creates and updates (on average the shortest sequence of operations).
async fn in_ligato_order(
    executor: &Executor<'_>,
    values: &[(Key, Option<Value>)],
) -> Vec<(Key, Option<Value>)> {
    let mut sorted: Vec<&(Key, Option<Value>)> = values.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut groups: [Vec<(Key, Option<Value>)>; 4] = Default::default();
    for (key, value) in sorted {
        let group = match (value, executor.graph.get(key)) {
            (None, _) => 0,
            // As Ligato: a value unavailable (a failed delete) is among the creates.
            (Some(new), Some(node)) if node.satisfies() => {
                let recreate = match (executor.registry.for_key(key), &node.applied) {
                    (Some(descriptor), Some(old)) => {
                        descriptor
                            .update_with_recreate(key, old, new, &node.metadata)
                            .await
                    }
                    _ => false,
                };
                if recreate { 1 } else { 3 }
            }
            (Some(_), _) => 2,
        };
        groups[group].push((key.clone(), value.clone()));
    }
    groups.into_iter().flatten().collect()
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

/// Re-reads the failed keys from their descriptors. A derived value is found through its
/// base value: retrieve returns base values and the scheduler derives the rest (Ligato's
/// contract); a descriptor that returns the derived value itself is believed directly.
async fn refresh_keys(engine: &mut SchedulerState, keys: &[Key], seq: u64) {
    let lineage = |key: &Key| {
        let mut path = vec![key.clone()];
        while let Some(parent) = path
            .last()
            .and_then(|k| engine.graph.get(k))
            .and_then(|n| n.derived_from.clone())
        {
            if path.len() > 64 || path.contains(&parent) {
                break;
            }
            path.push(parent);
        }
        path.reverse();
        path
    };
    // The base value of a failed derived value is refreshed too (Ligato refreshes base
    // values), so that a retry or resync re-applies a parent left wrong in the southbound.
    let mut keys: Vec<Key> = keys.to_vec();
    for key in keys.clone() {
        if let Some(base) = lineage(&key).first()
            && !keys.contains(base)
        {
            keys.push(base.clone());
        }
    }
    let keys = &keys;
    let lineages: Vec<Vec<Key>> = keys.iter().map(lineage).collect();
    let names: Vec<String> = lineages
        .iter()
        .flat_map(|path| path.first())
        .filter_map(|k| engine.registry.for_key(k).map(|d| d.name().to_owned()))
        .collect();
    let (retrieved, _) = retrieve_all(&engine.graph, &engine.registry, Some(&names), false).await;
    for (key, path) in keys.iter().zip(lineages) {
        let Some(base) = path.first() else {
            continue;
        };
        let Some(values) = engine
            .registry
            .for_key(base)
            .and_then(|d| retrieved.get(d.name()))
        else {
            continue;
        };
        let found = match values.iter().find(|v| &v.key == key) {
            Some(direct) => Some((direct.value.clone(), direct.metadata.clone())),
            None => match values.iter().find(|v| &v.key == base) {
                Some(root) if base != key => {
                    derive_down(&engine.registry, &path, root.value.clone())
                        .await
                        .map(|v| (v, None))
                }
                _ => None,
            },
        };
        if let Some(node) = engine.graph.get_mut(key) {
            node.applied = found.as_ref().map(|(v, _)| v.clone());
            if let Some((_, metadata)) = found {
                node.metadata = metadata;
            }
            node.last_txn = seq;
        }
    }
}

/// The value of the last key of `path` (a base value, its derived value, ...) derived from
/// the base value's `value`, or `None` if it is not derived from it (any more).
async fn derive_down(registry: &Registry, path: &[Key], value: Value) -> Option<Value> {
    let mut value = value;
    for pair in path.windows(2) {
        let descriptor = registry.for_key(&pair[0])?;
        value = descriptor
            .derived_values(&pair[0], &value)
            .await
            .into_iter()
            .find(|(k, _)| k == &pair[1])?
            .1;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Operation;
    use crate::testing::{
        bridge_domain, bridge_domain_descriptor, interface, scheduler, with_obtained,
    };
    use serde_json::json;
    use std::collections::BTreeMap;

    #[tokio::test]
    async fn an_obtained_key_is_refused_alone_and_the_rest_is_applied() {
        let (scheduler, southbound, eth0) = with_obtained("eth0").await;
        let obtained = scheduler.status(&eth0).await;
        let (tap, bd) = (interface("tap"), bridge_domain("b1"));
        let changes = vec![
            (tap.clone(), Some(json!({"type": "tap"}))),
            (eth0.clone(), Some(json!({"mtu": 9000}))),
            (bd.clone(), Some(json!({}))),
        ];
        let refusal =
            format!("{eth0} is obtained from the southbound: a transaction cannot change it");

        // A dry run plans the two values and the refusal, and does nothing.
        let planned = scheduler
            .simulate(changes.clone(), TxnOptions::default())
            .await
            .expect("simulated");
        let plan: Vec<_> = planned
            .planned
            .iter()
            .map(|op| (op.key.as_str(), op.error.as_deref()))
            .collect();
        assert_eq!(
            plan,
            [
                (eth0.as_str(), Some(refusal.as_str())),
                (bd.as_str(), None),
                (tap.as_str(), None)
            ]
        );
        assert!(!southbound.has(&tap) && !southbound.has(&bd));

        let error = scheduler
            .transaction(changes, TxnOptions::default())
            .await
            .expect_err("eth0 is refused");
        assert_eq!(
            error.to_string(),
            format!("transaction 2 failed for {eth0} ({refusal})")
        );
        let TxnError::Failed { record, reverted } = error else {
            panic!("the transaction did not run");
        };
        assert!(!reverted);
        assert_eq!(record.failures(), [(eth0.clone(), refusal.clone())]);
        assert_eq!(record.refusals(), record.failures());
        assert_eq!(
            southbound.contents(),
            BTreeMap::from([
                (bd.clone(), json!({})),
                (tap.clone(), json!({"type": "tap"})),
                (eth0.clone(), json!({"mtu": 1500})),
            ])
        );
        assert_eq!(scheduler.status(&tap).await.state, ValueState::Configured);
        assert_eq!(scheduler.status(&bd).await.state, ValueState::Configured);
        assert_eq!(scheduler.status(&eth0).await, obtained, "eth0 changed");
        let timeline = scheduler.timeline(&eth0).await;
        assert_eq!(
            timeline.last().and_then(|t| t.error.as_deref()),
            Some(refusal.as_str())
        );

        // Removing it is refused too; in revert mode nothing else of the transaction runs.
        let error = scheduler
            .transaction(
                vec![(eth0.clone(), None), (interface("tun"), Some(json!({})))],
                TxnOptions::revert(),
            )
            .await
            .expect_err("eth0 is refused");
        let TxnError::Failed { record, reverted } = error else {
            panic!("the transaction did not run");
        };
        assert!(reverted);
        assert_eq!(record.failures(), [(eth0.clone(), refusal)]);
        assert!(!southbound.has(&interface("tun")));
        assert_eq!(scheduler.status(&eth0).await, obtained, "eth0 changed");
    }

    #[tokio::test]
    async fn the_last_change_of_a_key_in_one_transaction_wins() {
        let (scheduler, southbound) = scheduler().await;
        let tap = interface("tap");
        let value = json!({"type": "tap"});
        // Published and withdrawn while the agent was away: one batch, put then delete.
        let record = scheduler
            .transaction(
                vec![(tap.clone(), Some(value.clone())), (tap.clone(), None)],
                TxnOptions::default(),
            )
            .await
            .expect("applied");
        assert!(
            southbound.contents().is_empty(),
            "{:?}",
            southbound.contents()
        );
        assert_eq!(scheduler.status(&tap).await.state, ValueState::Nonexistent);
        assert_eq!(record.values.len(), 1, "{:?}", record.values);
        assert_eq!(record.values[0].value, None);

        // Withdrawn and published again: the value is there.
        scheduler
            .transaction(
                vec![(tap.clone(), None), (tap.clone(), Some(value.clone()))],
                TxnOptions::default(),
            )
            .await
            .expect("applied");
        assert_eq!(southbound.contents().get(&tap), Some(&value));
        assert_eq!(scheduler.status(&tap).await.state, ValueState::Configured);

        // Once there, a changed value then a delete in one batch takes it away; a dry run
        // of that batch plans the delete alone.
        let changed_then_gone = vec![
            (tap.clone(), Some(json!({"type": "tap", "rx_ring": 512}))),
            (tap.clone(), None),
        ];
        let planned = scheduler
            .simulate(changed_then_gone.clone(), TxnOptions::default())
            .await
            .expect("simulated");
        let ops: Vec<_> = planned
            .planned
            .iter()
            .map(|op| (op.operation, op.key.as_str()))
            .collect();
        assert_eq!(ops, [(Operation::Delete, tap.as_str())]);
        assert!(southbound.has(&tap), "a dry run changed the southbound");
        scheduler
            .transaction(changed_then_gone, TxnOptions::default())
            .await
            .expect("applied");
        assert!(!southbound.has(&tap), "{:?}", southbound.contents());
    }

    #[tokio::test]
    async fn the_first_transaction_after_a_registration_applies_what_waited_for_it() {
        let (scheduler, southbound) = scheduler().await;
        assert!(scheduler.unregister_descriptor("vpp-bridge-domain").await);
        let bd = bridge_domain("b1");
        let _ = scheduler
            .transaction(vec![(bd.clone(), Some(json!({})))], TxnOptions::default())
            .await;
        assert_eq!(scheduler.status(&bd).await.state, ValueState::Unimplemented);
        scheduler
            .register_descriptor(bridge_domain_descriptor(southbound.clone()))
            .await;
        // A dry run sees it too, and leaves it for the transaction.
        let tap = (interface("tap"), Some(json!({"type": "tap"})));
        let planned = scheduler
            .simulate(vec![tap.clone()], TxnOptions::default())
            .await
            .expect("simulated");
        assert!(planned.planned.iter().any(|op| op.key == bd), "{planned:?}");
        assert!(!southbound.has(&bd));
        scheduler
            .transaction(vec![tap], TxnOptions::default())
            .await
            .expect("applied");
        assert!(southbound.has(&bd), "the waiting value was not applied");
        assert_eq!(scheduler.status(&bd).await.state, ValueState::Configured);
    }
}
