//! The indexes that map a change of a watched object to the reactor's objects in time
//! proportional to the objects mapped: by the names they reference, and by their labels.

use reactor_core::object::ObjectKey;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Which primaries name which objects (one reference field of one reactor).
#[derive(Debug, Default)]
pub struct NameIndex {
    by_name: HashMap<String, HashSet<ObjectKey>>,
    names_of: HashMap<ObjectKey, Vec<String>>,
}

impl NameIndex {
    /// Records that `primary` now names `names` (and no longer what it named before).
    pub fn set(&mut self, primary: &ObjectKey, names: Vec<String>) {
        self.remove(primary);
        if names.is_empty() {
            return;
        }
        for name in &names {
            self.by_name
                .entry(name.clone())
                .or_default()
                .insert(primary.clone());
        }
        self.names_of.insert(primary.clone(), names);
    }

    /// Forgets `primary` (it is gone).
    pub fn remove(&mut self, primary: &ObjectKey) {
        for name in self.names_of.remove(primary).unwrap_or_default() {
            if let Some(set) = self.by_name.get_mut(&name) {
                set.remove(primary);
                if set.is_empty() {
                    self.by_name.remove(&name);
                }
            }
        }
    }

    /// The primaries naming `name`.
    pub fn naming(&self, name: &str) -> impl Iterator<Item = &ObjectKey> {
        self.by_name.get(name).into_iter().flatten()
    }
}

/// The primaries by label (one reactor's objects), to find those a selector matches.
#[derive(Debug, Default)]
pub struct LabelIndex {
    by_pair: HashMap<(String, String), HashSet<ObjectKey>>,
    labels_of: HashMap<ObjectKey, BTreeMap<String, String>>,
}

impl LabelIndex {
    /// Records `primary` with `labels` (replacing its former labels).
    pub fn set(&mut self, primary: &ObjectKey, labels: &BTreeMap<String, String>) {
        self.remove(primary);
        for (k, v) in labels {
            self.by_pair
                .entry((k.clone(), v.clone()))
                .or_default()
                .insert(primary.clone());
        }
        self.labels_of.insert(primary.clone(), labels.clone());
    }

    /// Forgets `primary`.
    pub fn remove(&mut self, primary: &ObjectKey) {
        for pair in self.labels_of.remove(primary).unwrap_or_default() {
            if let Some(set) = self.by_pair.get_mut(&pair) {
                set.remove(primary);
                if set.is_empty() {
                    self.by_pair.remove(&pair);
                }
            }
        }
    }

    /// The primaries whose labels include every pair of `selector` (all of them for an
    /// empty selector). Walks the smallest posting list only.
    pub fn matching(&self, selector: &BTreeMap<String, String>) -> Vec<ObjectKey> {
        if selector.is_empty() {
            return self.labels_of.keys().cloned().collect();
        }
        let mut lists = Vec::with_capacity(selector.len());
        for (k, v) in selector {
            match self.by_pair.get(&(k.clone(), v.clone())) {
                Some(set) => lists.push(set),
                None => return Vec::new(),
            }
        }
        let Some(smallest) = lists.iter().min_by_key(|set| set.len()) else {
            return Vec::new();
        };
        smallest
            .iter()
            .filter(|key| lists.iter().all(|set| set.contains(*key)))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new("Tenant", name)
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn names_follow_each_primary_change() {
        let mut index = NameIndex::default();
        index.set(&key("a"), vec!["gold".into()]);
        index.set(&key("b"), vec!["gold".into(), "silver".into()]);
        let mut gold: Vec<_> = index.naming("gold").cloned().collect();
        gold.sort();
        assert_eq!(gold, vec![key("a"), key("b")]);
        index.set(&key("a"), vec!["silver".into()]);
        assert_eq!(
            index.naming("gold").cloned().collect::<Vec<_>>(),
            vec![key("b")]
        );
        index.remove(&key("b"));
        assert_eq!(index.naming("gold").count(), 0);
        assert_eq!(
            index.naming("silver").cloned().collect::<Vec<_>>(),
            vec![key("a")]
        );
    }

    #[test]
    fn selectors_match_every_pair() {
        let mut index = LabelIndex::default();
        index.set(&key("a"), &labels(&[("team", "x"), ("tier", "1")]));
        index.set(&key("b"), &labels(&[("team", "x"), ("tier", "2")]));
        index.set(&key("c"), &labels(&[("team", "y")]));
        let mut found = index.matching(&labels(&[("team", "x")]));
        found.sort();
        assert_eq!(found, vec![key("a"), key("b")]);
        assert_eq!(
            index.matching(&labels(&[("team", "x"), ("tier", "2")])),
            vec![key("b")]
        );
        assert!(index.matching(&labels(&[("team", "z")])).is_empty());
        assert_eq!(index.matching(&BTreeMap::new()).len(), 3);
        index.set(&key("b"), &labels(&[("team", "y")]));
        assert_eq!(index.matching(&labels(&[("team", "x")])), vec![key("a")]);
        index.remove(&key("a"));
        assert!(index.matching(&labels(&[("team", "x")])).is_empty());
    }
}
