//! What a reactor watches besides its own kinds (WIT `watch`): owned children, referenced
//! objects and objects selecting it by label, and which of its objects a change there runs
//! again. The mapping is kept in indexes updated on every change of the reactor's objects.

mod index;
mod path;

pub use index::{LabelIndex, NameIndex};

use crate::reactor::ReactorInfo;
use crate::watch::reflector::ReflectorEvent;
use crate::watch::trigger::Trigger;
use parking_lot::Mutex;
use reactor_core::object::{Object, ObjectKey, Owner};
use reactor_runtime::Watch;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One reference watch: the kind named, the field naming it, and who names what.
struct Reference {
    kind: String,
    path: String,
    index: Mutex<NameIndex>,
}

/// One selector watch: the kind carrying selectors, the field, and each one's last selector.
struct Selection {
    kind: String,
    path: String,
    last: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

/// The secondary watches of one attached reactor and their indexes.
pub struct Secondaries {
    component: String,
    primary_kinds: Vec<String>,
    owns: Vec<String>,
    references: Vec<Reference>,
    selections: Vec<Selection>,
    /// The reactor's objects by label, kept only when something selects them.
    labels: Mutex<LabelIndex>,
    /// What each watched object last looked like: only spec, labels, deletion and
    /// existence changes run the mapped objects again (not status writes).
    seen: Mutex<HashMap<ObjectKey, Trigger>>,
    /// The owned children seen, by owner, to collect them when their owner goes.
    children: Mutex<Children>,
}

#[derive(Default)]
struct Children {
    by_owner: HashMap<ObjectKey, HashSet<ObjectKey>>,
    owner_of: HashMap<ObjectKey, ObjectKey>,
}

impl Secondaries {
    pub fn new(info: &ReactorInfo) -> Self {
        let mut owns = Vec::new();
        let mut references = Vec::new();
        let mut selections = Vec::new();
        for watch in &info.watches {
            match watch {
                Watch::Owns { kind } => owns.push(kind.clone()),
                Watch::References { kind, path } => references.push(Reference {
                    kind: kind.clone(),
                    path: path.clone(),
                    index: Mutex::default(),
                }),
                Watch::Selects { kind, path } => selections.push(Selection {
                    kind: kind.clone(),
                    path: path.clone(),
                    last: Mutex::default(),
                }),
            }
        }
        Self {
            component: info.name.clone(),
            primary_kinds: info.kinds.clone(),
            owns,
            references,
            selections,
            labels: Mutex::default(),
            seen: Mutex::default(),
            children: Mutex::default(),
        }
    }

    /// Every kind watched besides the reactor's own, once each.
    pub fn kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self
            .owns
            .iter()
            .cloned()
            .chain(self.references.iter().map(|r| r.kind.clone()))
            .chain(self.selections.iter().map(|s| s.kind.clone()))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// Whether the reactor declared it owns objects of `kind`.
    pub fn owns(&self, kind: &str) -> bool {
        self.owns.iter().any(|k| k == kind)
    }

    /// The owner of `object` if it is one of this reactor's objects.
    pub fn owner_of<'a>(&self, object: &'a Object) -> Option<&'a Owner> {
        let owner = object.meta.owner.as_ref()?;
        (owner.component == self.component && self.primary_kinds.contains(&owner.kind))
            .then_some(owner)
    }

    /// Records `child` as a child of `owner`.
    pub fn adopt(&self, child: &ObjectKey, owner: &ObjectKey) {
        let mut children = self.children.lock();
        if let Some(before) = children.owner_of.insert(child.clone(), owner.clone())
            && &before != owner
            && let Some(set) = children.by_owner.get_mut(&before)
        {
            set.remove(child);
        }
        children
            .by_owner
            .entry(owner.clone())
            .or_default()
            .insert(child.clone());
    }

    /// Forgets `child` (it is gone).
    pub fn disown(&self, child: &ObjectKey) {
        let mut children = self.children.lock();
        if let Some(owner) = children.owner_of.remove(child)
            && let Some(set) = children.by_owner.get_mut(&owner)
        {
            set.remove(child);
            if set.is_empty() {
                children.by_owner.remove(&owner);
            }
        }
    }

    /// The children of `owner` seen so far.
    pub fn children_of(&self, owner: &ObjectKey) -> Vec<ObjectKey> {
        self.children
            .lock()
            .by_owner
            .get(owner)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keeps the indexes in step with a change of one of the reactor's own objects.
    pub fn primary_changed(&self, event: &ReflectorEvent) {
        let object = event.object();
        let key = object.key();
        let gone = matches!(event, ReflectorEvent::Deleted(_));
        for reference in &self.references {
            let mut index = reference.index.lock();
            if gone {
                index.remove(&key);
            } else {
                index.set(&key, path::names_at(object, &reference.path));
            }
        }
        if !self.selections.is_empty() {
            let mut labels = self.labels.lock();
            if gone {
                labels.remove(&key);
            } else {
                labels.set(&key, &object.labels);
            }
        }
    }

    /// Whether a change of a watched object is one that runs objects again: created,
    /// deleted, or its spec, labels or deletion changed (not a status write).
    pub fn relevant(&self, event: &ReflectorEvent) -> bool {
        let key = event.object().key();
        let mut seen = self.seen.lock();
        match event {
            ReflectorEvent::Deleted(_) => {
                seen.remove(&key);
                true
            }
            ReflectorEvent::Applied(object) => {
                let now = Trigger::of(object);
                seen.insert(key, now.clone())
                    .is_none_or(|before| before != now)
            }
        }
    }

    /// The reactor's objects that a change of a watched (referenced or selecting) object
    /// runs again; owned children are mapped by their owner instead.
    pub fn mapped(&self, event: &ReflectorEvent) -> Vec<ObjectKey> {
        let object = event.object();
        let mut keys = Vec::new();
        for reference in self.references.iter().filter(|r| r.kind == object.kind) {
            keys.extend(reference.index.lock().naming(&object.name).cloned());
        }
        for selection in self.selections.iter().filter(|s| s.kind == object.kind) {
            let now = match event {
                ReflectorEvent::Applied(o) => path::selector_at(o, &selection.path),
                ReflectorEvent::Deleted(_) => None,
            };
            let before = {
                let mut last = selection.last.lock();
                match &now {
                    Some(selector) => last.insert(object.name.clone(), selector.clone()),
                    None => last.remove(&object.name),
                }
            };
            let labels = self.labels.lock();
            for selector in before.iter().chain(now.iter()) {
                keys.extend(labels.matching(selector));
            }
        }
        keys.sort();
        keys.dedup();
        keys
    }
}
