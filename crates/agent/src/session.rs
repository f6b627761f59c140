//! One connection to the server: register, catch up (resume or re-list and diff), report
//! everything held, then follow the feed, applying and reporting in batches.

use super::AgentConfig;
use super::applier::{Applier, Changed};
use super::state::{AgentState, HeldItem, StateError, report};
use super::uplink::Uplink;
use futures::StreamExt;
use reactor_client::{Client, ClientError};
use reactor_core::feed::{AgentItem, FeedEvent};
use reactor_core::report::{AgentReport, ReportState};
use reactor_core::wire::ErrorCode;

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
    uplink: &Uplink,
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
) -> Result<(), SessionError> {
    client
        .register_agent(&config.id, config.labels.clone())
        .await?;
    if state.revision == 0 || state.relist {
        relist(client, uplink, config, state, applier).await?;
    }
    // Outcomes may have moved on while the agent was away (retries, notifications, resync).
    refresh(&config.id, state, applier, Changed::All).await;
    state.save()?;
    // The server may have missed reports (a crash kept a `removed` from being sent): send
    // them all, as all, so that it drops any other it holds for this agent.
    uplink.send_all(state.reports(&config.id));
    let feed = match client
        .agent_feed(&config.id, state.revision, state.known())
        .await
    {
        Err(e) if e.code() == Some(ErrorCode::Compacted) => return relist_next(state),
        other => other?,
    };
    tracing::info!(agent = %config.id, revision = state.revision, items = state.items().len(), "following the server");
    let mut batches = Box::pin(tokio_stream::StreamExt::chunks_timeout(
        feed,
        BATCH,
        BATCH_WINDOW,
    ));
    loop {
        let batch = tokio::select! {
            batch = batches.next() => match batch {
                Some(batch) => batch,
                None => break,
            },
            changed = applier.changed() => {
                let reports = refresh(&config.id, state, applier, changed).await;
                if !reports.is_empty() {
                    state.save()?;
                    uplink.send(reports);
                }
                continue;
            }
        };
        let mut changes = Vec::new();
        let mut revision = None;
        let mut failure = None;
        for event in batch {
            match event {
                Ok(event) => {
                    revision = Some(event.revision());
                    match event {
                        FeedEvent::Put { item, .. } => changes.push(Change::Put(item)),
                        FeedEvent::Delete { key, .. } => changes.push(Change::Delete(key)),
                        FeedEvent::Bookmark { .. } => {}
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let count = changes.len();
        let reports = apply(config, state, applier, changes).await;
        if let Some(revision) = revision {
            state.revision = revision;
        }
        state.save()?;
        if count > 0 {
            tracing::info!(agent = %config.id, revision = state.revision, items = state.items().len(), changes = count, "applied a batch");
        }
        if !reports.is_empty() {
            uplink.send(reports);
        }
        match failure {
            Some(e) if e.code() == Some(ErrorCode::Compacted) => return relist_next(state),
            Some(e) => return Err(e.into()),
            None => {}
        }
    }
    Ok(())
}

/// Takes the applier's word on the held items named (each at most once): the reports of
/// those whose outcome changed.
async fn refresh(
    agent: &str,
    state: &mut AgentState,
    applier: &mut dyn Applier,
    changed: Changed,
) -> Vec<AgentReport> {
    let keys: Vec<String> = match changed {
        Changed::Keys(keys) => keys,
        Changed::All => state.items().keys().cloned().collect(),
    };
    let mut reports = Vec::new();
    for key in keys {
        let Some(held) = state.items().get(&key) else {
            continue;
        };
        let Some(outcome) = applier.current(&key).await else {
            continue;
        };
        // A removal is the feed's to report, when the item goes.
        if outcome.state == ReportState::Removed
            || (outcome.state == held.state && outcome.message == held.message)
        {
            continue;
        }
        let Some(held) = state.get_mut(&key) else {
            continue;
        };
        held.state = outcome.state;
        held.message = outcome.message;
        reports.push(report(agent, &key, held));
    }
    reports
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
    uplink: &Uplink,
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
) -> Result<(), SessionError> {
    let snapshot = client.agent_items(&config.id).await?;
    let wanted: std::collections::BTreeSet<String> =
        snapshot.items.iter().map(|i| i.key.clone()).collect();
    let gone: Vec<String> = state
        .items()
        .keys()
        .filter(|key| !wanted.contains(key.as_str()))
        .cloned()
        .collect();
    let mut changes: Vec<Change> = gone.into_iter().map(Change::Delete).collect();
    for item in snapshot.items {
        let current = state.items().get(&item.key).map(|held| held.version);
        if current != Some(item.version) {
            changes.push(Change::Put(item));
        }
    }
    // What the southbound holds beyond the state (applied just before a crash) goes too.
    let held: std::collections::BTreeSet<String> = state.items().keys().cloned().collect();
    match applier.retrieve().await {
        Ok(keys) => changes.extend(
            keys.into_iter()
                .filter(|k| !wanted.contains(k.as_str()) && !held.contains(k))
                .map(Change::Delete),
        ),
        Err(e) => {
            tracing::warn!(agent = %config.id, error = %e, "cannot read what the southbound holds")
        }
    }
    // What was held is reported by the caller; the removals are reported here.
    let removed: Vec<AgentReport> = apply(config, state, applier, changes)
        .await
        .into_iter()
        .filter(|r| r.state == ReportState::Removed)
        .collect();
    state.revision = snapshot.revision;
    state.relist = false;
    state.save()?;
    tracing::info!(agent = %config.id, revision = state.revision, items = state.items().len(), "re-listed");
    if !removed.is_empty() {
        uplink.send(removed);
    }
    Ok(())
}

/// One item change from the feed or a re-list.
enum Change {
    Put(AgentItem),
    Delete(String),
}

/// The last change of each key, in the order of those last changes: a batch says what each
/// item is now, so an item put and withdrawn while the agent was away (a put then a delete
/// of one key in one batch) is a delete, never a put the applier might order last.
fn last_per_key(changes: Vec<Change>) -> Vec<Change> {
    let mut seen = std::collections::HashSet::new();
    let mut last: Vec<Change> = changes
        .into_iter()
        .rev()
        .filter(|change| seen.insert(change.key().to_owned()))
        .collect();
    last.reverse();
    last
}

impl Change {
    fn key(&self) -> &str {
        match self {
            Change::Put(item) => &item.key,
            Change::Delete(key) => key,
        }
    }
}

/// Applies a batch of changes and holds their outcome; reports for the items put, and a
/// `removed` report for each held item that went (it clears the agent's entry upstream).
async fn apply(
    config: &AgentConfig,
    state: &mut AgentState,
    applier: &mut dyn Applier,
    changes: Vec<Change>,
) -> Vec<AgentReport> {
    let changes = last_per_key(changes);
    if changes.is_empty() {
        return Vec::new();
    }
    let batch = changes
        .iter()
        .map(|change| match change {
            Change::Put(item) => (item.key.clone(), Some(item.value.clone())),
            Change::Delete(key) => (key.clone(), None),
        })
        .collect();
    let outcomes = applier.apply_batch(batch).await;
    let mut reports = Vec::new();
    for (change, outcome) in changes.into_iter().zip(outcomes) {
        if outcome.state == ReportState::Failed {
            let key = change.key();
            tracing::warn!(agent = %config.id, key, error = ?outcome.message, "cannot apply an item change");
        }
        match change {
            Change::Put(item) => {
                let held = HeldItem {
                    value: item.value,
                    version: item.version,
                    state: outcome.state,
                    message: outcome.message,
                };
                reports.push(report(&config.id, &item.key, &held));
                state.insert(item.key, held);
            }
            Change::Delete(key) => {
                if let Some(held) = state.remove(&key) {
                    reports.push(AgentReport {
                        state: ReportState::Removed,
                        message: None,
                        ..report(&config.id, &key, &held)
                    });
                }
            }
        }
    }
    reports
}
