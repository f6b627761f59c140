//! The scheduler in process: what the native and WASM harnesses share, the scheduler-side
//! actions and reads, apart from how each gets its descriptors.

use super::access::SouthboundAccess;
use super::args::MockDescArgs;
use super::harness::{Harness, Outcome};
use super::scenario::{Action, Retry};
use async_trait::async_trait;
use reactor_host::kvscheduler::{
    Dump, KvScheduler, Resync, RetryOptions, TimelineEntry, TxnError, TxnOptions, TxnRecord,
    ValueStatus,
};

/// How an in-process harness makes and registers its descriptors.
#[async_trait]
pub trait Descriptors: Send {
    /// Registers the scenario's descriptors; called once before the first step.
    async fn start(
        &mut self,
        scheduler: &KvScheduler,
        descriptors: &[MockDescArgs],
    ) -> anyhow::Result<()>;
    /// Registers a descriptor while running (a new one, or a new version of one); true if
    /// it is new.
    async fn register(
        &mut self,
        scheduler: &KvScheduler,
        args: &MockDescArgs,
    ) -> anyhow::Result<bool>;
    /// The mock southbound the descriptors configure, once started.
    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess>;
}

/// A scheduler in this process with descriptors made by `D`.
pub struct InProcess<D> {
    pub scheduler: KvScheduler,
    pub descriptors: D,
}

impl<D> InProcess<D> {
    pub fn with(descriptors: D) -> Self {
        Self {
            scheduler: KvScheduler::new(),
            descriptors,
        }
    }
}

/// What a transaction's result reports: failed keys (values it refused included), keys a
/// notification was refused for, reverted or not.
pub fn outcome<T>(result: Result<T, TxnError>) -> Outcome {
    match result {
        Ok(_) => Outcome::default(),
        Err(TxnError::Failed { record, reverted }) => Outcome {
            failed: record.failures().into_iter().map(|(k, _)| k).collect(),
            refused: Vec::new(),
            reverted,
        },
        Err(TxnError::ManagedKey(key)) => Outcome {
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

#[async_trait]
impl<D: Descriptors> Harness for InProcess<D> {
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()> {
        self.descriptors.start(&self.scheduler, descriptors).await
    }

    async fn act(&mut self, action: &Action) -> anyhow::Result<Outcome> {
        let scheduler = &self.scheduler;
        Ok(match action {
            // A new descriptor is followed by a downstream resync, as the agent does (see
            // [`Action::Register`]).
            Action::Register(args) => {
                if self.descriptors.register(scheduler, args).await? {
                    outcome(scheduler.resync(Resync::Downstream).await)
                } else {
                    Outcome::default()
                }
            }
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
            Action::Notify(key, value) => {
                outcome(scheduler.notify(key.clone(), value.clone()).await)
            }
            Action::Wait(duration) => {
                tokio::time::sleep(*duration).await;
                Outcome::default()
            }
            Action::SbSet { .. } | Action::PlanError { .. } => Outcome::default(),
        })
    }

    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess> {
        self.descriptors.sb()
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

    async fn history(&mut self) -> anyhow::Result<Vec<TxnRecord>> {
        Ok(self.scheduler.history().await)
    }
}
