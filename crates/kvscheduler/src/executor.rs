//! The executor of one transaction (also its planner, dry): values are applied in
//! dependency order, dependants and derived values follow their values, every operation
//! is recorded.

use super::api::{
    Descriptor, DescriptorError, Key, Operation, RecordedOp, RefusedValue, RetryOptions, Value,
    ValueOrigin, ValueState,
};
use super::graph::Graph;
use super::registry::Registry;
use futures::future::BoxFuture;
use std::collections::HashSet;
use std::sync::Arc;

/// Applies changes to a graph, calling descriptors unless it only plans.
pub struct Executor<'a> {
    pub graph: &'a mut Graph,
    pub registry: &'a Registry,
    pub seq: u64,
    /// Plan only: every operation is assumed to succeed and no descriptor changes anything.
    pub dry_run: bool,
    /// Stop at the first failure (revert mode).
    pub stop_on_failure: bool,
    /// The operations undo a failed revert-mode transaction (recorded as reverts).
    pub reverting: bool,
    /// The operations retry failed ones (recorded as retries).
    pub retrying: bool,
    /// The southbound's own values found by a refresh change without a recorded operation
    /// (Ligato's refresh records none); notified ones are recorded.
    pub quiet_observe: bool,
    /// Values being re-created: operations on them and their derived values are recorded
    /// as part of the re-creation.
    recreating: Vec<Key>,
    /// Keys deleted by a re-creation: creating them again is part of it.
    recreated: HashSet<Key>,
    pub retry: Option<RetryOptions>,
    pub ops: Vec<RecordedOp>,
    /// Requested values processed so far, with what was wanted before: what a revert
    /// puts back, newest first.
    pub processed: Vec<(Key, Option<Value>)>,
    pub failed: Vec<Key>,
    /// Requested values refused without being tried (the southbound's own): failures of
    /// the transaction, but nothing to refresh or revert.
    pub refused: Vec<Key>,
    pub stopped: bool,
    /// Values being taken down, so that a dependency cycle is walked once.
    removing: HashSet<Key>,
}

impl<'a> Executor<'a> {
    pub fn new(graph: &'a mut Graph, registry: &'a Registry, seq: u64) -> Self {
        Self {
            graph,
            registry,
            seq,
            dry_run: false,
            stop_on_failure: false,
            reverting: false,
            retrying: false,
            quiet_observe: false,
            recreating: Vec::new(),
            recreated: HashSet::new(),
            retry: None,
            ops: Vec::new(),
            processed: Vec::new(),
            failed: Vec::new(),
            refused: Vec::new(),
            stopped: false,
            removing: HashSet::new(),
        }
    }

    /// Applies a value the northbound requested, remembering what was wanted before.
    pub async fn request(&mut self, key: Key, value: Option<Value>) {
        if self.stopped {
            return;
        }
        let before = self.graph.get(&key).and_then(|n| n.wanted.clone());
        self.processed.push((key.clone(), before));
        if !self.reverting
            && let Some(node) = self.graph.get_mut(&key)
        {
            node.retry = self.retry;
            node.attempts = 0;
        }
        let retry = self.retry;
        if self.graph.get(&key).is_none() && value.is_some() {
            self.graph.entry(&key, ValueOrigin::FromNorthbound).retry = retry;
        }
        self.set_wanted(key, value, None).await;
    }

    /// Refuses a requested change of a value the southbound owns, if `key` is one: the
    /// refusal is recorded as a failed operation that changes nothing (the value, its state
    /// and its last transaction stay as they are). Answers whether it refused.
    pub fn refuse_if_obtained(&mut self, key: &str, value: Option<&Value>) -> bool {
        let Some(node) = self.graph.get(key).filter(|n| n.is_external()) else {
            return false;
        };
        let operation = if value.is_some() {
            Operation::Update
        } else {
            Operation::Delete
        };
        self.ops.push(RecordedOp {
            key: key.to_owned(),
            operation,
            prev_state: node.state,
            new_state: node.state,
            prev_value: node.applied.clone(),
            new_value: node.applied.clone(),
            error: Some(RefusedValue::Obtained(key.to_owned()).to_string()),
            derived: node.derived_from.is_some(),
            was_pending: false,
            is_recreate: false,
            is_revert: self.reverting,
            is_retry: self.retrying,
            noop: true,
        });
        self.refused.push(key.to_owned());
        if self.stop_on_failure {
            self.stopped = true;
        }
        true
    }

