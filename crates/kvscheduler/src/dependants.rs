//! The graph's reverse edges: for each dependency target (a key, or an any-of prefix), the
//! keys of the values that declare it, so that the values a key affects are found without
//! scanning every node.

use super::api::{Dependency, DependencyTarget, Key};
use std::collections::{BTreeSet, HashMap};

/// Dependant keys by the target they wait for.
#[derive(Debug, Clone, Default)]
pub struct Dependants {
    on_key: HashMap<Key, BTreeSet<Key>>,
    on_prefix: HashMap<String, BTreeSet<Key>>,
}

impl Dependants {
    fn side<'s, 't>(
        &'s mut self,
        target: &'t DependencyTarget,
    ) -> (&'s mut HashMap<String, BTreeSet<Key>>, &'t str) {
        match target {
            DependencyTarget::Key(key) => (&mut self.on_key, key.as_str()),
            DependencyTarget::AnyOf(prefix) => (&mut self.on_prefix, prefix.as_str()),
        }
    }

    /// Notes that `dependant` declares `dependencies`.
    pub fn add(&mut self, dependant: &str, dependencies: &[Dependency]) {
        for dependency in dependencies {
            let (map, target) = self.side(&dependency.target);
            map.entry(target.to_owned())
                .or_default()
                .insert(dependant.to_owned());
        }
    }

    /// Forgets that `dependant` declares `dependencies`.
    pub fn remove(&mut self, dependant: &str, dependencies: &[Dependency]) {
        for dependency in dependencies {
            let (map, target) = self.side(&dependency.target);
            if let Some(keys) = map.get_mut(target) {
                keys.remove(dependant);
                if keys.is_empty() {
                    map.remove(target);
                }
            }
        }
    }

    /// Keys of the values with a dependency that `key` matches, in key order.
    pub fn of(&self, key: &str) -> BTreeSet<Key> {
        let mut found = self.on_key.get(key).cloned().unwrap_or_default();
        if !self.on_prefix.is_empty() {
            let ends = key
                .char_indices()
                .map(|(at, _)| at)
                .chain(std::iter::once(key.len()));
            for end in ends {
                if let Some(keys) = self.on_prefix.get(&key[..end]) {
                    found.extend(keys.iter().cloned());
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_dependants_by_key_and_by_prefix_until_removed() {
        let mut index = Dependants::default();
        let route = [Dependency::on_key("via", "if/a")];
        let unnumbered = [
            Dependency::any_of("ip", "addr/a/"),
            Dependency::on_key("if", "if/b"),
        ];
        let anything = [Dependency::any_of("any", "")];
        index.add("route/r", &route);
        index.add("unnumbered/b", &unnumbered);
        index.add("watcher", &anything);
        let of = |index: &Dependants, key: &str| index.of(key).into_iter().collect::<Vec<_>>();
        assert_eq!(of(&index, "if/a"), ["route/r", "watcher"]);
        assert_eq!(of(&index, "addr/a/1"), ["unnumbered/b", "watcher"]);
        assert_eq!(of(&index, "addr/b/1"), ["watcher"]);
        index.remove("unnumbered/b", &unnumbered);
        index.remove("watcher", &anything);
        assert!(of(&index, "addr/a/1").is_empty());
        assert!(of(&index, "if/b").is_empty());
        assert_eq!(of(&index, "if/a"), ["route/r"]);
    }
}
