//! The native harness: the scheduler in process with native mock descriptors, and the
//! pieces every in-process harness shares.

use super::access::SouthboundAccess;
use super::args::MockDescArgs;
use super::descriptor::{MockDescriptor, MockSouthbound};
use super::harness::{Harness, Outcome};
use super::scenario::{Action, Retry};
use super::southbound::{MockOperation, Origin, PlannedError, SouthboundState};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Dump, Key, KvScheduler, Resync, RetryOptions, TimelineEntry, TxnError, TxnOptions, TxnRecord,
    Value, ValueStatus,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A scheduler with mock descriptors over one mock southbound.
#[derive(Default)]
pub struct NativeHarness {
    pub scheduler: KvScheduler,
    pub sb: Arc<MockSouthbound>,
}

/// What a transaction's result reports: failed keys, refused ones, reverted or not.
pub fn outcome<T>(result: Result<T, TxnError>) -> Outcome {
    match result {
        Ok(_) => Outcome::default(),
        Err(TxnError::Failed { record, reverted }) => Outcome {
            failed: record.failures().into_iter().map(|(k, _)| k).collect(),
            refused: Vec::new(),
            reverted,
        },
        Err(TxnError::ObtainedKey(key) | TxnError::ManagedKey(key)) => Outcome {
            refused: vec![key],
            ..Outcome::default()
        },
    }
}

/// Transaction options of a scenario's `Txn`.
pub fn txn_options(revert: bool, retry: Option<Retry>) -> TxnOptions {
    if revert {
        return TxnOptions::revert();
    }
    TxnOptions::best_effort(retry.map(|retry| RetryOptions {
        period: retry.period,
        max_attempts: retry.attempts,
        exponential_backoff: retry.backoff,
    }))
}

/// After registering a descriptor: a new one is followed by a downstream resync, as the
/// agent does (see [`Action::Register`]).
pub async fn after_register(scheduler: &KvScheduler, new: bool) -> Outcome {
    if !new {
        return Outcome::default();
    }
    outcome(scheduler.resync(Resync::Downstream).await)
}

/// Applies the southbound-side actions (the same on every harness); false for the others.
pub fn act_on_southbound(sb: &impl SouthboundAccess, action: &Action) -> anyhow::Result<bool> {
    match action {
        Action::SbSet {
            key,
            value,
            from_sb,
            metadata,
        } => {
            let origin = if *from_sb {
                Origin::FromSouthbound
            } else {
                Origin::FromNorthbound
            };
            sb.update(|state| state.set(key, value.clone(), metadata.clone(), origin))?;
            Ok(true)
        }
        Action::PlanError {
            key,
            error,
            then_set,
        } => {
            let planned = PlannedError {
                error: error.clone(),
                then_set: then_set.clone(),
            };
            sb.update(|state| state.plan_error(key, planned))?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Runs a scheduler-side action (not `Register`, which each harness does its way);
/// shared by the in-process harnesses.
pub async fn act_on_scheduler(scheduler: &KvScheduler, action: &Action) -> Outcome {
    match action {
        Action::Txn {
            values,
            revert,
            retry,
        } => outcome(
            scheduler
                .transaction(values.clone(), txn_options(*revert, *retry))
                .await,
        ),
        Action::Resync { values, retry } => outcome(
            scheduler
                .resync_with(Resync::Full(values.clone()), txn_options(false, *retry))
                .await,
        ),
        Action::DownstreamResync => outcome(scheduler.resync(Resync::Downstream).await),
        Action::Notify(key, value) => outcome(scheduler.notify(key.clone(), value.clone()).await),
        Action::Wait(duration) => {
            tokio::time::sleep(*duration).await;
            Outcome::default()
        }
        Action::SbSet { .. } | Action::PlanError { .. } | Action::Register(_) => Outcome::default(),
    }
}

/// What every harness reads from the southbound: contents, operations, wrong calls.
pub fn southbound_contents(sb: &impl SouthboundAccess) -> anyhow::Result<BTreeMap<Key, Value>> {
    sb.update(|state| state.contents())
}

pub fn pop_operations(sb: &impl SouthboundAccess) -> anyhow::Result<Vec<MockOperation>> {
    sb.update(|state| std::mem::take(&mut state.history))
}

pub fn invalid_keys(sb: &impl SouthboundAccess) -> anyhow::Result<Vec<Key>> {
    sb.update(|state: &mut SouthboundState| state.invalid.iter().cloned().collect())
}

#[async_trait]
impl Harness for NativeHarness {
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()> {
        for args in descriptors {
            let descriptor = MockDescriptor::new(args.clone(), self.sb.clone());
            self.scheduler
                .register_descriptor(Arc::new(descriptor))
                .await;
        }
        Ok(())
    }

    async fn act(&mut self, action: &Action) -> anyhow::Result<Outcome> {
        if act_on_southbound(self.sb.as_ref(), action)? {
            return Ok(Outcome::default());
        }
        if let Action::Register(args) = action {
            let new = !self.scheduler.descriptors().await.contains(&args.name);
            let descriptor = MockDescriptor::new(args.clone(), self.sb.clone());
            self.scheduler
                .register_descriptor(Arc::new(descriptor))
                .await;
            return Ok(after_register(&self.scheduler, new).await);
        }
        Ok(act_on_scheduler(&self.scheduler, action).await)
    }

    async fn status(&mut self, key: &str) -> anyhow::Result<ValueStatus> {
        Ok(self.scheduler.status(key).await)
    }

    async fn dump(&mut self) -> anyhow::Result<Dump> {
        Ok(self.scheduler.dump().await)
    }

    async fn timeline(&mut self, key: &str) -> anyhow::Result<Vec<TimelineEntry>> {
        Ok(self.scheduler.timeline(key).await)
    }

    async fn southbound(&mut self) -> anyhow::Result<BTreeMap<Key, Value>> {
        southbound_contents(self.sb.as_ref())
    }

    async fn pop_ops(&mut self) -> anyhow::Result<Vec<MockOperation>> {
        pop_operations(self.sb.as_ref())
    }

    async fn invalid_keys(&mut self) -> anyhow::Result<Vec<Key>> {
        invalid_keys(self.sb.as_ref())
    }

    async fn history(&mut self) -> anyhow::Result<Vec<TxnRecord>> {
        Ok(self.scheduler.history().await)
    }
}