    /// Sets what the northbound (or a parent) wants for `key` and applies it.
    pub fn set_wanted(
        &mut self,
        key: Key,
        value: Option<Value>,
        derived_from: Option<Key>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if value.is_none() && self.graph.get(&key).is_none() {
                return;
            }
            let node = self.graph.entry(&key, ValueOrigin::FromNorthbound);
            if node.is_external() {
                return;
            }
            if node.wanted != value {
                node.attempts = 0;
            }
            node.wanted = value;
            if let Some(parent) = &derived_from {
                let retry = self.graph.get(parent).and_then(|p| p.retry);
                if let Some(node) = self.graph.get_mut(&key) {
                    node.retry = retry;
                }
            }
            if let Some(node) = self.graph.get_mut(&key) {
                node.derived_from = derived_from;
            }
            self.reconcile(key).await;
        })
    }

    /// Brings `key` to what is wanted, as far as its dependencies allow.
    pub fn reconcile(&mut self, key: Key) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.stopped {
                return;
            }
            let Some(node) = self.graph.get(&key) else {
                return;
            };
            if node.is_external() {
                return;
            }
            // A value this transaction already failed is not tried again within it (as
            // Ligato): it is refreshed, then retried or reverted.
            if matches!(node.state, ValueState::Failed | ValueState::Retrying)
                && node.last_txn == self.seq
                && !self.reverting
            {
                return;
            }
            let (wanted, applied, state) = (node.wanted.clone(), node.applied.clone(), node.state);
            let Some(value) = wanted else {
                if applied.is_some() {
                    self.take_down(&key, ValueState::Removed).await;
                } else if state != ValueState::Nonexistent {
                    self.mark(&key, Operation::Delete, ValueState::Removed);
                }
                if self.graph.get(&key).is_some_and(|n| n.applied.is_none()) {
                    self.graph.remove(&key);
                }
                return;
            };
            let Some(descriptor) = self.registry.for_key(&key) else {
                self.without_descriptor(&key, value).await;
                return;
            };
            if let Some(node) = self.graph.get_mut(&key) {
                node.descriptor = Some(descriptor.name().to_owned());
            }
            if let Err(invalid) = descriptor.validate(&key, &value).await {
                if applied.is_some() {
                    self.take_down(&key, ValueState::Invalid).await;
                }
                let error = invalid.to_string();
                if let Some(node) = self.graph.get_mut(&key) {
                    node.invalid = Some(invalid);
                }
                self.mark(&key, Operation::Create, ValueState::Invalid);
                self.record_failure(&key, error);
                return;
            }
            let dependencies = descriptor.dependencies(&key, &value).await;
            let missing = self.graph.missing(&dependencies, None);
            self.graph.set_dependencies(&key, dependencies);
            if let Some(node) = self.graph.get_mut(&key) {
                node.invalid = None;
            }
            // A cycle of values waiting only for each other is created as one value.
            if !missing.is_empty() && !self.graph.is_ready(&key) {
                if applied.is_some() {
                    self.take_down(&key, ValueState::Pending).await;
                } else if state != ValueState::Pending {
                    self.mark(&key, Operation::Create, ValueState::Pending);
                }
                return;
            }
            match applied {
                None => self.create(&key, value, &descriptor).await,
                Some(old) if old == value => {
                    let mut satisfies_again = false;
                    if let Some(node) = self.graph.get_mut(&key) {
                        node.state = ValueState::Configured;
                        node.error = None;
                        satisfies_again = std::mem::take(&mut node.removal_failed);
                    }
                    // Wanted again after its delete failed: what waits for it follows.
                    if satisfies_again {
                        self.unlock(&key).await;
                    }
                    // A value found in the southbound (or re-applied) takes over its
                    // derived values; an applied one keeps them as they are.
                    if state != ValueState::Configured {
                        self.sync_derived(&key, &value, &descriptor).await;
                    }
                }
                Some(old) => {
                    let metadata = self.graph.get(&key).and_then(|n| n.metadata.clone());
                    if descriptor
                        .update_with_recreate(&key, &old, &value, &metadata)
                        .await
                    {
                        // As Ligato: deleted (REMOVED), then created again, its derived
                        // values with it, all recorded as the re-creation.
                        self.recreating.push(key.clone());
                        self.take_down(&key, ValueState::Removed).await;
                        if self.graph.get(&key).is_some_and(|n| n.applied.is_none()) {
                            self.create(&key, value, &descriptor).await;
                        }
                        self.recreating.pop();
                    } else {
                        self.update(&key, old, value, &descriptor).await;
                    }
                }
            }
        })
    }

    /// A derived value without descriptor is a property: it exists with its parent. A
    /// northbound value without descriptor waits UNIMPLEMENTED.
    async fn without_descriptor(&mut self, key: &str, value: Value) {
        let Some(node) = self.graph.get_mut(key) else {
            return;
        };
        node.descriptor = None;
        if node.derived_from.is_some() {
            let prev_state = node.state;
            let changed = node.applied.as_ref() != Some(&value);
            node.applied = Some(value);
            node.state = ValueState::Configured;
            if changed {
                self.push_op(key, Operation::Create, prev_state, None, None);
                self.set_noop();
                self.unlock(key).await;
            }
        } else if node.state != ValueState::Unimplemented {
            self.mark(key, Operation::Create, ValueState::Unimplemented);
        }
    }

    async fn create(&mut self, key: &str, value: Value, descriptor: &Arc<dyn Descriptor>) {
        let operation = Operation::Create;
        let (prev_state, prev_value) = self.before(key);
        let result = if self.dry_run {
            Ok(None)
        } else {
            descriptor.create(key, &value).await
        };
        match result {
            Ok(metadata) => {
                if let Some(node) = self.graph.get_mut(key) {
                    node.applied = Some(value.clone());
                    node.metadata = metadata;
                    node.state = ValueState::Configured;
                    node.error = None;
                    node.attempts = 0;
                    node.removal_failed = false;
                }
                self.push_op(key, operation, prev_state, prev_value, None);
                // As Ligato: the values waiting for this one first, then its derived values.
                self.unlock(key).await;
                self.sync_derived(key, &value, descriptor).await;
            }
            Err(error) => {
                self.fail(key, operation, prev_state, prev_value, error, descriptor)
                    .await
            }
        }
    }

    async fn update(
        &mut self,
        key: &str,
        old: Value,
        value: Value,
        descriptor: &Arc<dyn Descriptor>,
    ) {
        // Derived values that go away are removed before the update, as a borrowed
        // address is returned before it is unassigned.
        let kept: Vec<Key> = descriptor
            .derived_values(key, &value)
            .await
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let obsolete: Vec<Key> = self
            .graph
            .get(key)
            .map(|n| {
                n.derived
                    .iter()
                    .filter(|k| !kept.contains(k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for gone in obsolete {
            if let Some(node) = self.graph.get_mut(key) {
                node.derived.retain(|k| k != &gone);
            }
            self.set_wanted(gone, None, Some(key.to_owned())).await;
        }
        let (prev_state, prev_value) = self.before(key);
        let metadata = self.graph.get(key).and_then(|n| n.metadata.clone());
        let result = if self.dry_run {
            Ok(metadata)
        } else {
            descriptor.update(key, &old, &value, &metadata).await
        };
        match result {
            Ok(metadata) => {
                if let Some(node) = self.graph.get_mut(key) {
                    node.applied = Some(value.clone());
                    node.metadata = metadata;
                    node.state = ValueState::Configured;
                    node.error = None;
                    node.attempts = 0;
                    node.removal_failed = false;
                }
                self.push_op(key, Operation::Update, prev_state, prev_value, None);
                self.unlock(key).await;
                self.sync_derived(key, &value, descriptor).await;
            }
            Err(error) => {
                self.fail(
                    key,
                    Operation::Update,
                    prev_state,
                    prev_value,
                    error,
                    descriptor,
                )
                .await
            }
        }
    }

    /// Removes an applied value from the southbound, as Ligato: first its derived values
    /// (a failed one stops the removal: the value stays), then the values that would lose
    /// a dependency (they go PENDING), then the value itself.
    pub fn take_down(&mut self, key: &str, final_state: ValueState) -> BoxFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            if !self.graph.get(&key).is_some_and(|n| n.is_available()) {
                return;
            }
            if !self.removing.insert(key.clone()) {
                return;
            }
            self.take_down_inner(&key, final_state).await;
            self.removing.remove(&key);
        })
    }

    async fn take_down_inner(&mut self, key: &str, final_state: ValueState) {
        let key = key.to_owned();
        {
            let derived = self
                .graph
                .get_mut(&key)
                .map(|n| std::mem::take(&mut n.derived))
                .unwrap_or_default();
            for child in &derived {
                self.set_wanted(child.clone(), None, Some(key.clone()))
                    .await;
            }
            let left: Vec<Key> = derived
                .into_iter()
                .filter(|k| self.graph.get(k).is_some_and(|n| n.is_available()))
                .collect();
            if !left.is_empty() {
                if let Some(node) = self.graph.get_mut(&key) {
                    node.derived = left;
                }
                return;
            }
            for dependant in self.graph.dependants_losing(&key) {
                if !self.removing.contains(&dependant) {
                    self.take_down(&dependant, ValueState::Pending).await;
                }
            }
            let Some(node) = self.graph.get(&key) else {
                return;
            };
            let (prev_state, prev_value) = (node.state, node.applied.clone());
            let Some(applied) = prev_value.clone() else {
                return;
            };
            let metadata = node.metadata.clone();
            let is_external = node.is_external();
            let descriptor = self.registry.for_key(&key);
            let result = match (&descriptor, self.dry_run || is_external) {
                (Some(descriptor), false) => descriptor.delete(&key, &applied, &metadata).await,
                _ => Ok(()),
            };
            match result {
                Ok(()) => {
                    if let Some(node) = self.graph.get_mut(&key) {
                        node.applied = None;
                        node.metadata = None;
                        node.state = final_state;
                    }
                    self.push_op(&key, Operation::Delete, prev_state, prev_value, None);
                    if is_external || descriptor.is_none() {
                        self.set_noop();
                    }
                }
                Err(error) => {
                    if let Some(descriptor) = descriptor {
                        self.fail(
                            &key,
                            Operation::Delete,
                            prev_state,
                            prev_value,
                            error,
                            &descriptor,
                        )
                        .await
                    }
                }
            }
        }
    }

    /// Creates, updates and removes the values derived from `key` to match `value`.
    async fn sync_derived(&mut self, key: &str, value: &Value, descriptor: &Arc<dyn Descriptor>) {
        let derived = descriptor.derived_values(key, value).await;
        let old = self
            .graph
            .get(key)
            .map(|n| n.derived.clone())
            .unwrap_or_default();
        let new_keys: Vec<Key> = derived.iter().map(|(k, _)| k.clone()).collect();
        if let Some(node) = self.graph.get_mut(key) {
            node.derived = new_keys.clone();
        }
        for gone in old.into_iter().filter(|k| !new_keys.contains(k)) {
            self.set_wanted(gone, None, Some(key.to_owned())).await;
        }
        for (child, child_value) in derived {
            self.set_wanted(child, Some(child_value), Some(key.to_owned()))
                .await;
        }
    }

    /// Applies the PENDING values that `key`, now available, may unlock.
    async fn unlock(&mut self, key: &str) {
        for pending in self.graph.pending_on(key) {
            self.reconcile(pending).await;
        }
    }

    /// Puts a value the southbound owns (notified or retrieved) into the graph, or takes
    /// it out (`None`), moving its dependants accordingly.
    pub fn observe(
        &mut self,
        key: &str,
        value: Option<Value>,
        state: ValueState,
    ) -> BoxFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            let key = key.as_str();
            let (prev_state, prev_value) = self.before(key);
            match value {
                Some(value) => {
                    let node = self.graph.entry(key, ValueOrigin::FromSouthbound);
                    node.origin = ValueOrigin::FromSouthbound;
                    node.applied = Some(value.clone());
                    node.wanted = None;
                    node.state = state;
                    node.last_txn = self.seq;
                    if prev_value.as_ref() != Some(&value) {
                        let operation = if prev_value.is_some() {
                            Operation::Update
                        } else {
                            Operation::Create
                        };
                        // Not a NOOP in Ligato's records: the value did change.
                        if !self.quiet_observe {
                            self.push_op(key, operation, prev_state, prev_value, None);
                        }
                        self.unlock(key).await;
                        self.observe_derived(key, &value, state).await;
                    }
                }
                None => {
                    if prev_value.is_none() {
                        return;
                    }
                    let derived = self
                        .graph
                        .get_mut(key)
                        .map(|n| std::mem::take(&mut n.derived))
                        .unwrap_or_default();
                    for child in derived {
                        self.observe(&child, None, state).await;
                    }
                    for dependant in self.graph.dependants_losing(key) {
                        self.take_down(&dependant, ValueState::Pending).await;
                    }
                    if let Some(node) = self.graph.get_mut(key) {
                        node.applied = None;
                        node.state = ValueState::Removed;
                    }
                    if !self.quiet_observe {
                        self.push_op(key, Operation::Delete, prev_state, prev_value, None);
                    }
                    self.graph.remove(key);
                }
            }
        })
    }

    /// The derived values of a value the southbound owns are the southbound's too: they
    /// exist with it, without any descriptor call, and satisfy dependencies.
    async fn observe_derived(&mut self, key: &str, value: &Value, state: ValueState) {
        let derived = match self.registry.for_key(key) {
            Some(descriptor) => descriptor.derived_values(key, value).await,
            None => Vec::new(),
        };
        let old = self
            .graph
            .get(key)
            .map(|n| n.derived.clone())
            .unwrap_or_default();
        let new_keys: Vec<Key> = derived.iter().map(|(k, _)| k.clone()).collect();
        if let Some(node) = self.graph.get_mut(key) {
            node.derived = new_keys.clone();
        }
        for gone in old.into_iter().filter(|k| !new_keys.contains(k)) {
            self.observe(&gone, None, state).await;
        }
        for (child, child_value) in derived {
            if self.graph.get(&child).is_some_and(|n| !n.is_external()) {
                continue;
            }
            self.graph
                .entry(&child, ValueOrigin::FromSouthbound)
                .derived_from = Some(key.to_owned());
            self.observe(&child, Some(child_value), state).await;
        }
    }

    async fn fail(
        &mut self,
        key: &str,
        operation: Operation,
        prev_state: ValueState,
        prev_value: Option<Value>,
        error: DescriptorError,
        descriptor: &Arc<dyn Descriptor>,
    ) {
        let retriable = descriptor.is_retriable(&error).await;
        let (attempts, retry) = self
            .graph
            .get(key)
            .map_or((0, None), |n| (n.attempts, n.retry));
        let retrying = retriable && retry.is_some_and(|r| attempts < r.max_attempts);
        let message = error.to_string();
        if let Some(node) = self.graph.get_mut(key) {
            node.state = if retrying {
                ValueState::Retrying
            } else {
                ValueState::Failed
            };
            node.error = Some(message.clone());
            node.last_txn = self.seq;
            // As Ligato: a value that failed to go is unavailable, its dependants PENDING.
            if operation == Operation::Delete {
                node.removal_failed = true;
            }
        }
        self.push_op(key, operation, prev_state, prev_value, Some(message));
        self.failed.push(key.to_owned());
        if self.stop_on_failure {
            self.stopped = true;
        }
    }

    fn record_failure(&mut self, key: &str, error: String) {
        if let Some(op) = self.ops.last_mut().filter(|op| op.key == key) {
            op.error = Some(error);
        }
        self.failed.push(key.to_owned());
        if self.stop_on_failure {
            self.stopped = true;
        }
    }

    /// Records a state change that calls no descriptor (PENDING, REMOVED, ...).
    fn mark(&mut self, key: &str, operation: Operation, state: ValueState) {
        let (prev_state, prev_value) = self.before(key);
        if let Some(node) = self.graph.get_mut(key) {
            node.state = state;
        }
        self.push_op(key, operation, prev_state, prev_value, None);
        self.set_noop();
    }

    /// Marks the operation just recorded as one that called no descriptor.
    fn set_noop(&mut self) {
        if let Some(op) = self.ops.last_mut() {
            op.noop = true;
        }
    }

    /// Whether `key` is, or is derived from, a value being re-created.
    fn in_recreation(&self, key: &str) -> bool {
        if self.recreating.is_empty() {
            return false;
        }
        let mut at = Some(key.to_owned());
        for _ in 0..64 {
            let Some(current) = at else {
                return false;
            };
            if self.recreating.contains(&current) {
                return true;
            }
            at = self
                .graph
                .get(&current)
                .and_then(|n| n.derived_from.clone());
        }
        false
    }

    fn before(&self, key: &str) -> (ValueState, Option<Value>) {
        self.graph
            .get(key)
            .map_or((ValueState::Nonexistent, None), |n| {
                (n.state, n.applied.clone())
            })
    }

    fn push_op(
        &mut self,
        key: &str,
        operation: Operation,
        prev_state: ValueState,
        prev_value: Option<Value>,
        error: Option<String>,
    ) {
        let (new_state, new_value, derived) = match self.graph.get_mut(key) {
            Some(node) => {
                node.last_txn = self.seq;
                (
                    node.state,
                    node.applied.clone(),
                    node.derived_from.is_some(),
                )
            }
            None => (ValueState::Removed, None, false),
        };
        // As Ligato: a re-creation's deletes, and the creates of what they deleted (a
        // derived value new with the re-created value is only created).
        let is_recreate = self.in_recreation(key)
            && match operation {
                Operation::Delete => {
                    self.recreated.insert(key.to_owned());
                    true
                }
                Operation::Create => self.recreated.contains(key),
                Operation::Update => false,
            };
        self.ops.push(RecordedOp {
            key: key.to_owned(),
            operation,
            prev_state,
            new_state,
            prev_value,
            new_value,
            error,
            derived,
            was_pending: prev_state == ValueState::Pending,
            is_recreate,
            is_revert: self.reverting,
            is_retry: self.retrying,
            noop: false,
        });
    }
}
