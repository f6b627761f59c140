//! Registered descriptors: which one handles a key, and in which order they retrieve.

use super::api::Descriptor;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Descriptors by name; registering a name again replaces the previous version.
#[derive(Clone, Default)]
pub struct Registry {
    descriptors: BTreeMap<String, Arc<dyn Descriptor>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.descriptors.keys()).finish()
    }
}

impl Registry {
    pub fn register(&mut self, descriptor: Arc<dyn Descriptor>) {
        self.descriptors
            .insert(descriptor.name().to_owned(), descriptor);
    }

    /// Forgets a descriptor; false if none had that name.
    pub fn unregister(&mut self, name: &str) -> bool {
        self.descriptors.remove(name).is_some()
    }

    /// Names of the registered descriptors.
    pub fn names(&self) -> Vec<String> {
        self.descriptors.keys().cloned().collect()
    }

    /// The descriptor with the longest key prefix matching `key`.
    pub fn for_key(&self, key: &str) -> Option<Arc<dyn Descriptor>> {
        self.descriptors
            .values()
            .filter(|d| key.starts_with(d.key_prefix()))
            .max_by_key(|d| d.key_prefix().len())
            .cloned()
    }

    /// Every descriptor, each after the descriptors it names as retrieve dependencies
    /// (unknown names are ignored; a cycle is broken by name order).
    pub fn retrieve_order(&self) -> Vec<Arc<dyn Descriptor>> {
        let mut done = BTreeSet::new();
        let mut order = Vec::new();
        while order.len() < self.descriptors.len() {
            let ready: Vec<_> = self
                .descriptors
                .iter()
                .filter(|(name, _)| !done.contains(*name))
                .filter(|(_, d)| {
                    d.retrieve_dependencies()
                        .iter()
                        .all(|dep| done.contains(dep) || !self.descriptors.contains_key(dep))
                })
                .map(|(name, d)| (name.clone(), d.clone()))
                .collect();
            let next = if ready.is_empty() {
                self.descriptors
                    .iter()
                    .find(|(name, _)| !done.contains(*name))
                    .map(|(name, d)| vec![(name.clone(), d.clone())])
                    .unwrap_or_default()
            } else {
                ready
            };
            for (name, descriptor) in next {
                done.insert(name);
                order.push(descriptor);
            }
        }
        order
    }
}
