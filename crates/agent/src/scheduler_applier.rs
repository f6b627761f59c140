//! An applier that hands the agent's items to the KV scheduler: each feed batch is one
//! transaction, and each item is reported with its value's scheduler state, again whenever
//! a later transaction (a retry, a notification, a resync) changes it.

use super::applier::{Applier, Changed, Outcome};
use async_trait::async_trait;
use reactor_core::report::ReportState;
use reactor_kvscheduler::{KvScheduler, TxnError, TxnOptions, TxnRecord, ValueState, ValueStatus};
use serde_json::Value;
use tokio::sync::broadcast;

/// Items become desired values of the scheduler.
#[derive(Debug)]
pub struct SchedulerApplier {
    scheduler: KvScheduler,
    options: TxnOptions,
    records: broadcast::Receiver<TxnRecord>,
}

impl SchedulerApplier {
    pub fn new(scheduler: KvScheduler, options: TxnOptions) -> Self {
        let records = scheduler.subscribe();
        Self {
            scheduler,
            options,
            records,
        }
    }
}

/// Every key a transaction asked for or touched.
pub(super) fn touched(record: &TxnRecord) -> Vec<String> {
    let mut keys: Vec<String> = record
        .values
        .iter()
        .map(|v| v.key.clone())
        .chain(record.executed.iter().map(|op| op.key.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[async_trait]
impl Applier for SchedulerApplier {
    async fn apply_batch(&mut self, changes: Vec<(String, Option<Value>)>) -> Vec<Outcome> {
        let mut owned_by_southbound = Vec::new();
        for (key, _) in &changes {
            let state = self.scheduler.status(key).await.state;
            if matches!(state, ValueState::Obtained | ValueState::Discovered) {
                owned_by_southbound.push(key.clone());
            }
        }
        let keys: Vec<String> = changes.iter().map(|(key, _)| key.clone()).collect();
        let wanted: Vec<_> = changes
            .into_iter()
            .filter(|(key, _)| !owned_by_southbound.contains(key))
            .collect();
        // Per-value failures are in each value's status; only a refused batch is reported whole.
        if let Err(error @ (TxnError::ObtainedKey(_) | TxnError::ManagedKey(_))) = self
            .scheduler
            .transaction(wanted, self.options.clone())
            .await
        {
            return keys
                .iter()
                .map(|_| Outcome::new(ReportState::Failed, Some(error.to_string())))
                .collect();
        }
        let mut outcomes = Vec::with_capacity(keys.len());
        for key in keys {
            if owned_by_southbound.contains(&key) {
                outcomes.push(Outcome::new(
                    ReportState::Failed,
                    Some(format!("key {key} is owned by the southbound")),
                ));
                continue;
            }
            outcomes.push(outcome_of(&self.scheduler.status(&key).await));
        }
        outcomes
    }

    async fn changed(&mut self) -> Changed {
        match self.records.recv().await {
            Ok(record) => Changed::Keys(touched(&record)),
            Err(broadcast::error::RecvError::Lagged(_)) => Changed::All,
            // The scheduler lives as long as this applier holds it: never closed.
            Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
        }
    }

    async fn current(&mut self, key: &str) -> Option<Outcome> {
        Some(outcome_of(&self.scheduler.status(key).await))
    }
}

/// How a value's scheduler state is reported to the server.
pub fn outcome_of(status: &ValueStatus) -> Outcome {
    use ValueState::*;
    match status.state {
        Configured | Obtained | Discovered => Outcome::new(ReportState::Applied, None),
        Pending => {
            let waiting: Vec<String> = status
                .missing_dependencies
                .iter()
                .map(ToString::to_string)
                .collect();
            Outcome::new(
                ReportState::Pending,
                Some(format!("waiting for {}", waiting.join(", "))),
            )
        }
        Retrying => Outcome::new(
            ReportState::Pending,
            Some(format!(
                "retrying after: {}",
                status.error.as_deref().unwrap_or("an error")
            )),
        ),
        Missing => Outcome::new(
            ReportState::Pending,
            Some("missing from the southbound, to be repaired".to_owned()),
        ),
        Failed => Outcome::new(ReportState::Failed, status.error.clone()),
        Invalid => Outcome::new(
            ReportState::Failed,
            status.invalid.as_ref().map(ToString::to_string),
        ),
        Unimplemented => Outcome::new(
            ReportState::Failed,
            Some("no descriptor handles this key".to_owned()),
        ),
        Nonexistent | Removed => Outcome::new(ReportState::Removed, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_kvscheduler::testing::{interface, route, scheduler};
    use serde_json::json;

    #[tokio::test]
    async fn items_are_reported_with_their_scheduler_state() {
        let (scheduler, southbound) = scheduler().await;
        let mut applier = SchedulerApplier::new(scheduler, TxnOptions::default());
        let outcomes = applier
            .apply_batch(vec![
                (route("r"), Some(json!({"interface": "tap"}))),
                ("acl/web".to_owned(), Some(json!({}))),
            ])
            .await;
        assert_eq!(outcomes[0].state, ReportState::Pending);
        let message = outcomes[0].message.as_deref().unwrap_or_default();
        assert!(message.contains("outgoing-interface"), "{message}");
        assert_eq!(outcomes[1].state, ReportState::Failed);

        let outcomes = applier
            .apply_batch(vec![(interface("tap"), Some(json!({"type": "tap"})))])
            .await;
        assert_eq!(outcomes, vec![Outcome::new(ReportState::Applied, None)]);
        assert!(southbound.has(&route("r")), "the pending route followed");

        let outcomes = applier
            .apply_batch(vec![(route("r"), None), (interface("tap"), None)])
            .await;
        assert!(outcomes.iter().all(|o| o.state == ReportState::Removed));
        assert!(southbound.contents().is_empty());
    }
}
