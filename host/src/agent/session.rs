//! One connection to the server: register, catch up (resume or re-list and diff), report
//! everything held, then follow the feed, applying and reporting in batches.

use super::AgentConfig;
use super::applier::Applier;
use super::state::{AgentState, HeldItem, StateError, report};
use crate::api::wire::ErrorCode;
use crate::api::{Client, ClientError};
use crate::nimbus::{AgentItem, AgentReport, FeedEvent, ReportState};
use futures::StreamExt;

/// Events applied together before the state is saved and the reports are sent: at most
/// this many, or what arrives within [`BATCH_WINDOW`] of the first (saving the state and
/// reporting after every single event would cost a write of the whole state per event).
const BATCH: usize = 512;
const BATCH_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    State(#[from] StateError),
}

/// Runs until the feed ends or fails; `Ok` means "connect again".
pub async fn run(
    client: &Client,
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
) -> Result<(), SessionError> {
    client
        .register_agent(&config.id, config.labels.clone())
        .await?;
    if state.revision == 0 || state.relist {
        relist(client, config, state, applier).await?;
    }
    // The server may have missed reports (it restarted, or a send failed): send them all.
    let all = state.reports(&config.id);
    if !all.is_empty() {
        client.report(&config.id, all).await?;
    }
    let feed = match client
        .agent_feed(&config.id, state.revision, state.known())
        .await
    {
        Err(e) if e.code() == Some(ErrorCode::Compacted) => return relist_next(state),
        other => other?,
    };
    tracing::info!(agent = %config.id, revision = state.revision, items = state.items.len(), "following the server");
    let mut batches = Box::pin(tokio_stream::StreamExt::chunks_timeout(
        feed,
        BATCH,
        BATCH_WINDOW,
    ));
    while let Some(batch) = batches.next().await {
        let mut reports = Vec::new();
        let mut changes = 0;
        let mut failure = None;
        for event in batch {
            match event {
                Ok(event) => {
                    let revision = event.revision();
                    changes += usize::from(!matches!(event, FeedEvent::Bookmark { .. }));
                    if let Some(report) = handle(config, state, applier, event) {
                        reports.push(report);
                    }
                    state.revision = revision;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        state.save()?;
        if changes > 0 {
            tracing::info!(agent = %config.id, revision = state.revision, items = state.items.len(), changes, "applied a batch");
        }
        if !reports.is_empty() {
            client.report(&config.id, reports).await?;
        }
        match failure {
            Some(e) if e.code() == Some(ErrorCode::Compacted) => return relist_next(state),
            Some(e) => return Err(e.into()),
            None => {}
        }
    }
    Ok(())
}

/// The server no longer has the changes since our revision: next time, start from a snapshot.
fn relist_next(state: &mut AgentState) -> Result<(), SessionError> {
    state.relist = true;
    state.save()?;
    Ok(())
}

/// Replaces what the agent holds with the server's snapshot: removes what went away while
/// the agent was not following, applies what is new or changed.
async fn relist(
    client: &Client,
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
) -> Result<(), SessionError> {
    let snapshot = client.agent_items(&config.id).await?;
    let wanted: std::collections::BTreeSet<&str> =
        snapshot.items.iter().map(|i| i.key.as_str()).collect();
    let gone: Vec<String> = state
        .items
        .keys()
        .filter(|key| !wanted.contains(key.as_str()))
        .cloned()
        .collect();
    let mut removed = Vec::new();
    for key in gone {
        removed.extend(remove(config, state, applier, &key));
    }
    // What the southbound holds beyond the state (applied just before a crash) goes too.
    let strays = match applier.retrieve() {
        Ok(keys) => keys,
        Err(e) => {
            tracing::warn!(agent = %config.id, error = %e, "cannot read what the southbound holds");
            Vec::new()
        }
    };
    for key in strays.iter().filter(|k| !wanted.contains(k.as_str())) {
        if let Err(e) = applier.remove(key) {
            tracing::warn!(agent = %config.id, key = %key, error = %e, "cannot remove a stray item");
        }
    }
    for item in snapshot.items {
        let current = state.items.get(&item.key).map(|held| held.version);
        if current != Some(item.version) {
            put(config, state, applier, item);
        }
    }
    state.revision = snapshot.revision;
    state.relist = false;
    state.save()?;
    tracing::info!(agent = %config.id, revision = state.revision, items = state.items.len(), "re-listed");
    if !removed.is_empty() {
        client.report(&config.id, removed).await?;
    }
    Ok(())
}

fn handle(
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
    event: FeedEvent,
) -> Option<AgentReport> {
    match event {
        FeedEvent::Put { item, .. } => Some(put(config, state, applier, item)),
        FeedEvent::Delete { key, .. } => remove(config, state, applier, &key),
        FeedEvent::Bookmark { .. } => None,
    }
}

fn put(
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
    item: AgentItem,
) -> AgentReport {
    let (item_state, message) = match applier.apply(&item.key, &item.value) {
        Ok(()) => (ReportState::Applied, None),
        Err(e) => {
            tracing::warn!(agent = %config.id, key = %item.key, error = %e, "cannot apply an item");
            (ReportState::Failed, Some(e.to_string()))
        }
    };
    let held = HeldItem {
        value: item.value,
        version: item.version,
        state: item_state,
        message,
    };
    let report = report(&config.id, &item.key, &held);
    state.items.insert(item.key, held);
    report
}

/// Removes `key`; the report says so, which clears the agent's entry on the server.
fn remove(
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
    key: &str,
) -> Option<AgentReport> {
    if let Err(e) = applier.remove(key) {
        tracing::warn!(agent = %config.id, key, error = %e, "cannot remove an item");
    }
    let held = state.items.remove(key)?;
    Some(AgentReport {
        state: ReportState::Removed,
        message: None,
        ..report(&config.id, key, &held)
    })
}
