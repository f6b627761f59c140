//! Removing an agent, by hand or once unseen for a while, with its reports on every item.

use super::NimbusError;
use super::agents::{check_id, last_seen_ms, now_ms};
use super::kinds::AGENT_KIND;
use super::report_book::ReportBook;
use super::reports::withdraw_agent;
use reactor_core::object::Selector;
use reactor_store::{Store, StoreError};
use std::sync::Arc;
use std::time::Duration;

/// Removes agent `id`: deletes its `Agent` object, then withdraws its reports, so that the
/// owners' reactors hear each as `removed` and their propagation stops counting it. An agent
/// not registered is [`StoreError::NotFound`] (what is left of its reports, from a removal cut
/// short, is withdrawn all the same).
pub async fn remove(store: &dyn Store, book: &ReportBook, id: &str) -> Result<(), NimbusError> {
    check_id(id)?;
    match store.delete(AGENT_KIND, id, None).await {
        Ok(_) => {}
        Err(e) if matches!(e.root(), StoreError::NotFound { .. }) => {
            withdraw(store, book, id).await?;
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    }
    withdraw(store, book, id).await?;
    tracing::info!(agent = %id, "agent removed");
    Ok(())
}

/// Withdraws the reports of `id`; the book hears each as `removed` at once.
async fn withdraw(store: &dyn Store, book: &ReportBook, id: &str) -> Result<(), NimbusError> {
    let absorb = |name: String, revision, sheet| book.absorb(&name, revision, sheet);
    withdraw_agent(store, id, &absorb).await
}

/// Removes every agent not seen for `after` or longer at `now` (ms since the Unix epoch):
/// its last heartbeat, or its registration when it never sent one. Each delete holds only
/// if the agent did not change since it was read (a heartbeat meanwhile keeps it), so
/// replicas removing at once do no harm: one of them removes each agent. Answers the ids
/// removed.
pub async fn remove_unseen(
    store: &dyn Store,
    book: &ReportBook,
    after: Duration,
    now: u64,
) -> Result<Vec<String>, NimbusError> {
    let agents = store.list(AGENT_KIND, &Selector::default()).await?.items;
    let after = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
    let mut removed = Vec::new();
    for agent in agents {
        let Some(seen) = last_seen_ms(&agent) else {
            continue;
        };
        if now.saturating_sub(seen) < after {
            continue;
        }
        match store
            .delete(AGENT_KIND, &agent.name, Some(agent.meta.revision))
            .await
        {
            Ok(_) => {}
            // Seen again, or removed by another replica or by hand.
            Err(e) if e.is_conflict() || matches!(e.root(), StoreError::NotFound { .. }) => {
                continue;
            }
            Err(e) => return Err(e.into()),
        }
        withdraw(store, book, &agent.name).await?;
        tracing::info!(agent = %agent.name, unseen_ms = now.saturating_sub(seen), "agent not seen for too long: removed");
        removed.push(agent.name);
    }
    Ok(removed)
}

/// How often [`remove_unseen_every`] looks for agents to remove: a tenth of `after`, within
/// a second and a minute.
pub fn unseen_check_interval(after: Duration) -> Duration {
    (after / 10).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// Removes the agents not seen for `after`, now and then every [`unseen_check_interval`],
/// until the task is dropped with the runtime.
pub async fn remove_unseen_every(store: Arc<dyn Store>, book: ReportBook, after: Duration) {
    remove_unseen_with(store, book, after, now_ms).await
}

/// [`remove_unseen_every`] with `clock` (ms since the Unix epoch) for the time now.
pub async fn remove_unseen_with(
    store: Arc<dyn Store>,
    book: ReportBook,
    after: Duration,
    clock: impl Fn() -> u64,
) {
    let mut ticks = tokio::time::interval(unseen_check_interval(after));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Err(error) = remove_unseen(store.as_ref(), &book, after, clock()).await {
            tracing::warn!(%error, "cannot remove the agents not seen for too long");
        }
    }
}

#[cfg(test)]
mod tests;
