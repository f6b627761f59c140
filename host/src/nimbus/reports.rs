//! Agents' reports on items, kept in each item's status as `agents.<agent-id>`.

use super::items::object_name;
use super::{ITEM_KIND, NimbusError};
use crate::object::Object;
use crate::store::{Store, update_status};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Where an item is on one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportState {
    /// Received, not applied yet (e.g. its dependencies are missing).
    Pending,
    Applied,
    /// Failed to apply; the agent retries.
    Failed,
    /// Removed from the agent after it was withdrawn.
    Removed,
}

/// One agent's report on one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentReport {
    pub key: String,
    pub agent: String,
    pub state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The version of the item's value the report is about: the item's generation, which
    /// grows with every change of the value (status writes leave it alone).
    pub revision: u64,
}

/// What a report looks like inside the item's status (the key and agent are implied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredReport {
    state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    revision: u64,
}

/// The reports recorded on `item`, by agent.
pub fn reports_of(item: &Object) -> BTreeMap<String, AgentReport> {
    let Some(key) = item.spec.get("key").and_then(Value::as_str) else {
        return BTreeMap::new();
    };
    let Some(agents) = item.status.get("agents").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    agents
        .iter()
        .filter_map(|(agent, stored)| {
            let stored: StoredReport = serde_json::from_value(stored.clone()).ok()?;
            Some((
                agent.clone(),
                AgentReport {
                    key: key.to_owned(),
                    agent: agent.clone(),
                    state: stored.state,
                    message: stored.message,
                    revision: stored.revision,
                },
            ))
        })
        .collect()
}

/// `status` with `reports` (all on the same item) recorded; `removed` drops the agent's entry.
fn with_reports(status: &Value, reports: &[AgentReport]) -> Value {
    let mut status = match status {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let agents = status
        .entry("agents")
        .or_insert_with(|| Value::Object(Map::new()));
    if !agents.is_object() {
        *agents = Value::Object(Map::new());
    }
    if let Value::Object(agents) = agents {
        for report in reports {
            if report.state == ReportState::Removed {
                agents.remove(&report.agent);
                continue;
            }
            let stored = StoredReport {
                state: report.state,
                message: report.message.clone(),
                revision: report.revision,
            };
            agents.insert(
                report.agent.clone(),
                serde_json::to_value(stored).unwrap_or(Value::Null),
            );
        }
    }
    Value::Object(status)
}

/// Records reports durably, one status write per item; reports on items that are gone are
/// dropped (the item was withdrawn meanwhile). Answers the items written.
pub async fn record(
    store: &dyn Store,
    reports: Vec<AgentReport>,
) -> Result<BTreeSet<String>, NimbusError> {
    let mut by_item: BTreeMap<String, Vec<AgentReport>> = BTreeMap::new();
    for report in reports {
        by_item
            .entry(object_name(&report.key))
            .or_default()
            .push(report);
    }
    let mut written = BTreeSet::new();
    let writes = by_item.into_iter().map(|(name, reports)| async move {
        update_status(store, ITEM_KIND, &name, |status| {
            with_reports(status, &reports)
        })
        .await
        .map(|found| found.map(|_| name))
    });
    // Several items at once, so the store can commit them together.
    let mut results = futures::stream::iter(writes).buffer_unordered(32);
    while let Some(result) = results.next().await {
        written.extend(result?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(agent: &str, state: ReportState, revision: u64) -> AgentReport {
        AgentReport {
            key: "policy/a/x".into(),
            agent: agent.into(),
            state,
            message: None,
            revision,
        }
    }

    #[test]
    fn reports_round_trip_through_the_status_and_removed_drops_the_entry() {
        let status = with_reports(
            &json!({"other": 1}),
            &[
                report("a1", ReportState::Applied, 2),
                report("a2", ReportState::Failed, 1),
            ],
        );
        assert_eq!(status["other"], 1);
        let mut item: Object = serde_json::from_value(
            json!({"kind": ITEM_KIND, "name": "i", "spec": {"key": "policy/a/x"}}),
        )
        .expect("object");
        item.status = status.clone();
        let read = reports_of(&item);
        assert_eq!(read["a1"], report("a1", ReportState::Applied, 2));
        assert_eq!(read["a2"].state, ReportState::Failed);
        item.status = with_reports(&status, &[report("a2", ReportState::Removed, 1)]);
        assert_eq!(reports_of(&item).keys().collect::<Vec<_>>(), vec!["a1"]);
    }
}
