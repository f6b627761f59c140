//! Refresh: what the descriptors retrieve from the southbound (in retrieve-dependency order)
//! is compared with what the scheduler believes, so that resync can repair the difference.

use super::api::{
    DescriptorError, Key, RetrievedValue, Value, ValueOrigin, ValueState, ValueStatus,
};
use super::executor::Executor;
use super::graph::Graph;
use super::registry::Registry;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What each descriptor that can retrieve found, by descriptor name.
pub type Retrieved = BTreeMap<String, Vec<RetrievedValue>>;

/// Retrieves through every descriptor; one that fails is skipped (its values keep the
/// scheduler's belief) and reported. Each descriptor gets to correlate its base values
/// only (Ligato's contract): what is about to be applied (`wanted`, a full resync) or what
/// the scheduler believes applied.
pub async fn retrieve_all(
    graph: &Graph,
    registry: &Registry,
    only: Option<&[String]>,
    wanted: bool,
) -> (Retrieved, Vec<(String, DescriptorError)>) {
    let mut correlate: BTreeMap<String, Vec<(Key, Value)>> = BTreeMap::new();
    for node in graph
        .nodes()
        .filter(|n| n.derived_from.is_none() && !n.is_external())
    {
        let value = if wanted {
            node.wanted.clone()
        } else {
            node.applied.clone()
        };
        if let (Some(value), Some(descriptor)) = (value, registry.for_key(&node.key)) {
            correlate
                .entry(descriptor.name().to_owned())
                .or_default()
                .push((node.key.clone(), value));
        }
    }
    let mut found = Retrieved::new();
    let mut errors = Vec::new();
    for descriptor in registry.retrieve_order() {
        let name = descriptor.name().to_owned();
        if only.is_some_and(|names| !names.contains(&name)) {
            continue;
        }
        let correlate = correlate.remove(&name).unwrap_or_default();
        match descriptor.retrieve(&correlate).await {
            Ok(Some(mut values)) => {
                for value in values
                    .iter_mut()
                    .filter(|v| v.origin == ValueOrigin::Unknown)
                {
                    // Ligato: a value the scheduler meant to apply is the northbound's,
                    // any other the southbound's.
                    value.origin = if correlate.iter().any(|(k, _)| k == &value.key) {
                        ValueOrigin::FromNorthbound
                    } else {
                        ValueOrigin::FromSouthbound
                    };
                }
                found.insert(name, values);
            }
            Ok(None) => {}
            Err(error) => errors.push((name, error)),
        }
    }
    (found, errors)
}

/// What all descriptors retrieved, seen whole: retrieve returns base values only
/// (Ligato's contract); a value that another retrieved value derives (a `@0.1.0`
/// component may return it, or its own descriptor retrieves it) is not a base value: it
/// only tells the actual contents of that derived value.
struct Found<'r> {
    /// Every retrieved value by key.
    by_key: HashMap<&'r str, &'r RetrievedValue>,
    /// Keys derived from some retrieved value.
    derived: HashSet<Key>,
    /// Descriptors that could retrieve: a value of theirs not found is not there.
    retrieving: HashSet<&'r str>,
}

impl<'r> Found<'r> {
    async fn new(registry: &Registry, retrieved: &'r Retrieved) -> Self {
        let mut derived = HashSet::new();
        for value in retrieved.values().flatten() {
            if let Some(descriptor) = registry.for_key(&value.key) {
                for (child, _) in descriptor.derived_values(&value.key, &value.value).await {
                    derived.insert(child);
                }
            }
        }
        Self {
            by_key: retrieved
                .values()
                .flatten()
                .map(|v| (v.key.as_str(), v))
                .collect(),
            derived,
            retrieving: retrieved.keys().map(String::as_str).collect(),
        }
    }

    /// The actual contents of a derived value of `parent` the scheduler computed as
    /// `computed`: what was retrieved for it; else absent if a descriptor other than the
    /// parent's handles it and retrieved; else `computed` (derived, not retrieved).
    fn derived_value(
        &self,
        registry: &Registry,
        parent: &str,
        key: &str,
        computed: Value,
    ) -> Option<Value> {
        if let Some(found) = self.by_key.get(key) {
            return Some(found.value.clone());
        }
        let parents = registry.for_key(parent).map(|d| d.name().to_owned());
        match registry.for_key(key) {
            Some(descriptor)
                if self.retrieving.contains(descriptor.name())
                    && parents.as_deref() != Some(descriptor.name()) =>
            {
                None
            }
            _ => Some(computed),
        }
    }
}

/// Makes the graph's belief match what was retrieved, as Ligato's refresh: base values
/// gone from the southbound are no longer applied (MISSING), changed ones carry their
/// actual value, values of a previous life are DISCOVERED (northbound) or OBTAINED
/// (southbound), and derived values are derived from the retrieved base values. The
/// southbound's own values change without a recorded operation, as in Ligato's refresh.
pub async fn apply_retrieved(executor: &mut Executor<'_>, retrieved: &Retrieved) {
    let quiet = std::mem::replace(&mut executor.quiet_observe, true);
    apply_found(executor, retrieved).await;
    executor.quiet_observe = quiet;
}

