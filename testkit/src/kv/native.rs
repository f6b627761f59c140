//! The native harness: the scheduler in process with native mock descriptors.

use super::args::MockDescArgs;
use super::descriptor::MockDescriptor;
use super::harness::Harness;
use super::scenario::Action;
use super::southbound::{MockOperation, MockSouthbound, PlannedError};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Key, KvScheduler, Resync, RetryOptions, TxnError, TxnOptions, Value, ValueOrigin, ValueState,
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

/// Applies the southbound-side actions shared by the in-process harnesses.
pub fn act_on_southbound(sb: &MockSouthbound, action: &Action) -> bool {
    match action {
        Action::SbSet {
            key,
            value,
            from_sb,
            derived,
            metadata,
        } => {
            let origin = if *from_sb {
                ValueOrigin::FromSouthbound
            } else {
                ValueOrigin::FromNorthbound
            };
            sb.set_value(key, value.clone(), metadata.clone(), origin, *derived);
            true
        }
        Action::PlanError {
            key,
            error,
            then_set,
        } => {
            sb.plan_error(
                key,
                PlannedError {
                    error: error.clone(),
                    then_set: then_set.clone(),
                },
            );
            true
        }
        _ => false,
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
        if act_on_southbound(&self.sb, action) {
            return Ok(Vec::new());
        }
        Ok(act_on_scheduler(&self.scheduler, action).await)
    }

    async fn state(&mut self, key: &str) -> anyhow::Result<ValueState> {
        Ok(self.scheduler.status(key).await.state)
    }

    async fn southbound(&mut self) -> anyhow::Result<BTreeMap<Key, Value>> {
        Ok(self.sb.contents())
    }

    async fn pop_ops(&mut self) -> anyhow::Result<Vec<MockOperation>> {
        Ok(self.sb.pop_history())
    }

    async fn invalid_keys(&mut self) -> anyhow::Result<Vec<Key>> {
        Ok(self.sb.keys_with_invalid_data().into_iter().collect())
    }
}
