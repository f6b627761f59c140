//! The agents a server knows: registered as objects of kind `Agent` (name = agent id,
//! labels = its labels), alive while their heartbeats keep coming.

use super::NimbusError;
use super::fanout::{Entry, Fanout};
use super::kinds::AGENT_KIND;
use super::report_book::ReportBook;
use super::reports::{ReportState, SheetEntry};
use crate::object::{ApplyRequest, Object, Selector, validate_name};
use crate::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What `reactor-host agents` shows of one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    /// A heartbeat came within the agent's own time-to-live.
    pub connected: bool,
    /// Milliseconds since the Unix epoch of the last heartbeat, if any.
    pub last_seen_ms: Option<u64>,
    /// Items meant for this agent, by where the agent says they are; `pending` counts
    /// the items it has not reported on at their current version.
    pub applied: usize,
    pub pending: usize,
    pub failed: usize,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn check_id(id: &str) -> Result<(), NimbusError> {
    validate_name(id).map_err(|e| NimbusError::Invalid(format!("agent id {id:?}: {e}")))
}

/// Registers `id` with its labels (replacing earlier ones); its heartbeat status is kept.
pub async fn register(
    store: &dyn Store,
    id: &str,
    labels: BTreeMap<String, String>,
) -> Result<Object, NimbusError> {
    check_id(id)?;
    let mut applied = store
        .apply(vec![ApplyRequest {
            kind: AGENT_KIND.to_owned(),
            name: id.to_owned(),
            labels,
            spec: json!({}),
            expected_revision: None,
            owner: None,
        }])
        .await?;
    applied
        .pop()
        .map(|a| a.object)
        .ok_or_else(|| NimbusError::Store(StoreError::Backend("the store applied nothing".into())))
}

/// The longest a heartbeat may count an agent connected for.
pub const MAX_HEARTBEAT_TTL: Duration = Duration::from_secs(24 * 3600);

/// Records a heartbeat; the agent counts as connected for `ttl` after it (at most a day, at
/// least a millisecond: an agent that stopped must show as gone within a day).
pub async fn heartbeat(store: &dyn Store, id: &str, ttl: Duration) -> Result<(), NimbusError> {
    check_id(id)?;
    if ttl.is_zero() || ttl > MAX_HEARTBEAT_TTL {
        return Err(NimbusError::Invalid(format!(
            "ttlMs {} is out of range: from 1 to {}",
            ttl.as_millis(),
            MAX_HEARTBEAT_TTL.as_millis()
        )));
    }
    let status = json!({"lastSeenMs": now_ms(), "ttlMs": ttl.as_millis() as u64});
    store.set_status(AGENT_KIND, id, status, None).await?;
    Ok(())
}

/// The labels of a registered agent.
pub async fn labels_of(
    store: &dyn Store,
    id: &str,
) -> Result<BTreeMap<String, String>, NimbusError> {
    check_id(id)?;
    match store.get(AGENT_KIND, id).await? {
        Some(agent) => Ok(agent.labels),
        None => Err(NimbusError::Store(StoreError::NotFound {
            kind: AGENT_KIND.to_owned(),
            name: id.to_owned(),
        })),
    }
}

/// Every registered agent with its liveness and what it has applied.
pub async fn list(
    store: &dyn Store,
    fanout: &Fanout,
    book: &ReportBook,
) -> Result<Vec<AgentView>, NimbusError> {
    let agents = store.list(AGENT_KIND, &Selector::default()).await?.items;
    // The items as the fan-out holds them and the reports as the book does, decoded once:
    // no listing of every item and every report per call.
    let items = fanout.items().await?;
    book.synced().await;
    let reports = book.by_agent();
    let now = now_ms();
    let none = HashMap::new();
    Ok(agents
        .iter()
        .map(|agent| {
            view(
                agent,
                &items,
                reports.get(&agent.name).unwrap_or(&none),
                now,
            )
        })
        .collect())
}

fn view(
    agent: &Object,
    items: &[Arc<Entry>],
    reports: &HashMap<String, SheetEntry>,
    now: u64,
) -> AgentView {
    let last_seen_ms = agent.status.get("lastSeenMs").and_then(|v| v.as_u64());
    let ttl = agent
        .status
        .get("ttlMs")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let mut view = AgentView {
        id: agent.name.clone(),
        labels: agent.labels.clone(),
        connected: last_seen_ms.is_some_and(|seen| now <= seen.saturating_add(ttl)),
        last_seen_ms,
        applied: 0,
        pending: 0,
        failed: 0,
    };
    for item in items {
        if !item.target.selects(&agent.name, &agent.labels) {
            continue;
        }
        let report = reports.get(&item.key);
        match report {
            Some(r) if r.revision == item.version && r.state == ReportState::Applied => {
                view.applied += 1
            }
            Some(r) if r.revision == item.version && r.state == ReportState::Failed => {
                view.failed += 1
            }
            _ => view.pending += 1,
        }
    }
    view
}
