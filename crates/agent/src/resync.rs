//! When the agent's scheduler compares the southbound with what it wants and repairs the
//! difference: a full resync at start, then a downstream one every period.

use super::local::LocalValues;
use super::state::AgentState;
use reactor_kvscheduler::{KvScheduler, Resync};
use std::time::Duration;

/// What the agent wanted before it stopped (held items and local values) becomes the
/// scheduler's desired state; values configured by an earlier life and no longer wanted
/// are removed, missing ones created.
pub async fn at_start(scheduler: &KvScheduler, state: &AgentState, local: &LocalValues) {
    let mut desired: Vec<(String, serde_json::Value)> = local.all().into_iter().collect();
    desired.extend(
        state
            .items()
            .iter()
            .map(|(key, held)| (key.clone(), held.value.clone())),
    );
    match scheduler.resync(Resync::Full(desired)).await {
        Ok(record) => {
            tracing::info!(
                seq = record.seq,
                operations = record.executed.len(),
                "resynced at start"
            )
        }
        // Per-value failures are in the values' states, reported with the items.
        Err(error) => tracing::warn!(%error, "resync at start left failures"),
    }
}

/// Retrieves and repairs every `period`, so that drift nobody notified is healed.
pub async fn every(scheduler: KvScheduler, period: Duration) {
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match scheduler.resync(Resync::Downstream).await {
            Ok(record) if !record.executed.is_empty() => {
                tracing::info!(
                    seq = record.seq,
                    operations = record.executed.len(),
                    "periodic resync repaired drift"
                )
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "periodic resync left failures"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_kvscheduler::testing::{interface, scheduler};
    use reactor_kvscheduler::{TxnOptions, ValueState};
    use serde_json::json;

    #[tokio::test(start_paused = true)]
    async fn drift_is_healed_by_the_periodic_resync_and_not_before() {
        let (scheduler, southbound) = scheduler().await;
        scheduler
            .transaction(
                vec![(interface("tap"), Some(json!({"type": "tap"})))],
                TxnOptions::default(),
            )
            .await
            .expect("configured");
        southbound.remove_behind_back(&interface("tap"));
        let task = tokio::spawn(every(scheduler.clone(), Duration::from_secs(60)));

        tokio::time::sleep(Duration::from_secs(59)).await;
        assert!(
            !southbound.has(&interface("tap")),
            "repaired before the period"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            southbound.has(&interface("tap")),
            "not repaired after the period"
        );
        assert_eq!(
            scheduler.status(&interface("tap")).await.state,
            ValueState::Configured
        );
        task.abort();
    }
}
