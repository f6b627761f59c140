//! The native harness: the scheduler in process with native mock descriptors, and the
//! pieces every in-process harness shares.

use super::access::SouthboundAccess;
use super::args::MockDescArgs;
use super::descriptor::{MockDescriptor, MockSouthbound};
use super::harness::Harness;
use super::scenario::Action;
use super::southbound::{MockOperation, Origin, PlannedError, SouthboundState};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Key, KvScheduler, Resync, RetryOptions, TxnError, TxnOptions, TxnRecord, Value, ValueStatus,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A scheduler with mock descriptors over one mock southbound.
#[derive(Default)]
pub struct NativeHarness {
    pub scheduler: KvScheduler,
    pub sb: Arc<MockSouthbound>,
}

/// The keys of failed operations of a transaction's outcome.
pub fn failed_keys<T>(result: Result<T, TxnError>) -> Vec<Key> {
    match result {
        Ok(_) => Vec::new(),
        Err(TxnError::Failed { record, .. }) => {
            record.failures().into_iter().map(|(k, _)| k).collect()
        }
        Err(TxnError::ObtainedKey(key) | TxnError::ManagedKey(key)) => vec![key],
    }
}

/// Transaction options of a scenario's `Txn`.
pub fn txn_options(revert: bool, retry: Option<(std::time::Duration, u32)>) -> TxnOptions {
    if revert {
        return TxnOptions::revert();
    }
    TxnOptions::best_effort(retry.map(|(period, max_attempts)| RetryOptions {
        period,
        max_attempts,
        exponential_backoff: false,
    }))
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

/// Runs a scheduler-side action; shared by the in-process harnesses.
pub async fn act_on_scheduler(scheduler: &KvScheduler, action: &Action) -> Vec<Key> {
    match action {
        Action::Txn {
            values,
            revert,
            retry,
        } => failed_keys(
            scheduler
                .transaction(values.clone(), txn_options(*revert, *retry))
                .await,
        ),
        Action::Resync { values, retry } => failed_keys(
            scheduler
                .resync_with(Resync::Full(values.clone()), txn_options(false, *retry))
                .await,
        ),
        Action::DownstreamResync => failed_keys(scheduler.resync(Resync::Downstream).await),
        Action::Notify(key, value) => {
            failed_keys(scheduler.notify(key.clone(), value.clone()).await)
        }
        Action::Wait(duration) => {
            tokio::time::sleep(*duration).await;
            Vec::new()
        }
        Action::SbSet { .. } | Action::PlanError { .. } => Vec::new(),
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

    async fn act(&mut self, action: &Action) -> anyhow::Result<Vec<Key>> {
        if act_on_southbound(self.sb.as_ref(), action)? {
            return Ok(Vec::new());
        }
        Ok(act_on_scheduler(&self.scheduler, action).await)
    }

    async fn status(&mut self, key: &str) -> anyhow::Result<ValueStatus> {
        Ok(self.scheduler.status(key).await)
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
