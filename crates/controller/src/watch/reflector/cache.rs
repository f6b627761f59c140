//! A reflector's objects by name, and optionally by the value of one label, so that a
//! listing naming that label reads only the objects carrying it.

use reactor_core::object::{Object, Selector};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The objects of one kind, by name, shared with the watch events that brought them.
pub(super) struct Cache {
    objects: HashMap<String, Arc<Object>>,
    index: Option<LabelIndex>,
}

/// The names of the objects carrying each value of one label.
struct LabelIndex {
    label: String,
    names: HashMap<String, BTreeSet<String>>,
}

impl LabelIndex {
    fn add(&mut self, object: &Object) {
        if let Some(value) = object.labels.get(&self.label) {
            let names = self.names.entry(value.clone()).or_default();
            names.insert(object.name.clone());
        }
    }

    fn remove(&mut self, object: &Object) {
        let Some(value) = object.labels.get(&self.label) else {
            return;
        };
        if let Some(names) = self.names.get_mut(value) {
            names.remove(&object.name);
            if names.is_empty() {
                self.names.remove(value);
            }
        }
    }
}

impl Cache {
    /// An empty cache, indexing `label` if given.
    pub(super) fn new(label: Option<&str>) -> Self {
        Self {
            objects: HashMap::new(),
            index: label.map(|label| LabelIndex {
                label: label.to_owned(),
                names: HashMap::new(),
            }),
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<&Arc<Object>> {
        self.objects.get(name)
    }

    pub(super) fn objects(&self) -> &HashMap<String, Arc<Object>> {
        &self.objects
    }

    pub(super) fn insert(&mut self, object: Arc<Object>) {
        if let Some(index) = &mut self.index {
            if let Some(old) = self.objects.get(&object.name) {
                index.remove(old);
            }
            index.add(&object);
        }
        self.objects.insert(object.name.clone(), object);
    }

    pub(super) fn remove(&mut self, name: &str) {
        let old = self.objects.remove(name);
        if let (Some(index), Some(old)) = (&mut self.index, old) {
            index.remove(&old);
        }
    }

    /// Replaces every object with `fresh` (a new listing).
    pub(super) fn replace(&mut self, fresh: HashMap<String, Arc<Object>>) {
        if let Some(index) = &mut self.index {
            index.names.clear();
            for object in fresh.values() {
                index.add(object);
            }
        }
        self.objects = fresh;
    }

    /// The objects `selector` matches, by name. A selector requiring a value of the indexed
    /// label reads only the objects with that value.
    pub(super) fn select(&self, selector: &Selector) -> Vec<Arc<Object>> {
        let indexed = self.index.as_ref().and_then(|index| {
            let (_, value) = selector
                .equalities()
                .into_iter()
                .find(|(label, _)| *label == index.label)?;
            Some(index.names.get(value))
        });
        let mut items: Vec<Arc<Object>> = match indexed {
            // Names come sorted from the index.
            Some(names) => {
                return names
                    .into_iter()
                    .flatten()
                    .filter_map(|name| self.objects.get(name))
                    .filter(|o| selector.matches(&o.labels))
                    .cloned()
                    .collect();
            }
            None => self
                .objects
                .values()
                .filter(|o| selector.matches(&o.labels))
                .cloned()
                .collect(),
        };
        items.sort_by(|a, b| a.name.cmp(&b.name));
        items
    }
}
