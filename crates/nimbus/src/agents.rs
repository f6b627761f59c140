//! The agents a server knows: registered as objects of kind `Agent` (name = agent id,
//! labels = its labels), alive while their heartbeats keep coming.

use super::NimbusError;
use super::fanout::{Entry, Fanout};
use super::kinds::AGENT_KIND;
use super::report_book::ReportBook;
use super::reports::ReportState;
use reactor_core::object::{ApplyRequest, Object, Selector, validate_name};
use reactor_store::{Store, StoreError};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

pub use reactor_core::agent_view::AgentView;

pub(crate) use reactor_core::clock::now_ms;

pub(crate) fn check_id(id: &str) -> Result<(), NimbusError> {
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
            annotations: Default::default(),
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

/// When `agent` was last seen, in ms since the Unix epoch: its last heartbeat, or its
/// registration when it never sent one.
pub(crate) fn last_seen_ms(agent: &Object) -> Option<u64> {
    if let Some(seen) = agent.status.get("lastSeenMs").and_then(|v| v.as_u64()) {
        return Some(seen);
    }
    let created = humantime::parse_rfc3339_weak(&agent.meta.created).ok()?;
    let since = created.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
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
    // no listing of every item and every report per call, and no copy of the reports.
    let items = fanout.items().await?;
    book.synced().await;
    let now = now_ms();
    let mut views: Vec<AgentView> = agents.iter().map(|a| view(a, &items, now)).collect();
    let by_key: HashMap<&str, &Entry> = items.iter().map(|e| (e.key.as_str(), &**e)).collect();
    let by_id: HashMap<&str, usize> = agents
        .iter()
        .enumerate()
        .map(|(i, agent)| (agent.name.as_str(), i))
        .collect();
    // A report on the current version of an item meant for the agent moves it from pending
    // to applied or failed.
    book.for_each(|id, key, report| {
        let (Some(&i), Some(item)) = (by_id.get(id), by_key.get(key)) else {
            return;
        };
        let agent = &agents[i];
        if report.revision != item.version || !item.target.selects(&agent.name, &agent.labels) {
            return;
        }
        let view = &mut views[i];
        let count = match report.state {
            ReportState::Applied => &mut view.applied,
            ReportState::Failed => &mut view.failed,
            ReportState::Pending | ReportState::Removed => return,
        };
        *count += 1;
        view.pending = view.pending.saturating_sub(1);
    });
    Ok(views)
}

/// What `agent` is, with every item meant for it counted as pending.
fn view(agent: &Object, items: &[Arc<Entry>], now: u64) -> AgentView {
    let last_seen_ms = agent.status.get("lastSeenMs").and_then(|v| v.as_u64());
    let ttl = agent
        .status
        .get("ttlMs")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let pending = items
        .iter()
        .filter(|item| item.target.selects(&agent.name, &agent.labels))
        .count();
    AgentView {
        id: agent.name.clone(),
        labels: agent.labels.clone(),
        connected: last_seen_ms.is_some_and(|seen| now <= seen.saturating_add(ttl)),
        last_seen_ms,
        applied: 0,
        pending,
        failed: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AgentReport, ItemTarget, Owner, Reporter, publish};
    use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_view_counts_reports_on_the_current_version_of_items_meant_for_the_agent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(
            EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"),
        );
        let zone = |z: &str| BTreeMap::from([("zone".to_owned(), z.to_owned())]);
        register(store.as_ref(), "a", zone("x")).await.expect("a");
        register(store.as_ref(), "b", zone("y")).await.expect("b");
        let owner = Owner {
            kind: "Policy".into(),
            name: "p".into(),
            component: "c".into(),
        };
        for (key, target) in [
            ("k1", ItemTarget::Labels(BTreeMap::new())),
            ("k2", ItemTarget::Labels(BTreeMap::new())),
            ("k3", ItemTarget::Labels(zone("x"))),
            ("k4", ItemTarget::Labels(zone("x"))),
        ] {
            publish(store.as_ref(), &owner, key, json!(1), target)
                .await
                .expect("publish");
        }
        let fanout = Fanout::start(store.clone(), Default::default());
        let book = ReportBook::start(store.clone());
        let reporter = Reporter::start(store.clone(), book.clone());
        let report = AgentReport::new;
        reporter
            .record(vec![
                report("k1", "a", ReportState::Applied, 1),
                report("k2", "a", ReportState::Failed, 1),
                // An older version of k3: still pending.
                report("k3", "a", ReportState::Applied, 0),
                report("k1", "b", ReportState::Applied, 1),
                // k3 is not meant for b: not counted.
                report("k3", "b", ReportState::Applied, 1),
            ])
            .await
            .expect("record");
        let views = list(store.as_ref(), &fanout, &book).await.expect("list");
        let counts: Vec<_> = views
            .iter()
            .map(|v| (v.id.as_str(), v.applied, v.failed, v.pending))
            .collect();
        assert_eq!(counts, vec![("a", 1, 1, 2), ("b", 1, 0, 1)]);
    }
}
