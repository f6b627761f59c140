//! How far an object's items have propagated to the agents they are meant for, as Venice's
//! PropagationStatus: the generation, the agents up to date, the agents still pending.

use super::Item;
use super::reports::{ReportState, Sheet};
use reactor_core::object::Object;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// At most this many pending agents are named; the counts are always complete.
const NAMED_PENDING: usize = 16;

/// Kept by the host in the owner's `status.propagation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Propagation {
    /// The owner's generation when this was computed.
    pub generation: u64,
    /// Agents that applied every item meant for them, at its current version.
    pub updated: usize,
    /// Agents with an item not applied yet at its current version (failed ones included).
    pub pending: usize,
    /// Of the pending agents, those that reported a failure.
    pub failed: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_agents: Vec<String>,
    /// The lowest item version any targeted agent has applied (its laggard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowest_version: Option<u64>,
}

/// The propagation of `owner`'s `items` to the registered `agents`, from the agents'
/// report `sheets` on the owner (by agent).
pub fn propagation(
    owner: &Object,
    items: &[(Arc<Object>, Item)],
    sheets: &BTreeMap<String, Sheet>,
    agents: &[Arc<Object>],
) -> Propagation {
    let mut result = Propagation {
        generation: owner.meta.generation,
        ..Propagation::default()
    };
    for agent in agents {
        let mut targeted = false;
        let mut up_to_date = true;
        let mut failed = false;
        let sheet = sheets.get(&agent.name);
        for (object, item) in items {
            if !item.target.selects(&agent.name, &agent.labels) {
                continue;
            }
            targeted = true;
            let report = sheet.and_then(|s| s.items.get(&item.key));
            if let Some(r) = report.filter(|r| r.state == ReportState::Applied) {
                result.lowest_version = Some(
                    result
                        .lowest_version
                        .map_or(r.revision, |low| low.min(r.revision)),
                );
            }
            match report {
                Some(r) if r.revision == object.meta.generation => match r.state {
                    ReportState::Applied => {}
                    ReportState::Failed => {
                        up_to_date = false;
                        failed = true;
                    }
                    _ => up_to_date = false,
                },
                _ => up_to_date = false,
            }
        }
        if !targeted {
            continue;
        }
        if up_to_date {
            result.updated += 1;
        } else {
            result.pending += 1;
            result.failed += usize::from(failed);
            if result.pending_agents.len() < NAMED_PENDING {
                result.pending_agents.push(agent.name.clone());
            }
        }
    }
    result.pending_agents.sort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: serde_json::Value) -> Object {
        serde_json::from_value(value).expect("object")
    }

    fn item(key: &str, generation: u64) -> (Arc<Object>, Item) {
        let object = object(json!({
            "kind": "NimbusItem", "name": key.replace('/', "-"),
            "spec": {"key": key, "value": 1, "target": {"labels": {"role": "web"}},
                     "owner": {"kind": "Policy", "name": "p", "component": "c"}},
            "meta": {"generation": generation}
        }));
        let parsed = Item::from_object(&object).expect("item");
        (Arc::new(object), parsed)
    }

    fn sheet(agent: &str, items: serde_json::Value) -> (String, Sheet) {
        let sheet = serde_json::from_value(json!({
            "ownerKind": "Policy", "ownerName": "p", "component": "c", "agent": agent,
            "items": items
        }))
        .expect("sheet");
        (agent.to_owned(), sheet)
    }

    #[test]
    fn agents_are_updated_pending_or_failed_and_untargeted_ones_do_not_count() {
        let owner = object(json!({"kind": "Policy", "name": "p", "meta": {"generation": 3}}));
        let agents: Vec<Arc<Object>> = ["a1", "a2", "a3"]
            .iter()
            .map(|id| object(json!({"kind": "Agent", "name": id, "labels": {"role": "web"}})))
            .chain([object(
                json!({"kind": "Agent", "name": "db", "labels": {"role": "db"}}),
            )])
            .map(Arc::new)
            .collect();
        let items = vec![item("p/x", 2), item("p/y", 1)];
        let sheets = BTreeMap::from([
            sheet(
                "a1",
                json!({"p/x": {"state": "applied", "revision": 2},
                       "p/y": {"state": "applied", "revision": 1}}),
            ),
            sheet("a2", json!({"p/x": {"state": "applied", "revision": 1}})),
            sheet(
                "a3",
                json!({"p/x": {"state": "failed", "revision": 2, "message": "no"}}),
            ),
        ]);
        let p = propagation(&owner, &items, &sheets, &agents);
        assert_eq!(p.generation, 3);
        assert_eq!((p.updated, p.pending, p.failed), (1, 2, 1));
        assert_eq!(p.pending_agents, vec!["a2", "a3"]);
        assert_eq!(p.lowest_version, Some(1));
    }
}
