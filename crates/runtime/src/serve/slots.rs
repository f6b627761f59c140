//! The components the runtime knows, a [`Slot`] per name.
//!
//! Also the files ignored, and [`ComponentInfo`] as `components` and `/v1/components` show
//! them. A slot holds the version in service and the one it replaced, kept for a rollback; the
//! versions rolled back are kept by name, whether a slot exists yet or not.

use crate::call::instance::Counters;
use crate::serve::rollout_info::{Rejection, RolloutInfo};
use crate::serve::serving::Serving;
use crate::serve::shadow_tally::Shadowing;
use crate::world::World;
use arc_swap::ArcSwapOption;
use parking_lot::{Mutex, RwLock};
use reactor_core::component::{Approval, Waiting};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use reactor_core::component::info::{ComponentInfo, ComponentState};

/// Every component name the runtime knows, and the files it ignores.
#[derive(Default)]
pub(crate) struct Slots {
    slots: RwLock<BTreeMap<String, Arc<Slot>>>,
    pub(crate) ignored: Ignored,
    /// The version rolled back of each component name.
    rejections: Mutex<BTreeMap<String, Rejection>>,
    /// The version an admin approved of each component name (see [`Approval`]).
    approvals: Mutex<BTreeMap<String, Approval>>,
}

impl Slots {
    /// The slot of `name`, created for `world` and `file` if new.
    pub(crate) fn get_or_insert(&self, name: &str, world: World, file: &Path) -> Arc<Slot> {
        self.slots
            .write()
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(Slot::new(name.to_owned(), world, file.to_owned())))
            .clone()
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots.read().get(name).cloned()
    }

    pub(crate) fn remove(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots.write().remove(name)
    }

    /// Every slot, by name.
    pub(crate) fn all(&self) -> Vec<Arc<Slot>> {
        self.slots.read().values().cloned().collect()
    }

    /// The version of `name` rolled back, if one is.
    pub(crate) fn rejection(&self, name: &str) -> Option<Rejection> {
        self.rejections.lock().get(name).cloned()
    }

    /// Every version rolled back, by component name.
    pub(crate) fn rejections(&self) -> BTreeMap<String, Rejection> {
        self.rejections.lock().clone()
    }

    /// Records `rejection` for `name`; false if it was recorded already.
    pub(crate) fn set_rejection(&self, name: &str, rejection: Rejection) -> bool {
        let previous = self
            .rejections
            .lock()
            .insert(name.to_owned(), rejection.clone());
        previous.as_ref() != Some(&rejection)
    }

    /// Forgets the version rolled back of `name`, answering it.
    pub(crate) fn clear_rejection(&self, name: &str) -> Option<Rejection> {
        self.rejections.lock().remove(name)
    }

    /// The approval of `name`, if an admin gave one.
    pub(crate) fn approval(&self, name: &str) -> Option<Approval> {
        self.approvals.lock().get(name).cloned()
    }

    /// Every approval, by component name.
    pub(crate) fn approvals(&self) -> BTreeMap<String, Approval> {
        self.approvals.lock().clone()
    }

    /// Records `approval` for `name` (replacing any); false if it was recorded already.
    pub(crate) fn set_approval(&self, name: &str, approval: Approval) -> bool {
        let previous = self
            .approvals
            .lock()
            .insert(name.to_owned(), approval.clone());
        previous.as_ref() != Some(&approval)
    }

    /// Forgets the approval of `name`; false if there was none.
    pub(crate) fn clear_approval(&self, name: &str) -> bool {
        self.approvals.lock().remove(name).is_some()
    }

    /// The versions some component still needs the wasm of: serving, replaced, in its file,
    /// or the one a rollback returns to.
    pub(crate) fn in_use(&self) -> BTreeSet<String> {
        let mut in_use: BTreeSet<String> = self
            .rejections
            .lock()
            .values()
            .filter_map(|r| r.restore.clone())
            .collect();
        for slot in self.all() {
            let loaded = [slot.current.load_full(), slot.previous.load_full()];
            in_use.extend(
                loaded
                    .into_iter()
                    .flatten()
                    .map(|s| s.loaded.sha256.clone()),
            );
            in_use.extend(slot.file_sha256.lock().clone());
        }
        in_use
    }

    /// One component as the components view shows it.
    pub(crate) fn info(&self, slot: &Slot) -> ComponentInfo {
        let mut info = slot.info();
        let file = slot.file_sha256.lock().clone();
        // Shown while the file is the version rolled back, the one it keeps from serving.
        info.rolled_back = self
            .rejection(&slot.name)
            .filter(|r| file.as_deref() == Some(r.sha256.as_str()))
            .map(|r| r.cell());
        info
    }

    /// The components view: every slot, then the ignored files.
    pub(crate) fn infos(&self) -> Vec<ComponentInfo> {
        let mut infos: Vec<ComponentInfo> = self.all().iter().map(|slot| self.info(slot)).collect();
        infos.extend(self.ignored.infos());
        infos
    }
}

