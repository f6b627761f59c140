//! An applier that hands the agent's items to the KV scheduler: each feed batch is one
//! transaction, and each item is reported with its value's scheduler state, again whenever
//! a later transaction (a retry, a notification, a resync) changes it.

use super::applier::{Applier, Changed, Outcome};
use async_trait::async_trait;
use reactor_core::report::ReportState;
use reactor_kvscheduler::{
    Dependency, KvScheduler, RecordedOp, RefusedValue, TxnError, TxnOptions, TxnRecord, ValueState,
    ValueStatus,
};
use serde_json::Value;
use std::collections::HashMap;
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
    /// The batch is one transaction, and each item's outcome is what the transaction's
    /// record says of its value: the state its last operation left it in, with its error
    /// (an item whose key the southbound owns is refused alone, as a failed operation).
    async fn apply_batch(&mut self, changes: Vec<(String, Option<Value>)>) -> Vec<Outcome> {
        let keys: Vec<String> = changes.iter().map(|(key, _)| key.clone()).collect();
        let record = match self
            .scheduler
            .transaction(changes, self.options.clone())
            .await
        {
            Ok(record) => record,
            Err(TxnError::Failed { record, .. }) => *record,
            // A transaction is not refused whole; should it be, every item is.
            Err(error) => {
                return keys
                    .iter()
                    .map(|_| Outcome::new(ReportState::Failed, Some(error.to_string())))
                    .collect();
            }
        };
        let last: HashMap<&str, &RecordedOp> = record
            .executed
            .iter()
            .map(|op| (op.key.as_str(), op))
            .collect();
        let mut outcomes = Vec::with_capacity(keys.len());
        for key in &keys {
            let outcome = match last.get(key.as_str()) {
                Some(op) if op.new_state != ValueState::Pending => {
                    reported(key, op.new_state, op.error.clone(), &[])
                }
                // The record does not say what a PENDING value waits for, nor the state of
                // a value the transaction left as it was (no operation: unchanged, still
                // waiting, still failed): its status does.
                _ => outcome_of(&self.scheduler.status(key).await),
            };
            outcomes.push(outcome);
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
    let error = match status.state {
        ValueState::Invalid => status.invalid.as_ref().map(ToString::to_string),
        _ => status.error.clone(),
    };
    reported(
        &status.key,
        status.state,
        error,
        &status.missing_dependencies,
    )
}

/// How an item in `state` is reported, with the error of its value (a failure, or why it
/// is INVALID) and, PENDING, what it waits for.
fn reported(
    key: &str,
    state: ValueState,
    error: Option<String>,
    waiting: &[Dependency],
) -> Outcome {
    use ValueState::*;
    match state {
        Configured | Discovered => Outcome::new(ReportState::Applied, None),
        // An item never changes a value the southbound owns: the item was refused.
        Obtained => Outcome::new(
            ReportState::Failed,
            Some(error.unwrap_or_else(|| RefusedValue::Obtained(key.to_owned()).to_string())),
        ),
        Pending => {
            let waiting: Vec<String> = waiting.iter().map(ToString::to_string).collect();
            Outcome::new(
                ReportState::Pending,
                Some(format!("waiting for {}", waiting.join(", "))),
            )
        }
        Retrying => Outcome::new(
            ReportState::Pending,
            Some(format!(
                "retrying after: {}",
                error.as_deref().unwrap_or("an error")
            )),
        ),
        Missing => Outcome::new(
            ReportState::Pending,
            Some("missing from the southbound, to be repaired".to_owned()),
        ),
        Failed | Invalid => Outcome::new(ReportState::Failed, error),
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
    use reactor_kvscheduler::testing::{interface, route, scheduler, with_obtained};
    use serde_json::json;
    use std::collections::BTreeMap;

    #[tokio::test]
    async fn an_item_on_a_key_the_southbound_owns_is_refused_alone() {
        let (scheduler, southbound, eth0) = with_obtained("eth0").await;
        let mut applier = SchedulerApplier::new(scheduler, TxnOptions::default());
        let outcomes = applier
            .apply_batch(vec![
                (interface("tap"), Some(json!({"type": "tap"}))),
                (eth0.clone(), Some(json!({"mtu": 9000}))),
                (route("r"), Some(json!({"interface": "tap"}))),
            ])
            .await;
        let refused = Outcome::new(
            ReportState::Failed,
            Some(format!(
                "{eth0} is obtained from the southbound: a transaction cannot change it"
            )),
        );
        let applied = Outcome::new(ReportState::Applied, None);
        assert_eq!(outcomes, [applied.clone(), refused.clone(), applied]);
        assert_eq!(
            southbound.contents(),
            BTreeMap::from([
                (eth0.clone(), json!({"mtu": 1500})),
                (interface("tap"), json!({"type": "tap"})),
                (route("r"), json!({"interface": "tap"})),
            ])
        );

        // The batch's transaction names eth0, so the session asks again: still refused,
        // never reported applied for the southbound's own value.
        match applier.changed().await {
            Changed::Keys(keys) => assert!(keys.contains(&eth0), "{keys:?}"),
            Changed::All => panic!("the batch's record was missed"),
        }
        assert_eq!(applier.current(&eth0).await, Some(refused));
    }

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
