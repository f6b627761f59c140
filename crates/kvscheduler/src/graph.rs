//! The graph of values: one node per key, with dependencies (by key or any-of prefix) and
//! derived values as edges; dependencies are also indexed backwards, target to dependants.

use super::api::{
    Dependency, DependencyTarget, GraphNode, InvalidValue, Key, Metadata, RetryOptions, Value,
    ValueOrigin, ValueState, ValueStatus,
};
use super::dependants::Dependants;
use std::collections::{BTreeMap, HashMap};

/// Everything the scheduler knows about one key.
#[derive(Debug, Clone)]
pub struct Node {
    pub key: Key,
    /// What the northbound (or the parent, for a derived value) wants; `None`: to be removed.
    pub wanted: Option<Value>,
    /// What is in the southbound as far as the scheduler knows.
    pub applied: Option<Value>,
    pub metadata: Metadata,
    pub state: ValueState,
    pub origin: ValueOrigin,
    pub derived_from: Option<Key>,
    /// Set through [`Graph::set_dependencies`], which keeps the reverse index.
    dependencies: Vec<Dependency>,
    pub derived: Vec<Key>,
    pub descriptor: Option<String>,
    pub invalid: Option<InvalidValue>,
    pub error: Option<String>,
    /// Retries done since the last success.
    pub attempts: u32,
    /// How a failure of this value is retried: the options of the northbound transaction
    /// that last requested it (or its parent), whatever transaction fails it later.
    pub retry: Option<RetryOptions>,
    /// OBTAINED through a southbound notification (not only found by retrieve).
    pub notified: bool,
    /// Its delete failed: still in the southbound, but it satisfies no dependency (its
    /// dependants went PENDING before it, as Ligato leaves such a value unavailable) until
    /// it is applied again.
    pub removal_failed: bool,
    pub last_txn: u64,
}

impl Node {
    pub fn new(key: &str, origin: ValueOrigin) -> Self {
        Self {
            key: key.to_owned(),
            wanted: None,
            applied: None,
            metadata: None,
            state: ValueState::Nonexistent,
            origin,
            derived_from: None,
            dependencies: Vec::new(),
            derived: Vec::new(),
            descriptor: None,
            invalid: None,
            error: None,
            attempts: 0,
            retry: None,
            notified: false,
            removal_failed: false,
            last_txn: 0,
        }
    }

    /// Whether the value exists in the southbound, so that it satisfies dependencies.
    pub fn is_available(&self) -> bool {
        self.applied.is_some()
    }

    /// Whether the value satisfies the dependencies on it: it is in the southbound and
    /// not on its way out after a failed delete.
    pub fn satisfies(&self) -> bool {
        self.is_available() && !self.removal_failed
    }

    /// Whether the value is owned by the southbound rather than the scheduler.
    pub fn is_external(&self) -> bool {
        self.state == ValueState::Obtained
    }

    pub fn status(&self, graph: &Graph) -> ValueStatus {
        let missing_dependencies = if self.state == ValueState::Pending {
            graph.missing(&self.dependencies, None)
        } else {
            Vec::new()
        };
        ValueStatus {
            key: self.key.clone(),
            state: self.state,
            origin: self.origin,
            value: self.wanted.clone().or_else(|| self.applied.clone()),
            derived_from: self.derived_from.clone(),
            missing_dependencies,
            invalid: self.invalid.clone(),
            error: self.error.clone(),
            last_txn: self.last_txn,
        }
    }
}

/// The nodes as they were before a plan first touched them (`None`: there was none).
#[derive(Debug, Clone, Default)]
struct UndoLog {
    before: HashMap<Key, Option<Node>>,
}

impl UndoLog {
    /// Keeps the node `node` finds as the state of `key` to put back, unless one is kept
    /// already (then the node is not looked up).
    fn save<'a>(&mut self, key: &str, node: impl FnOnce() -> Option<&'a Node>) {
        if !self.before.contains_key(key) {
            self.before.insert(key.to_owned(), node().cloned());
        }
    }

    fn into_saved(self) -> impl Iterator<Item = (Key, Option<Node>)> {
        self.before.into_iter()
    }
}

