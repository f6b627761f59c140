//! Refresh: what the descriptors retrieve from the southbound (in retrieve-dependency order)
//! is compared with what the scheduler believes, so that resync can repair the difference.

use super::api::{
    DescriptorError, Key, RetrievedValue, Value, ValueOrigin, ValueState, ValueStatus,
};
use super::graph::Graph;
use super::registry::Registry;
use super::txn::Executor;
use std::collections::{BTreeMap, HashSet};

/// What each descriptor that can retrieve found, by descriptor name.
pub type Retrieved = BTreeMap<String, Vec<RetrievedValue>>;

/// Retrieves through every descriptor; one that fails is skipped (its values keep the
/// scheduler's belief) and reported.
pub async fn retrieve_all(
    graph: &Graph,
    registry: &Registry,
    only: Option<&[String]>,
) -> (Retrieved, Vec<(String, DescriptorError)>) {
    let mut found = Retrieved::new();
    let mut errors = Vec::new();
    for descriptor in registry.retrieve_order() {
        let name = descriptor.name().to_owned();
        if only.is_some_and(|names| !names.contains(&name)) {
            continue;
        }
        let correlate: Vec<(Key, Value)> = graph
            .nodes()
            .filter(|n| n.descriptor.as_deref() == Some(name.as_str()) && !n.is_external())
            .filter_map(|n| n.applied.clone().map(|v| (n.key.clone(), v)))
            .collect();
        match descriptor.retrieve(&correlate).await {
            Ok(Some(values)) => {
                found.insert(name, values);
            }
            Ok(None) => {}
            Err(error) => errors.push((name, error)),
        }
    }
    (found, errors)
}

/// Makes the graph's belief match what was retrieved: values gone from the southbound are
/// no longer applied, changed ones carry their actual value, unknown northbound values are
/// kept for removal, and southbound-owned values are DISCOVERED. OBTAINED values stay.
pub async fn apply_retrieved(executor: &mut Executor<'_>, retrieved: &Retrieved) {
    for (descriptor, values) in retrieved {
        let by_key: BTreeMap<&str, &RetrievedValue> =
            values.iter().map(|v| (v.key.as_str(), v)).collect();
        let owned: Vec<Key> = executor
            .graph
            .nodes()
            .filter(|n| {
                executor
                    .registry
                    .for_key(&n.key)
                    .is_some_and(|d| d.name() == descriptor)
            })
            .map(|n| n.key.clone())
            .collect();
        for key in owned {
            let found = by_key.get(key.as_str()).copied();
            let Some(node) = executor.graph.get(&key) else {
                continue;
            };
            match (node.state, found) {
                (ValueState::Obtained, _) => {}
                (ValueState::Discovered, None) => {
                    executor.observe(&key, None, ValueState::Discovered).await
                }
                (ValueState::Discovered, Some(found)) => {
                    executor
                        .observe(&key, Some(found.value.clone()), ValueState::Discovered)
                        .await
                }
                (_, Some(found)) => {
                    if let Some(node) = executor.graph.get_mut(&key) {
                        node.applied = Some(found.value.clone());
                        if found.metadata.is_some() {
                            node.metadata = found.metadata.clone();
                        }
                    }
                }
                (_, None) => {
                    if let Some(node) = executor.graph.get_mut(&key)
                        && node.applied.take().is_some()
                    {
                        node.state = ValueState::Missing;
                    }
                }
            }
        }
        for value in values {
            if executor.graph.get(&value.key).is_some() {
                continue;
            }
            if value.origin == ValueOrigin::FromNorthbound {
                // Configured by a previous life of the agent and no longer wanted.
                let node = executor
                    .graph
                    .entry(&value.key, ValueOrigin::FromNorthbound);
                node.applied = Some(value.value.clone());
                node.metadata = value.metadata.clone();
                node.state = ValueState::Configured;
                node.descriptor = Some(descriptor.clone());
            } else {
                executor
                    .observe(
                        &value.key,
                        Some(value.value.clone()),
                        ValueState::Discovered,
                    )
                    .await;
            }
        }
    }
}

/// The "retrieved" view of a dump: what is in the southbound now, plus MISSING for what the
/// scheduler configured but the southbound no longer has.
pub fn retrieved_view(
    graph: &Graph,
    registry: &Registry,
    retrieved: &Retrieved,
) -> Vec<ValueStatus> {
    let mut view = Vec::new();
    for (descriptor, values) in retrieved {
        let found: HashSet<&str> = values.iter().map(|v| v.key.as_str()).collect();
        for value in values {
            let mut status = match graph.get(&value.key) {
                Some(node) => node.status(graph),
                None => {
                    let mut status = ValueStatus::nonexistent(&value.key);
                    status.state = ValueState::Discovered;
                    status
                }
            };
            status.origin = value.origin;
            status.value = Some(value.value.clone());
            view.push(status);
        }
        for node in graph
            .nodes()
            .filter(|n| n.is_available() && !n.is_external())
        {
            let mine = registry
                .for_key(&node.key)
                .is_some_and(|d| d.name() == descriptor);
            if mine && !found.contains(node.key.as_str()) {
                let mut status = node.status(graph);
                status.state = ValueState::Missing;
                view.push(status);
            }
        }
    }
    view.sort_by(|a, b| a.key.cmp(&b.key));
    view
}