async fn apply_found(executor: &mut Executor<'_>, retrieved: &Retrieved) {
    let direct = Found::new(executor.registry, retrieved).await;
    for (descriptor, values) in retrieved {
        let base: Vec<&RetrievedValue> = values
            .iter()
            .filter(|v| !direct.derived.contains(&v.key))
            .collect();
        let by_key: BTreeMap<&str, &RetrievedValue> =
            base.iter().map(|v| (v.key.as_str(), *v)).collect();
        let owned: Vec<Key> = executor
            .graph
            .nodes()
            .filter(|n| n.derived_from.is_none())
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
                (ValueState::Obtained, Some(found)) => {
                    executor
                        .observe(&key, Some(found.value.clone()), ValueState::Obtained)
                        .await
                }
                // A notified value is the southbound's word: a retrieve that does not
                // see it does not remove it (deliberately unlike Ligato's refresh); one
                // only retrieved before goes.
                (ValueState::Obtained, None) => {
                    if !executor.graph.get(&key).is_some_and(|n| n.notified) {
                        executor.observe(&key, None, ValueState::Obtained).await
                    }
                }
                (state, Some(found)) => {
                    if let Some(node) = executor.graph.get_mut(&key) {
                        node.applied = Some(found.value.clone());
                        if found.metadata.is_some() {
                            node.metadata = found.metadata.clone();
                        }
                        if state == ValueState::Pending {
                            node.state = ValueState::Configured;
                        }
                        // Wanted and found, not yet applied by this life: as Ligato,
                        // DISCOVERED until the resync takes it over.
                        if state == ValueState::Nonexistent {
                            node.state = ValueState::Discovered;
                        }
                    }
                    if state == ValueState::Nonexistent {
                        found_dependencies(executor, &key).await;
                    }
                    refresh_derived(executor, &key, &direct).await;
                }
                (state, None) => {
                    if state == ValueState::Discovered
                        && executor.graph.get(&key).is_some_and(|n| n.wanted.is_none())
                    {
                        executor.graph.remove(&key);
                        continue;
                    }
                    if let Some(node) = executor.graph.get_mut(&key)
                        && node.applied.take().is_some()
                        && state == ValueState::Configured
                    {
                        node.state = ValueState::Missing;
                    }
                    refresh_derived(executor, &key, &direct).await;
                }
            }
        }
        for value in base {
            if executor.graph.get(&value.key).is_some() {
                continue;
            }
            if value.origin == ValueOrigin::FromNorthbound {
                // Configured by a previous life of the agent: the resync decides its fate.
                let node = executor
                    .graph
                    .entry(&value.key, ValueOrigin::FromNorthbound);
                node.applied = Some(value.value.clone());
                node.metadata = value.metadata.clone();
                node.state = ValueState::Discovered;
                node.descriptor = Some(descriptor.clone());
                found_dependencies(executor, &value.key).await;
                refresh_derived(executor, &value.key, &direct).await;
            } else {
                executor
                    .observe(&value.key, Some(value.value.clone()), ValueState::Obtained)
                    .await;
            }
        }
    }
}

/// The derived values of a refreshed northbound value are what its retrieved value
/// derives (or, from a descriptor that retrieves them, what it returned); those it no
/// longer derives are not applied.
fn refresh_derived<'e>(
    executor: &'e mut Executor<'_>,
    key: &'e str,
    direct: &'e Found<'_>,
) -> futures::future::BoxFuture<'e, ()> {
    Box::pin(async move {
        let Some(node) = executor.graph.get(key) else {
            return;
        };
        let derived = match (&node.applied, executor.registry.for_key(key)) {
            (Some(value), Some(descriptor)) => descriptor.derived_values(key, value).await,
            _ => Vec::new(),
        };
        let old = node.derived.clone();
        let new_keys: Vec<Key> = derived.iter().map(|(k, _)| k.clone()).collect();
        for gone in old.iter().filter(|k| !new_keys.contains(k)) {
            if let Some(child) = executor.graph.get_mut(gone) {
                child.applied = None;
            }
            refresh_derived(executor, gone, direct).await;
        }
        let mut keep = old;
        for (child, value) in derived {
            let actual = direct.derived_value(executor.registry, key, &child, value);
            let node = executor.graph.entry(&child, ValueOrigin::FromNorthbound);
            if node.is_external() {
                continue;
            }
            let discovered = node.state == ValueState::Nonexistent && actual.is_some();
            if discovered {
                node.state = ValueState::Discovered;
            }
            node.derived_from = Some(key.to_owned());
            if actual.is_none() && node.applied.is_some() && node.state == ValueState::Configured {
                node.state = ValueState::Missing;
            }
            node.applied = actual;
            if discovered {
                found_dependencies(executor, &child).await;
            }
            if !keep.contains(&child) {
                keep.push(child.clone());
            }
            refresh_derived(executor, &child, direct).await;
        }
        if let Some(node) = executor.graph.get_mut(key) {
            node.derived = keep;
        }
    })
}

/// As Ligato's refresh: a value found in the southbound before this life applied it
/// (DISCOVERED) depends on what its found contents need, so that a resync removing it
/// goes in dependency order (dependants before what they depend on), as for a value the
/// scheduler applied itself.
async fn found_dependencies(executor: &mut Executor<'_>, key: &str) {
    let Some(value) = executor.graph.get(key).and_then(|n| n.applied.clone()) else {
        return;
    };
    let Some(descriptor) = executor.registry.for_key(key) else {
        return;
    };
    let dependencies = descriptor.dependencies(key, &value).await;
    executor.graph.set_dependencies(key, dependencies);
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
                    status.state = if value.origin == ValueOrigin::FromSouthbound {
                        ValueState::Obtained
                    } else {
                        ValueState::Discovered
                    };
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
            // A derived value of a value of the same descriptor is not retrieved (Ligato's
            // contract): it is there with its base value.
            let implied = node.derived_from.as_ref().is_some_and(|parent| {
                registry
                    .for_key(parent)
                    .is_some_and(|d| d.name() == descriptor)
            });
            if mine && !implied && !found.contains(node.key.as_str()) {
                let mut status = node.status(graph);
                status.state = ValueState::Missing;
                view.push(status);
            }
        }
    }
    view.sort_by(|a, b| a.key.cmp(&b.key));
    view
}