/// All nodes, ordered by key so that dumps and plans are deterministic.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    nodes: BTreeMap<Key, Node>,
    /// Who declares a dependency on what: kept equal to the nodes' `dependencies`.
    dependants: Dependants,
    /// While a plan runs on the graph ([`super::trial::Trial`]): what to put back.
    undo: Option<UndoLog>,
}

impl Graph {
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.nodes.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.save(key);
        self.nodes.get_mut(key)
    }

    /// The node of `key`, created empty if unknown.
    pub fn entry(&mut self, key: &str, origin: ValueOrigin) -> &mut Node {
        self.save(key);
        self.nodes
            .entry(key.to_owned())
            .or_insert_with(|| Node::new(key, origin))
    }

    pub fn remove(&mut self, key: &str) -> Option<Node> {
        self.save(key);
        let node = self.nodes.remove(key)?;
        self.dependants.remove(key, &node.dependencies);
        Some(node)
    }

    /// Replaces the dependencies of `key` (if it exists), and their reverse edges.
    pub fn set_dependencies(&mut self, key: &str, dependencies: Vec<Dependency>) {
        match self.nodes.get(key) {
            Some(node) if node.dependencies != dependencies => self.save(key),
            _ => return,
        }
        let Some(node) = self.nodes.get_mut(key) else {
            return;
        };
        self.dependants.remove(key, &node.dependencies);
        self.dependants.add(key, &dependencies);
        node.dependencies = dependencies;
    }

    /// Keeps `key` as it is now, if a plan is running and has not touched it yet.
    fn save(&mut self, key: &str) {
        if let Some(undo) = &mut self.undo {
            undo.save(key, || self.nodes.get(key));
        }
    }

    /// From now on, every node changed is saved first, until [`Graph::undo`].
    pub(super) fn start_undo_log(&mut self) {
        debug_assert!(self.undo.is_none(), "a plan within a plan");
        self.undo = Some(UndoLog::default());
    }

    /// Puts back every node changed since [`Graph::start_undo_log`], with its reverse edges.
    pub(super) fn undo(&mut self) {
        let Some(undo) = self.undo.take() else {
            return;
        };
        for (key, before) in undo.into_saved() {
            if let Some(now) = self.nodes.remove(&key) {
                self.dependants.remove(&key, &now.dependencies);
            }
            if let Some(before) = before {
                self.dependants.add(&key, &before.dependencies);
                self.nodes.insert(key, before);
            }
        }
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    pub fn keys(&self) -> Vec<Key> {
        self.nodes.keys().cloned().collect()
    }

    /// The nodes whose key `target` matches, in key order: one lookup for a key, a range
    /// for a prefix.
    fn matching<'g>(
        &'g self,
        target: &'g DependencyTarget,
    ) -> Box<dyn Iterator<Item = &'g Node> + 'g> {
        match target {
            DependencyTarget::Key(key) => Box::new(self.nodes.get(key).into_iter()),
            DependencyTarget::AnyOf(prefix) => Box::new(
                self.nodes
                    .range::<str, _>((
                        std::ops::Bound::Included(prefix.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .map(|(_, n)| n)
                    .take_while(move |n| n.key.starts_with(prefix.as_str())),
            ),
        }
    }

    /// Available keys satisfying `dependency`, not counting `excluded` (a key on its way out).
    pub fn satisfying(&self, dependency: &Dependency, excluded: Option<&str>) -> Vec<Key> {
        self.matching(&dependency.target)
            .filter(|n| n.satisfies() && Some(n.key.as_str()) != excluded)
            .map(|n| n.key.clone())
            .collect()
    }

    fn is_satisfied(&self, dependency: &Dependency, excluded: Option<&str>) -> bool {
        self.matching(&dependency.target)
            .any(|n| n.satisfies() && Some(n.key.as_str()) != excluded)
    }

    /// Dependencies not satisfied, not counting `excluded`.
    pub fn missing(&self, dependencies: &[Dependency], excluded: Option<&str>) -> Vec<Dependency> {
        dependencies
            .iter()
            .filter(|d| !self.is_satisfied(d, excluded))
            .cloned()
            .collect()
    }

    /// Whether the dependencies of `key` are met, counting a cycle of values that wait only
    /// for each other (a strongly connected component) as met: the cycle is created as if it
    /// were one value (Ligato's `isNodeReady`).
    pub fn is_ready(&self, key: &str) -> bool {
        self.ready_from(key, 0, &mut HashMap::new(), false).0
    }

    /// Whether `key` is ready, and the lowest depth of the current walk it reaches back to.
    fn ready_from(
        &self,
        key: &str,
        depth: usize,
        visited: &mut HashMap<Key, usize>,
        in_cycle: bool,
    ) -> (bool, usize) {
        if let Some(&at) = visited.get(key) {
            return (true, at);
        }
        let Some(node) = self.nodes.get(key) else {
            return (false, depth);
        };
        visited.insert(key.to_owned(), depth);
        let mut reach = depth;
        let mut ready = true;
        for dependency in &node.dependencies {
            let mut met = false;
            for target in self.matching(&dependency.target) {
                if target.satisfies() {
                    met = true;
                    if !in_cycle {
                        break;
                    }
                }
                // Only a value still wanted can be part of a cycle being created.
                if target.wanted.is_none() || target.state == ValueState::Removed {
                    continue;
                }
                let (target_ready, target_reach) =
                    self.ready_from(&target.key, depth + 1, visited, true);
                if target_ready && target_reach <= depth {
                    met = true;
                    reach = reach.min(target_reach);
                }
            }
            if !met {
                ready = false;
                break;
            }
        }
        visited.remove(key);
        (ready, reach)
    }

    /// The nodes with a dependency that `key` matches, in key order.
    fn depending_on<'g>(&'g self, key: &str) -> impl Iterator<Item = &'g Node> + 'g {
        self.dependants
            .of(key)
            .into_iter()
            .filter_map(|dependant| self.nodes.get(&dependant))
    }

    /// Applied values that would lose a dependency if `key` went away.
    pub fn dependants_losing(&self, key: &str) -> Vec<Key> {
        self.depending_on(key)
            .filter(|n| n.satisfies() && !n.is_external() && n.key != key)
            .filter(|n| {
                n.dependencies
                    .iter()
                    .any(|d| !self.is_satisfied(d, Some(key)))
            })
            .map(|n| n.key.clone())
            .collect()
    }

    /// PENDING values that `key` (now available) may unlock.
    pub fn pending_on(&self, key: &str) -> Vec<Key> {
        self.depending_on(key)
            .filter(|n| n.state == ValueState::Pending)
            .map(|n| n.key.clone())
            .collect()
    }

    pub fn inspect(&self) -> Vec<GraphNode> {
        self.nodes
            .values()
            .map(|n| GraphNode {
                status: n.status(self),
                descriptor: n.descriptor.clone(),
                dependencies: n
                    .dependencies
                    .iter()
                    .map(|d| (d.clone(), self.satisfying(d, None)))
                    .collect(),
                derived: n.derived.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available(graph: &mut Graph, key: &str) {
        graph.entry(key, ValueOrigin::FromNorthbound).applied = Some(Value::Null);
    }

    #[test]
    fn any_of_dependants_lose_their_dependency_only_with_the_last_match() {
        let mut graph = Graph::default();
        available(&mut graph, "addr/a/1");
        available(&mut graph, "addr/a/2");
        graph
            .entry("unnumbered/b", ValueOrigin::FromNorthbound)
            .applied = Some(Value::Null);
        graph.set_dependencies("unnumbered/b", vec![Dependency::any_of("ip", "addr/a/")]);
        assert!(graph.dependants_losing("addr/a/1").is_empty());
        graph.remove("addr/a/2");
        assert_eq!(graph.dependants_losing("addr/a/1"), vec!["unnumbered/b"]);
    }
}