/// The files of the components folders not loaded because of their names: shown in the
/// components view with the reason, and logged once each.
#[derive(Default)]
pub(crate) struct Ignored(Mutex<BTreeMap<PathBuf, (World, String)>>);

impl Ignored {
    /// Records `file` as ignored for `reason`; logs it the first time.
    pub(crate) fn add(&self, file: &Path, world: World, reason: String) {
        let mut files = self.0.lock();
        if files.get(file).is_none_or(|(_, known)| *known != reason) {
            tracing::warn!(file = %file.display(), "not loaded: {reason}");
        }
        files.insert(file.to_owned(), (world, reason));
    }

    pub(crate) fn remove(&self, file: &Path) {
        self.0.lock().remove(file);
    }

    /// The ignored files as the components view shows them.
    pub(crate) fn infos(&self) -> Vec<ComponentInfo> {
        let files = self.0.lock();
        files
            .iter()
            .map(|(file, (world, reason))| ComponentInfo {
                name: file
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                world: *world,
                file: file.clone(),
                sha256: None,
                revision: 0,
                state: ComponentState::Ignored,
                error: Some(reason.clone()),
                serving: false,
                loaded_at: None,
                calls: 0,
                traps: 0,
                described: None,
                rollout: None,
                rolled_back: None,
                declared: false,
                permissions: None,
                waiting: None,
                compiling: None,
                shadow: None,
                usage: None,
            })
            .collect()
    }
}

/// The runtime's record of one component name.
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) world: World,
    pub(crate) file: Mutex<PathBuf>,
    pub(crate) current: ArcSwapOption<Serving>,
    /// The version `current` replaced, kept loaded for a rollback.
    pub(crate) previous: ArcSwapOption<Serving>,
    /// The sha256 of the file last read.
    pub(crate) file_sha256: Mutex<Option<String>>,
    pub(crate) rollout: Mutex<Option<RolloutInfo>>,
    pub(crate) error: Mutex<Option<String>>,
    /// Why the component's source (a registry) could not give its newest version.
    pub(crate) source_error: Mutex<Option<String>>,
    /// A new version held until an admin approves its wider declaration.
    pub(crate) waiting: Mutex<Option<Waiting>>,
    /// The sha256 of the version being compiled, linked and described now.
    pub(crate) compiling: Mutex<Option<String>>,
    /// A new version running as a shadow beside `current`, or the last one dropped.
    pub(crate) shadow: Mutex<Option<Shadowing>>,
    pub(crate) counters: Arc<Counters>,
    /// Serializes loads of this component.
    pub(crate) loading: tokio::sync::Mutex<()>,
}

impl Slot {
    pub(crate) fn new(name: String, world: World, file: PathBuf) -> Self {
        Slot {
            name,
            world,
            file: Mutex::new(file),
            current: ArcSwapOption::empty(),
            previous: ArcSwapOption::empty(),
            file_sha256: Mutex::new(None),
            rollout: Mutex::new(None),
            error: Mutex::new(None),
            source_error: Mutex::new(None),
            waiting: Mutex::new(None),
            compiling: Mutex::new(None),
            shadow: Mutex::new(None),
            counters: Arc::new(Counters::default()),
            loading: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn file(&self) -> PathBuf {
        self.file.lock().clone()
    }

    pub(crate) fn set_error(&self, error: Option<String>) {
        *self.error.lock() = error;
    }

    /// What the slot shows by itself (the components view adds the rollback).
    fn info(&self) -> ComponentInfo {
        let current = self.current.load_full();
        let error = match (self.error.lock().clone(), self.source_error.lock().clone()) {
            (Some(load), Some(source)) => Some(format!("{load}; {source}")),
            (load, source) => load.or(source),
        };
        ComponentInfo {
            name: self.name.clone(),
            world: self.world,
            file: self.file(),
            sha256: current.as_ref().map(|s| s.loaded.sha256.clone()),
            revision: current
                .as_ref()
                .map_or(0, |s| s.loaded.spec.effective.revision),
            state: match (&error, &current) {
                (Some(_), _) => ComponentState::Failed,
                (None, Some(_)) => ComponentState::Ready,
                (None, None) => ComponentState::Loading,
            },
            error,
            serving: current.is_some(),
            loaded_at: current
                .as_ref()
                .map(|s| humantime::format_rfc3339_seconds(s.loaded.loaded_at).to_string()),
            calls: self.counters.calls.load(Ordering::Relaxed),
            traps: self.counters.traps.load(Ordering::Relaxed),
            described: current.as_ref().map(|s| s.described.clone()),
            rollout: self.rollout.lock().clone(),
            rolled_back: None,
            declared: current.as_ref().is_some_and(|s| s.declared.is_some()),
            permissions: current.as_ref().and_then(|s| s.declared.clone()),
            waiting: self.waiting.lock().clone(),
            compiling: self.compiling.lock().clone(),
            shadow: self.shadow.lock().as_ref().map(Shadowing::info),
            usage: current.as_ref().map(|s| s.loaded.totals.snapshot()),
        }
    }
}
